package barrel

import (
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

// BenchmarkBuild indexes synthetic pages (parse, compress, forward
// barrels, sorter, PageRank, commit); one op is one page.
func BenchmarkBuild(b *testing.B) {
	site := synth.New(max(b.N, 100), 50000, 1)
	pages := make([][]byte, site.N)
	var size int64
	for i := range pages {
		pages[i] = site.Page(i)
		size += int64(len(pages[i]))
	}
	b.SetBytes(size / int64(site.N))
	b.ResetTimer()
	bl, err := NewBuilder(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer bl.Close()
	for i := range b.N {
		if err := bl.Add(site.URL(i), pages[i]); err != nil {
			b.Fatal(err)
		}
	}
	if err := bl.Commit(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(bl.Stats.AnchorTime.Nanoseconds())/float64(b.N), "anchor-ns/op")
}

// BenchmarkFirstBuildAnchors builds an index in one batch with its commit
// reading the anchors mapped (as a first build does) and by one pread a
// record (as a batch added to a large index does); one op is one page.
func BenchmarkFirstBuildAnchors(b *testing.B) {
	for _, c := range []struct {
		name   string
		mapped bool
	}{{"mapped", true}, {"pread", false}} {
		b.Run(c.name, func(b *testing.B) {
			defer func(f func(int64, int64) bool) { mapAnchors = f }(mapAnchors)
			mapAnchors = func(int64, int64) bool { return c.mapped }
			BenchmarkBuild(b)
		})
	}
}
