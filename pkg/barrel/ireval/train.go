package ireval

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/sekitei/crawlkit/pkg/barrel"
)

// Candidates are the pages one judged query retrieves, with what a
// model ranks them by.
type Candidates struct {
	Relevant []string
	Keys     []string
	Matched  []int
	Prior    []float64
	F        [][barrel.NumFeatures]float64
}

// TrainDepth is how many results of each query the training re-ranks:
// the searcher's re-ranking depth, what a model orders at query time.
const TrainDepth = barrel.RerankDepth

// Collect searches each query (its words only, as the judged sets are
// plain text) and keeps the first TrainDepth results with their features.
func Collect(idx *barrel.Index, qs []Query, key func(string) string) ([]Candidates, error) {
	var out []Candidates
	for _, q := range qs {
		r, err := idx.Search(q.Text, barrel.SearchOptions{N: TrainDepth, NoSnippets: true, Literal: true, Features: true})
		if err != nil {
			return nil, fmt.Errorf("%q: %w", q.Text, err)
		}
		c := Candidates{Relevant: q.Relevant}
		for _, res := range r.Results {
			c.Keys = append(c.Keys, key(res.URL))
			c.Matched = append(c.Matched, res.Matched)
			c.Prior = append(c.Prior, res.Prior)
			c.F = append(c.F, res.Features)
		}
		out = append(out, c)
	}
	return out, nil
}

// MRR is the mean reciprocal rank at 10 of the candidates ordered by m
// (coordination first, as the searcher orders them, ties in the search's
// order). It finds each query's first relevant candidate in that order
// and counts the candidates before it, without sorting: the same
// figure as sorting and judging the first 10, in one pass.
func MRR(cs []Candidates, m *barrel.Model) float64 {
	if len(cs) == 0 {
		return 0
	}
	sum := 0.0
	for _, c := range cs {
		// before reports whether candidate a comes before candidate b.
		before := func(a, b int, sa, sb float64) bool {
			if c.Matched[a] != c.Matched[b] {
				return c.Matched[a] > c.Matched[b]
			}
			if sa != sb {
				return sa > sb
			}
			return a < b
		}
		first, firstScore := -1, 0.0
		for i := range c.Keys {
			if !slices.Contains(c.Relevant, c.Keys[i]) {
				continue
			}
			s := m.Score(&c.F[i], c.Prior[i])
			if first < 0 || before(i, first, s, firstScore) {
				first, firstScore = i, s
			}
		}
		if first < 0 {
			continue
		}
		rank := 1
		for i := range c.Keys {
			if i != first && before(i, first, m.Score(&c.F[i], c.Prior[i]), firstScore) {
				if rank++; rank > 10 {
					break
				}
			}
		}
		if rank <= 10 {
			sum += 1 / float64(rank)
		}
	}
	return sum / float64(len(cs))
}

// Objective is the mean over the sets of their MRR@10: each set weighs
// the same whatever its size.
func Objective(sets [][]Candidates, m *barrel.Model) float64 {
	sum := 0.0
	for _, cs := range sets {
		sum += MRR(cs, m)
	}
	return sum / float64(max(1, len(sets)))
}

// KnownItemQueries are the known-item queries of idx (each page's title
// and short queries, barrel.KnownItems) as judged queries whose one
// relevant page is the page they name.
func KnownItemQueries(idx *barrel.Index, key func(string) string) ([]Query, error) {
	items, err := barrel.KnownItems(idx)
	if err != nil {
		return nil, err
	}
	var out []Query
	for _, it := range items {
		out = append(out, Query{Text: it.Query, Relevant: []string{key(it.URL)}})
	}
	return out, nil
}

// Train learns a model by coordinate ascent on Objective, as RankLib does:
// one weight at a time (in an order drawn from the seed) is set to the
// best of a few steps around it, until a pass over every weight gains
// nothing; restarts begin from start and from seeded perturbations of
// it, and the best model found is kept. Weights stay at 0 or above and
// the prior's between 0 and 1, so the prior stays bounded. The result
// depends only on the candidates, start and seed.
func Train(sets [][]Candidates, start barrel.Model, seed uint64, restarts int) (barrel.Model, float64) {
	return train(sets, start, seed, restarts, start.D != [barrel.NumDerived]float64{})
}

// TrainDerived is Train with the derived features' weights learnt too
// (from start's, 0 if unset).
func TrainDerived(sets [][]Candidates, start barrel.Model, seed uint64, restarts int) (barrel.Model, float64) {
	return train(sets, start, seed, restarts, true)
}

func train(sets [][]Candidates, start barrel.Model, seed uint64, restarts int, derived bool) (barrel.Model, float64) {
	rng := rand.New(rand.NewPCG(seed, 0x7261_6e6b))
	nParams := barrel.NumFeatures + 1
	if derived {
		nParams += barrel.NumDerived
	}
	get := func(m *barrel.Model, i int) float64 {
		switch {
		case i == barrel.NumFeatures:
			return m.Prior
		case i > barrel.NumFeatures:
			return m.D[i-barrel.NumFeatures-1]
		}
		return m.W[i]
	}
	set := func(m *barrel.Model, i int, v float64) {
		v = max(0, v)
		switch {
		case i == barrel.NumFeatures:
			m.Prior = min(1, v)
		case i > barrel.NumFeatures:
			m.D[i-barrel.NumFeatures-1] = v
		default:
			m.W[i] = v
		}
	}
	best, bestMRR := start, Objective(sets, &start)
	for r := range max(1, restarts) {
		m := start
		if r > 0 {
			for i := range nParams {
				set(&m, i, get(&m, i)*(0.5+rng.Float64())+0.2*rng.Float64())
			}
		}
		cur := Objective(sets, &m)
		for pass := 0; pass < 20; pass++ {
			gained := false
			for _, i := range rng.Perm(nParams) {
				v0 := get(&m, i)
				bestV := v0
				for _, v := range []float64{0, v0 * 0.5, v0 * 0.8, v0 * 1.25, v0 * 2, v0 - 0.1, v0 + 0.1, v0 + 0.5, v0 + 2} {
					set(&m, i, v)
					if s := Objective(sets, &m); s > cur+1e-9 {
						cur, bestV, gained = s, get(&m, i), true
					}
				}
				set(&m, i, bestV)
			}
			if !gained {
				break
			}
		}
		if cur > bestMRR+1e-9 {
			best, bestMRR = m, cur
		}
	}
	return best, bestMRR
}

// Bag learns bags models by Train, each on a bootstrap sample of every
// set (as many queries as the set, drawn with replacement by the seed),
// and averages them (bagging: Breiman, "Bagging predictors", 1996). The
// average varies less with the queries it is learnt from than one model
// does. The result depends only on the candidates, start, seed, restarts
// and bags.
func Bag(sets [][]Candidates, start barrel.Model, seed uint64, restarts, bags int) barrel.Model {
	rng := rand.New(rand.NewPCG(seed, 0x6261_6767))
	var ms []barrel.Model
	for range max(1, bags) {
		sample := make([][]Candidates, len(sets))
		for j, cs := range sets {
			for range cs {
				sample[j] = append(sample[j], cs[rng.IntN(len(cs))])
			}
		}
		m, _ := Train(sample, start, rng.Uint64(), restarts)
		ms = append(ms, m)
	}
	return average(ms, &start)
}

// Folds learns k models by Train, the i-th on every set's queries but
// the i-th of every k (k-fold: each model leaves a different fold out),
// and averages them as Bag does. The result depends only on the
// candidates, start, seed, restarts and k.
func Folds(sets [][]Candidates, start barrel.Model, seed uint64, restarts, k int) barrel.Model {
	k = max(2, k)
	var ms []barrel.Model
	for f := range k {
		sample := make([][]Candidates, len(sets))
		for j, cs := range sets {
			for i, c := range cs {
				if i%k != f {
					sample[j] = append(sample[j], c)
				}
			}
		}
		m, _ := Train(sample, start, seed+uint64(f), restarts)
		ms = append(ms, m)
	}
	return average(ms, &start)
}

// average is the mean of the models, the weights of each scaled to the
// same sum as start's (a model ranks the same at any scale), the prior's
// weight as it is.
func average(ms []barrel.Model, start *barrel.Model) barrel.Model {
	sum := func(m *barrel.Model) float64 {
		s := 0.0
		for _, w := range m.W {
			s += w
		}
		return s
	}
	scale := sum(start)
	var out barrel.Model
	n := float64(len(ms))
	for _, m := range ms {
		if s := sum(&m); s > 0 {
			for i := range m.W {
				out.W[i] += m.W[i] / s * scale / n
			}
			for i := range m.D {
				out.D[i] += m.D[i] / s * scale / n
			}
		}
		out.Prior += m.Prior / n
	}
	return out
}
