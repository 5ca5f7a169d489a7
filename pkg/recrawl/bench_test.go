package recrawl

import (
	"math/rand/v2"
	"testing"
)

// benchPages is the size of the target: 10,000,000 pages.
var benchPages = 10_000_000

func BenchmarkSolve10M(b *testing.B) {
	p := randomProblem(rand.New(rand.NewPCG(7, 7)), benchPages, 100_000, Freshness)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Solve(p, SolveOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.Passes), "passes")
	}
}
