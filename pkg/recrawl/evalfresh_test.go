package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// evalGeneric is evalAll's loop without the Freshness fast path: every
// page through page.
func (ev *evaluator) evalGeneric(mu float64) {
	ev.passes++
	ev.lastMu = mu
	clear(ev.sum)
	clear(ev.slope)
	for j, h := range ev.p.Host {
		r, sl := ev.page(j, mu)
		ev.sum[h] += r
		ev.slope[h] += sl
	}
}

// evalFresh (evalAll's in-line loop for Freshness) gives the same bits as
// page for every page: rates, slopes and warm starts, over sequences of
// thresholds far apart and close together, rough and exact, from cold and
// warm starts, with pages never worth crawling, tiny and huge ratios.
func TestEvalFreshSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 40; trial++ {
		n := 1 + rng.IntN(3000)
		p := randomProblem(rng, n, 1+rng.IntN(50), Freshness)
		for j := range p.W {
			switch rng.IntN(20) {
			case 0:
				p.W[j] *= 1e-9
			case 1:
				p.Delta[j] *= 1e-7
			case 2:
				p.W[j] = p.Delta[j] // w/delta 1: on the edge at mu = 1
			}
		}
		fast, slow := newEvaluator(p), newEvaluator(p)
		mu := math.Exp(rng.NormFloat64())
		for pass := 0; pass < 12; pass++ {
			rough := rng.IntN(3) == 0
			fast.rough, slow.rough = rough, rough
			fast.evalAll(mu)
			slow.evalGeneric(mu)
			for i := range fast.sum {
				if math.Float64bits(fast.sum[i]) != math.Float64bits(slow.sum[i]) ||
					math.Float64bits(fast.slope[i]) != math.Float64bits(slow.slope[i]) {
					t.Fatalf("trial %d pass %d mu %v host %d: sum %v slope %v, page by page %v %v",
						trial, pass, mu, i, fast.sum[i], fast.slope[i], slow.sum[i], slow.slope[i])
				}
			}
			for j := range fast.x {
				if math.Float64bits(fast.x[j]) != math.Float64bits(slow.x[j]) ||
					math.Float64bits(fast.ex[j]) != math.Float64bits(slow.ex[j]) {
					t.Fatalf("trial %d pass %d: page %d warm start %v (e^-x %v), page by page %v (%v)",
						trial, pass, j, fast.x[j], fast.ex[j], slow.x[j], slow.ex[j])
				}
				// The e^-x carried from pass to pass stays e^-x, to the
				// rounding of x's steps (an ulp of x a pass), or is 0 (not
				// known yet) after a rough cold start.
				if x := fast.x[j]; x > 0 && x < 700 && fast.ex[j] != 0 {
					if d := math.Abs(fast.ex[j]/math.Exp(-x) - 1); d > (1+x)*1e-14 {
						t.Fatalf("trial %d pass %d: page %d carries e^-x %v for x %v (exp: %v, off by %.1e)",
							trial, pass, j, fast.ex[j], x, math.Exp(-x), d)
					}
				}
			}
			switch rng.IntN(4) {
			case 0:
				mu *= math.Exp(rng.NormFloat64() * 2) // far
			case 1:
				mu *= 1 + rng.NormFloat64()*1e-2
			default:
				mu *= 1 + rng.NormFloat64()*1e-6 // near the root
			}
		}
	}
}

// expStep's series agrees with exp over the steps it takes, and exp
// takes the longer ones.
func TestExpStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 100000; i++ {
		x := rng.ExpFloat64() * 5
		dx := (rng.Float64()*2 - 1) * math.Pow(10, -rng.Float64()*8) * 0.03
		got, want := expStep(math.Exp(-x), dx, x+dx), math.Exp(-(x + dx))
		// Within a few ulps, and the ulp of x+dx that exp's argument
		// loses to rounding.
		if d := math.Abs(got/want - 1); d > 4e-15+(x+dx)*2.3e-16 {
			t.Fatalf("expStep(e^-%v, %v) = %v, exp gives %v (off by %.1e)", x, dx, got, want, d)
		}
	}
}
