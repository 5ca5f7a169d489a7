package recrawl

import (
	"math"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. On a shared machine the
// wall clock counts other people's work; run with -cpu 1 and read the
// cpu-s metric as the single-core cost.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
}

// benchPages is the size of the target: 10,000,000 pages on
// 100,000 hosts, a third of them without a limit.
var benchPages = 10_000_000

const benchHosts = 100_000

func BenchmarkSolve10M(b *testing.B) {
	p := randomProblem(rand.New(rand.NewPCG(7, 7)), benchPages, benchHosts, Freshness)
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		s, err := Solve(p, SolveOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.Passes), "passes")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(benchPages), "ns/page")
}

func benchPagesSet() *Pages {
	rng := rand.New(rand.NewPCG(8, 8))
	p := randomProblem(rng, benchPages, benchHosts, Freshness)
	ps := &Pages{W: p.W, Delta: p.Delta, Host: p.Host, HostRate: p.HostRate,
		HostNames: make([]string, benchHosts), Tau: make([]float64, benchPages)}
	for j := range ps.Tau {
		ps.Tau[j] = rng.Float64() * 10
		if j%50 == 0 {
			ps.Tau[j] = math.Inf(1) // never fetched
		}
	}
	return ps
}

func BenchmarkRank10M(b *testing.B) {
	ps := benchPagesSet()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		res, err := Rank(ps, RankOptions{Rate: float64(benchPages) * 0.4, Slot: 1.0 / 24})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(res.Selected)), "selected")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(benchPages), "ns/page")
}

// BenchmarkSortPeer10M is the yardstick the figures in docs/recrawl.md are
// compared with: sorting 10M float64 values with slices.Sort.
func BenchmarkSortPeer10M(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	src := make([]float64, benchPages)
	for i := range src {
		src[i] = rng.Float64()
	}
	v := make([]float64, benchPages)
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		copy(v, src)
		slices.Sort(v)
	}
}
