package opic_test

import (
	"runtime"
	"sync"
	"syscall"
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
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var cpu time.Duration
		for b.Loop() {
			cpu0 := threadCPU()
			bigPR = ref.PageRank(s, 0.85, 1e-8)
			cpu += threadCPU() - cpu0
		}
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s")
	})
	for _, p := range []opic.Policy{opic.Greedy, opic.Random, opic.Cyclic} {
		b.Run(p.String(), func(b *testing.B) {
			s := bigState(b)
			n := uint64(s.Len())
			var elapsed, cpu time.Duration
			var moved uint64
			// The run is single-threaded: pin it to its thread so that the
			// thread's CPU time, unlike the wall clock, leaves out the time
			// other processes hold the core on a shared machine.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for b.Loop() {
				s.Reset()
				start, cpu0 := time.Now(), threadCPU()
				s.Run(p, opic.Stop{Steps: 10 * n}, 1)
				elapsed += time.Since(start)
				cpu += threadCPU() - cpu0
				moved += s.Transfers()
			}
			b.ReportMetric(float64(bigBytes)/float64(s.Edges()), "bytes/edge")
			b.ReportMetric(float64(s.Edges()), "links")
			b.ReportMetric(float64(moved)/elapsed.Seconds()/1e6, "Mtransfers/s")
			b.ReportMetric(float64(moved)/cpu.Seconds()/1e6, "Mtransfers/cpu-s")
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/10visits")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/10visits")
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

// threadCPU returns the CPU time of the calling OS thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const rusageThread = 1 // RUSAGE_THREAD (Linux)
