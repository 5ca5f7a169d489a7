package ireval

import (
	"math"
	"slices"

	"github.com/sekitei/crawlkit/pkg/barrel"
)

// PairwiseOptions set Pairwise's objective.
type PairwiseOptions struct {
	// Lambda weighs each pair by how much the reciprocal rank of the
	// query's first relevant candidate would change if the two swapped
	// (LambdaRank's weights for MRR: Burges, "From RankNet to
	// LambdaRank to LambdaMART: an overview", 2010), recomputed from the
	// current weights at every step; without it every pair of a query
	// weighs the same (RankNet's pairwise logistic loss).
	Lambda bool
	// Softmax replaces the pairs by the top-one softmax cross-entropy
	// (ListNet's, Cao et al., "Learning to rank: from pairwise approach to
	// listwise approach", 2007): −log of the share of exp(score) the
	// relevant candidates hold among the candidates of the highest tier
	// holding one, a smooth stand-in for the reciprocal rank.
	Softmax bool
	// Derived learns the derived features' weights too.
	Derived bool
	// L2 is the penalty on the squared weights (features scaled to unit
	// spread): the logistic loss falls as the weights grow, and the
	// penalty keeps them finite.
	L2 float64
	// Steps of gradient descent (Adam).
	Steps int
}

// nAll counts the features and derived features.
const nAll = barrel.NumFeatures + barrel.NumDerived

// pair is a relevant candidate r that should come before a candidate n
// of the same coordination tier.
type pair struct{ r, n int32 }

type pairQuery struct {
	c     *Candidates
	rel   []bool
	pairs []pair
	w     float64         // the query's weight: its set's share over the pairs
	x     [][nAll]float64 // the candidates' features and derived features, scaled
}

// Pairwise learns a model's feature weights by gradient descent on a
// pairwise logistic loss (RankNet with a linear scorer: Burges et al.,
// "Learning to rank using gradient descent", 2005): for each query and
// each relevant candidate r and irrelevant candidate n of the same
// coordination tier (the tier is not the model's to change), the loss
// log(1 + exp(−(s_r − s_n))), each query weighing the same within its
// set and each set the same, as in Objective. The prior's weight stays
// start's: the scorer is linear in the features times (1 + prior·p).
// Weights stay at 0 or above (projected), so the search's score bounds
// hold. Deterministic: the result depends only on the candidates, start
// and opts.
func Pairwise(sets [][]Candidates, start barrel.Model, opts PairwiseOptions) barrel.Model {
	const nf = nAll
	// raw is candidate j's features, then its derived features if
	// they are learnt (else 0: their weights stay start's).
	raw := func(c *Candidates, j int) (r [nf]float64) {
		copy(r[:], c.F[j][:])
		if opts.Derived {
			d := barrel.Derived(&c.F[j])
			copy(r[barrel.NumFeatures:], d[:])
		}
		return r
	}
	startW := func(k int) float64 {
		if k < barrel.NumFeatures {
			return start.W[k]
		}
		return start.D[k-barrel.NumFeatures]
	}
	var qs []pairQuery
	for _, cs := range sets {
		first := len(qs)
		for i := range cs {
			c := &cs[i]
			q := pairQuery{c: c, rel: make([]bool, len(c.Keys))}
			for j, k := range c.Keys {
				q.rel[j] = slices.Contains(c.Relevant, k)
			}
			for a := range c.Keys {
				if !q.rel[a] {
					continue
				}
				for b := range c.Keys {
					if !q.rel[b] && c.Matched[a] == c.Matched[b] {
						q.pairs = append(q.pairs, pair{int32(a), int32(b)})
					}
				}
			}
			if len(q.pairs) > 0 {
				qs = append(qs, q)
			}
		}
		for i := first; i < len(qs); i++ {
			qs[i].w = 1 / float64(len(qs)-first) / float64(len(sets))
		}
	}
	// The features times the prior's factor, scaled to unit root mean
	// square over the candidates so that one step size suits them all.
	var scale [nf]float64
	n := 0
	for _, q := range qs {
		for j := range q.c.Keys {
			g := 1 + start.Prior*q.c.Prior[j]
			r := raw(q.c, j)
			for k := range nf {
				x := r[k] * g
				scale[k] += x * x
			}
			n++
		}
	}
	for k := range scale {
		scale[k] = math.Sqrt(scale[k] / float64(max(1, n)))
	}
	for i := range qs {
		c := qs[i].c
		qs[i].x = make([][nf]float64, len(c.Keys))
		for j := range c.Keys {
			r := raw(c, j)
			for k := range nf {
				if scale[k] > 0 {
					qs[i].x[j][k] = r[k] * (1 + start.Prior*c.Prior[j]) / scale[k]
				}
			}
		}
	}
	// Start from start's weights, scaled so that their sum is 1 in the
	// unit-spread space.
	var w [nf]float64
	sum := 0.0
	for k := range nf {
		w[k] = startW(k) * scale[k]
		sum += w[k]
	}
	if sum > 0 {
		for k := range w {
			w[k] /= sum
		}
	}
	steps := opts.Steps
	if steps <= 0 {
		steps = 300
	}
	const lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
	var mom, vel [nf]float64
	scores := []float64{}
	for t := 1; t <= steps; t++ {
		var grad [nf]float64
		for k := range nf {
			grad[k] = 2 * opts.L2 * w[k]
		}
		for _, q := range qs {
			c := q.c
			scores = scores[:0]
			for j := range c.Keys {
				s := 0.0
				for k := range nf {
					s += w[k] * q.x[j][k]
				}
				scores = append(scores, s)
			}
			if opts.Softmax {
				softmaxGrad(&q, scores, &grad)
				continue
			}
			var lw []float64
			if opts.Lambda {
				lw = lambdaWeights(q, scores)
			}
			tot := 0.0
			for i := range q.pairs {
				pw := 1.0
				if lw != nil {
					pw = lw[i]
				}
				tot += pw
			}
			if tot == 0 {
				continue
			}
			for i, p := range q.pairs {
				pw := 1.0
				if lw != nil {
					pw = lw[i]
				}
				if pw == 0 {
					continue
				}
				d := scores[p.r] - scores[p.n]
				// d/dd log(1+exp(-d)) = -1/(1+exp(d))
				g := -pw / tot * q.w / (1 + math.Exp(d))
				for k := range nf {
					grad[k] += g * (q.x[p.r][k] - q.x[p.n][k])
				}
			}
		}
		for k := range nf {
			mom[k] = b1*mom[k] + (1-b1)*grad[k]
			vel[k] = b2*vel[k] + (1-b2)*grad[k]*grad[k]
			mh := mom[k] / (1 - math.Pow(b1, float64(t)))
			vh := vel[k] / (1 - math.Pow(b2, float64(t)))
			w[k] = max(0, w[k]-lr*mh/(math.Sqrt(vh)+eps))
		}
	}
	m := start
	for k := range nf {
		v := 0.0
		if scale[k] > 0 {
			v = w[k] / scale[k]
		} else if k >= barrel.NumFeatures && !opts.Derived {
			continue // not learnt: start's
		}
		if k < barrel.NumFeatures {
			m.W[k] = v
		} else {
			m.D[k-barrel.NumFeatures] = v
		}
	}
	return m
}

// lambdaWeights are the pairs' weights for MRR: the change of the
// query's reciprocal rank (at 10, within the candidates) if the pair's
// two candidates swapped places in the order of scores.
func lambdaWeights(q pairQuery, scores []float64) []float64 {
	c := q.c
	rank := make([]int, len(c.Keys)) // 1-based rank in the searcher's order
	order := make([]int, len(c.Keys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case c.Matched[a] != c.Matched[b]:
			return c.Matched[b] - c.Matched[a]
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	firstRel := 0
	for i, j := range order {
		rank[j] = i + 1
		if firstRel == 0 && q.rel[j] {
			firstRel = i + 1
		}
	}
	rr := func(r int) float64 {
		if r > 10 {
			return 0
		}
		return 1 / float64(r)
	}
	out := make([]float64, len(q.pairs))
	for i, p := range q.pairs {
		rr0 := rr(firstRel)
		// After the swap the first relevant rank is the smaller of the
		// other relevant ranks and the swapped relevant's new rank.
		nr := rank[p.n]
		f := firstRel
		if rank[p.r] == firstRel {
			// r was the first relevant: it moves to n's place.
			f = nr
			if nr > firstRel { // a later relevant may now lead
				for j := range c.Keys {
					if q.rel[j] && j != int(p.r) && rank[j] < f {
						f = rank[j]
					}
				}
			}
		} else if nr < firstRel {
			f = nr
		}
		out[i] = math.Abs(rr(f) - rr0)
	}
	return out
}

// softmaxGrad adds to grad the gradient of q's top-one softmax
// cross-entropy at scores.
func softmaxGrad(q *pairQuery, scores []float64, grad *[nAll]float64) {
	c := q.c
	tier, found := 0, false
	for j := range c.Keys {
		if q.rel[j] && (!found || c.Matched[j] > tier) {
			tier, found = c.Matched[j], true
		}
	}
	if !found {
		return
	}
	top := math.Inf(-1)
	for j := range c.Keys {
		if c.Matched[j] == tier {
			top = max(top, scores[j])
		}
	}
	all, rel := 0.0, 0.0
	for j := range c.Keys {
		if c.Matched[j] == tier {
			e := math.Exp(scores[j] - top)
			all += e
			if q.rel[j] {
				rel += e
			}
		}
	}
	for j := range c.Keys {
		if c.Matched[j] != tier {
			continue
		}
		e := math.Exp(scores[j] - top)
		g := e / all
		if q.rel[j] {
			g -= e / rel
		}
		g *= q.w
		for k := range grad {
			grad[k] += g * q.x[j][k]
		}
	}
}
