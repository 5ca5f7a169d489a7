package opic_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/opic"
	"github.com/sekitei/crawlkit/pkg/opic/internal/ref"
)

// The benchmark graph: 1,000,000 pages, 10,000,000 power-law links.
var (
	bigOnce  sync.Once
	big      *opic.State
	bigBytes uint64
	bigPR    []float64
)

func bigState(b *testing.B) *opic.State {
	bigOnce.Do(func() {
		before := heapInUse()
		big = powerLawState(b, 1_000_000, 10_000_000, 42)
		bigBytes = heapInUse() - before
	})
	return big
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkOPIC1M runs gonum's PageRankSparse, then 10 visits per page
// with each policy, on the same graph in the same process:
//
//	go test ./pkg/opic -run '^$' -bench OPIC1M -benchtime 1x
//
// It reports the state's heap bytes per link (names, links, cash, history,
// visit times), cash transfers per second, the seconds for 10 visits per
// page, and the L1 distance and top-100 overlap with gonum's PageRank.
func BenchmarkOPIC1M(b *testing.B) {
	b.Run("gonum", func(b *testing.B) {
		s := bigState(b)
		for b.Loop() {
			bigPR = ref.PageRank(s, 0.85, 1e-8)
		}
	})
	for _, p := range []opic.Policy{opic.Greedy, opic.Random, opic.Cyclic} {
		b.Run(p.String(), func(b *testing.B) {
			s := bigState(b)
			n := uint64(s.Len())
			var elapsed time.Duration
			var moved uint64
			for b.Loop() {
				s.Reset()
				start := time.Now()
				s.Run(p, opic.Stop{Steps: 10 * n}, 1)
				elapsed += time.Since(start)
				moved += s.Transfers()
			}
			b.ReportMetric(float64(bigBytes)/float64(s.Edges()), "bytes/edge")
			b.ReportMetric(float64(moved)/elapsed.Seconds()/1e6, "Mtransfers/s")
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/10visits")
			if bigPR != nil {
				imp := s.Importance()
				b.ReportMetric(ref.L1(imp, bigPR), "L1")
				b.ReportMetric(float64(ref.Overlap(imp, bigPR, 100)), "top100")
			}
		})
	}
}

// BenchmarkOPIC100k is a quick run of the same on 100,000 pages and
// 1,000,000 links.
func BenchmarkOPIC100k(b *testing.B) {
	s := powerLawState(b, 100_000, 1_000_000, 42)
	for _, p := range []opic.Policy{opic.Greedy, opic.Random, opic.Cyclic} {
		b.Run(p.String(), func(b *testing.B) {
			var moved uint64
			for b.Loop() {
				s.Reset()
				s.Run(p, opic.Stop{Steps: 10 * uint64(s.Len())}, 1)
				moved += s.Transfers()
			}
			b.ReportMetric(float64(moved)/b.Elapsed().Seconds()/1e6, "Mtransfers/s")
		})
	}
}
