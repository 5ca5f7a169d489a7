package sekitei

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// BenchmarkSegments20k cuts 20,000 URLs of one site into segments (the
// issue's target: under a second).
func BenchmarkSegments20k(b *testing.B) {
	good, general := siteURLs(b, "lenta")
	ex := examples(good[:1000], general[:19000])
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := Build("lenta.ru", ex, Options{SiteQuota: 10000, MinQuota: 100}); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	}
}

// BenchmarkFilter measures the online decisions per second.
func BenchmarkFilter(b *testing.B) {
	good, general := siteURLs(b, "wikipedia")
	m, _, err := Train(good[:500], general[:500], TrainOptions{Quota: 10000, Stream: 21000})
	if err != nil {
		b.Fatal(err)
	}
	stream := append(append([]string(nil), good[500:]...), general[500:]...)
	f := NewFilter(m, 1<<62, 1<<62)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := f.Decide(stream[i%len(stream)]); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "urls/cpu-s")
	}
}

// SyntheticSite returns n distinct URLs of one host in a dozen layouts
// (dated news, articles with print versions, tags, paged listings, files
// with extensions, search queries), 5% of them marked good.
func syntheticSite(n int, seed uint64) []Example {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := []string{"putin", "oil", "match", "storm", "bank", "film", "vote", "mars", "gas", "art", "tax", "war"}
	out := make([]Example, n)
	for i := range out {
		w := words[rng.IntN(len(words))]
		y, mo, d := 2000+rng.IntN(15), 1+rng.IntN(12), 1+rng.IntN(28)
		var u string
		switch k := rng.IntN(10); k {
		case 0, 1, 2:
			u = fmt.Sprintf("http://big.example/news/%d/%02d/%02d/%s%d/", y, mo, d, w, i)
		case 3:
			u = fmt.Sprintf("http://big.example/articles/%d/%02d/%02d/%s%d/_Printed.htm", y, mo, d, w, i)
		case 4:
			u = fmt.Sprintf("http://big.example/tags/%s/page%d", w, i)
		case 5:
			u = fmt.Sprintf("http://big.example/search?q=%s&page=%d", w, i)
		case 6:
			u = fmt.Sprintf("http://big.example/wiki/File:%s_%d.jpg", w, i)
		case 7:
			u = fmt.Sprintf("http://big.example/wiki/Category:%s_%d", w, i)
		case 8:
			u = fmt.Sprintf("http://big.example/%s/%d/%02d/%02d/%s%d/", words[rng.IntN(4)], y, mo, d, w, i)
		default:
			u = fmt.Sprintf("http://big.example/user/%d/comments?sort=new&id=%d", rng.IntN(1000), i)
		}
		out[i] = Example{URL: u, Good: rng.IntN(20) == 0}
	}
	return out
}

// BenchmarkSegments1M cuts 1,000,000 URLs of one host into segments (built
// from a sample, every URL assigned exactly) and reports the heap in use.
// The target: under 60 s and 2 GB. Run with -benchtime=1x.
func BenchmarkSegments1M(b *testing.B) {
	ex := syntheticSite(1_000_000, 1)
	runtime.GC()
	b.ResetTimer()
	var peak uint64
	done := make(chan struct{})
	go func() { // sample the heap while building
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	for i := 0; i < b.N; i++ {
		s, err := Build("big.example", ex, Options{SiteQuota: 10000, MinQuota: 100})
		if err != nil {
			b.Fatal(err)
		}
		total := 0
		for _, seg := range s.Segments {
			total += seg.URLs
		}
		if total != len(ex) {
			b.Fatalf("assigned %d of %d URLs", total, len(ex))
		}
	}
	close(done)
	b.ReportMetric(float64(peak)/(1<<20), "heapMB")
}
