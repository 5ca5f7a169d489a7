package barrel

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

var benchIndex = flag.String("barrel.index", "", "directory of the synthetic index for BenchmarkSearch (built there if missing; default a temporary one)")

// BenchmarkSearch times queries (ranking, no snippets) over an index of
// -barrel.docs synthetic pages; one op is one query.
func BenchmarkSearch(b *testing.B) {
	site := synth.New(*benchDocs, 50000, 1)
	dir := *benchIndex
	if dir == "" {
		dir = b.TempDir()
	}
	if _, err := os.Stat(filepath.Join(dir, manifestName)); err != nil {
		bl, err := NewBuilder(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for i := range site.N {
			if err := bl.Add(site.URL(i), site.Page(i)); err != nil {
				b.Fatal(err)
			}
		}
		if err := bl.Commit(); err != nil {
			b.Fatal(err)
		}
		bl.Close()
	}
	idx, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	queries := site.Queries(2000)
	for _, q := range queries { // map and check the barrels once
		idx.Search(q, SearchOptions{NoSnippets: true})
	}
	lat := make([]time.Duration, b.N)
	cpu := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		var err error
		lat[i], cpu[i] = timeQuery(func() { _, err = idx.Search(queries[i%len(queries)], SearchOptions{NoSnippets: true}) })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(percentile(cpu, 0.5).Microseconds()), "cpu-p50-µs")
	b.ReportMetric(float64(percentile(cpu, 0.99).Microseconds()), "cpu-p99-µs")
	if testing.Verbose() {
		order := make([]int, len(lat))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(x, y int) int { return int(lat[y] - lat[x]) })
		for _, i := range order[:min(10, len(order))] {
			r, _ := idx.Search(queries[i%len(queries)], SearchOptions{NoSnippets: true})
			b.Logf("%v %q matches %d in %s", lat[i], queries[i%len(queries)], r.Matches, r.Barrels)
		}
	}
}
