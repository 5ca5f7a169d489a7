package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
)

func simulateObs(rng *rand.Rand, rate float64, n int, gap func() float64) Observations {
	var o Observations
	for i := 0; i < n; i++ {
		g := gap()
		o.Gaps = append(o.Gaps, g)
		o.Changed = append(o.Changed, rng.Float64() < -math.Expm1(-rate*g))
	}
	return o
}

func TestEstimateRegularCGM(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// A page changing twice a day fetched daily: the naive X/n saturates
	// near 0.86 a day, the Cho-Garcia-Molina estimator recovers 2.
	sum, naive := 0.0, 0.0
	const pages = 400
	for p := 0; p < pages; p++ {
		o := simulateObs(rng, 2, 100, func() float64 { return 1 })
		r, m := Estimate(o, Prior{Rate: 0.5, Days: 1})
		if m != MethodCGM {
			t.Fatalf("method %s, want cgm", m)
		}
		sum += r
		x := 0
		for _, c := range o.Changed {
			if c {
				x++
			}
		}
		naive += float64(x) / 100
	}
	if mean := sum / pages; math.Abs(mean-2) > 0.1 {
		t.Errorf("CGM mean estimate %v, want 2 +- 0.1", mean)
	}
	if mean := naive / pages; mean > 0.9 {
		t.Errorf("naive estimate %v should saturate below 0.9", mean)
	}
}

func TestEstimateIrregularMLE(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sum := 0.0
	const pages = 300
	for p := 0; p < pages; p++ {
		o := simulateObs(rng, 0.3, 80, func() float64 { return 0.2 + rng.ExpFloat64()*3 })
		r, m := Estimate(o, Prior{Rate: 1, Days: 1})
		if m != MethodMLE {
			t.Fatalf("method %s, want mle", m)
		}
		sum += r
	}
	if mean := sum / pages; math.Abs(mean-0.3)/0.3 > 0.05 {
		t.Errorf("MLE mean estimate %v, want 0.3 within 5%%", mean)
	}
}

func TestEstimatePrior(t *testing.T) {
	prior := Prior{Rate: 0.1, Days: 14}
	// No history: the prior rate.
	if r, m := Estimate(Observations{}, prior); r != 0.1 || m != MethodPrior {
		t.Errorf("no history: %v %s", r, m)
	}
	// Two fetches a day apart with a change: pulled up from the prior but
	// not to infinity (the MLE of a single change is unbounded).
	r, m := Estimate(Observations{Gaps: []float64{1}, Changed: []bool{true}}, prior)
	if m != MethodPrior || !(r > 0.1 && r < 2) {
		t.Errorf("one changed interval: %v %s", r, m)
	}
	// Many fetches, never a change: the rate falls below the prior but
	// stays positive, so that the page is still crawled now and then.
	r, m = Estimate(Observations{N: 30, X: 0, Interval: 1}, prior)
	if m != MethodPrior || !(r > 0 && r < 0.05) {
		t.Errorf("30 unchanged days: %v %s", r, m)
	}
	// Counts with a regular interval use CGM.
	if r, m := Estimate(Observations{N: 10, X: 5, Interval: 2}, prior); m != MethodCGM ||
		math.Abs(r-(-math.Log(5.5/10.5)/2)) > 1e-12 {
		t.Errorf("counts: %v %s", r, m)
	}
}
