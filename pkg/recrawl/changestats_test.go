package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Folding intervals one by one into ChangeStats gives the estimate Estimate
// makes from the whole history, for regular and irregular crawls, with and
// without enough history.
func TestChangeStatsMatchEstimate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	prior := Prior{Rate: 0.2, Days: 7, MinHistory: 5}
	methods := map[string]int{}
	for trial := 0; trial < 2000; trial++ {
		rate := math.Exp(rng.Float64()*6 - 3)
		n := rng.IntN(60)
		regular := trial%3 == 0
		var o Observations
		var s ChangeStats
		for i := 0; i < n; i++ {
			g := 1.0 / 24
			if !regular {
				g = math.Exp(rng.Float64()*5 - 3)
			}
			ch := rng.Float64() < -math.Expm1(-rate*g)
			o.Gaps = append(o.Gaps, g)
			o.Changed = append(o.Changed, ch)
			s.Add(g, ch)
		}
		want, wm := Estimate(o, prior)
		got, gm := EstimateStats(&s, prior)
		methods[wm]++
		if gm != wm || math.Abs(got-want) > 1e-3*want {
			t.Fatalf("trial %d (%d intervals): stats %v (%s), history %v (%s)", trial, n, got, gm, want, wm)
		}
	}
	for _, m := range []string{MethodCGM, MethodMLE, MethodPrior} {
		if methods[m] == 0 {
			t.Errorf("no trial used %s", m)
		}
	}
}
