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
				if math.Float64bits(fast.x[j]) != math.Float64bits(slow.x[j]) {
					t.Fatalf("trial %d pass %d: page %d warm start %v, page by page %v", trial, pass, j, fast.x[j], slow.x[j])
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
