package urlfeat

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkExtract measures per-URL feature extraction over the bundled
// general files (40,000 real URLs of lenta.ru and ru.wikipedia.org).
// Run: go test ./pkg/urlfeat -run '^$' -bench Extract -cpu 1
func BenchmarkExtract(b *testing.B) {
	urls := bundledURLs(b)
	var e Extractor
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		if _, err := e.Extract(urls[n]); err != nil {
			b.Fatal(err)
		}
		n++
		if n == len(urls) {
			n = 0
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// BenchmarkCount adds the features of each URL to a Counter, as
// `urlfeat count` does.
func BenchmarkCount(b *testing.B) {
	urls := bundledURLs(b)
	var e Extractor
	c := NewCounter()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, _ := e.Extract(urls[i%len(urls)])
		c.Add(f)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// BenchmarkSample is one homework call: read both files, draw 1000+1000,
// count, threshold.
func BenchmarkSample(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var files []*LineFile
		for _, name := range []string{"examined", "general"} {
			lf, err := ReadLineFile("../../testdata/sekitei/urls.wikipedia." + name)
			if err != nil {
				b.Fatal(err)
			}
			files = append(files, lf)
		}
		c, n := CountSample(files, 1000, rand.New(rand.NewPCG(uint64(i), 1)), nil)
		if len(c.AboveAlpha(0.1, int64(n))) == 0 {
			b.Fatal("no features")
		}
	}
}
