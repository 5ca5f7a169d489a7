package ireval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel"
)

// randomCandidates are n queries of up to 30 candidates with random
// features, coordination tiers (few, so tiers tie) and relevant pages,
// some keys repeated (two results of one page) and some queries with no
// relevant candidate.
func randomCandidates(n int, seed uint64) []Candidates {
	rng := rand.New(rand.NewPCG(seed, 1))
	var cs []Candidates
	for range n {
		var c Candidates
		k := rng.IntN(30)
		for i := range k {
			c.Keys = append(c.Keys, fmt.Sprint("p", rng.IntN(k+5)))
			c.Matched = append(c.Matched, 1+rng.IntN(2))
			c.Prior = append(c.Prior, rng.Float64())
			var f [barrel.NumFeatures]float64
			for j := range f {
				if rng.IntN(3) > 0 { // zeros make ties
					f[j] = float64(rng.IntN(4))
				}
			}
			c.F = append(c.F, f)
			_ = i
		}
		for range 1 + rng.IntN(3) {
			c.Relevant = append(c.Relevant, fmt.Sprint("p", rng.IntN(k+5)))
		}
		cs = append(cs, c)
	}
	return cs
}

// sortedMRR is MRR by sorting each query's candidates (stable, as the
// searcher orders them) and judging the first 10.
func sortedMRR(cs []Candidates, m *barrel.Model) float64 {
	sum := 0.0
	for _, c := range cs {
		order := make([]int, len(c.Keys))
		for i := range order {
			order[i] = i
		}
		score := func(i int) float64 { return m.Score(&c.F[i], c.Prior[i]) }
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case c.Matched[a] != c.Matched[b]:
				return c.Matched[b] - c.Matched[a]
			case score(a) > score(b):
				return -1
			case score(a) < score(b):
				return 1
			}
			return 0
		})
		var ranked []string
		for _, i := range order[:min(10, len(order))] {
			ranked = append(ranked, c.Keys[i])
		}
		rr, _, _ := Judge(ranked, c.Relevant, 10)
		sum += rr
	}
	return sum / float64(len(cs))
}

// TestMRRIsSortAndJudge: MRR without sorting gives the figure sorting
// the candidates and judging the first 10 gives, ties and repeated keys
// included, for the hand model and for random models.
func TestMRRIsSortAndJudge(t *testing.T) {
	cs := randomCandidates(400, 1)
	hand := barrel.HandModel(&barrel.DefaultWeights)
	models := []barrel.Model{hand, {}}
	rng := rand.New(rand.NewPCG(2, 2))
	for range 20 {
		var m barrel.Model
		for i := range m.W {
			m.W[i] = float64(rng.IntN(3))
		}
		m.Prior = rng.Float64()
		models = append(models, m)
	}
	nonzero := 0
	for i, m := range models {
		got, want := MRR(cs, &m), sortedMRR(cs, &m)
		if got != want {
			t.Errorf("model %d: MRR %v, sorting and judging %v", i, got, want)
		}
		if got > 0 {
			nonzero++
		}
	}
	if nonzero == 0 {
		t.Fatal("every MRR is 0: the candidates judge nothing")
	}
}

// urlCandidates are n queries of 20 candidates in one tier whose one
// relevant page is the one with the URL feature; by the text score it
// ranks anywhere.
func urlCandidates(n int, seed uint64) []Candidates {
	rng := rand.New(rand.NewPCG(seed, 3))
	var cs []Candidates
	for q := range n {
		c := Candidates{Relevant: []string{fmt.Sprint(q, "-rel")}}
		rel := rng.IntN(20)
		for i := range 20 {
			var f [barrel.NumFeatures]float64
			f[barrel.FeatText] = rng.Float64() * 4
			key := fmt.Sprint(q, "-", i)
			if i == rel {
				f[barrel.FeatURL] = 1 + rng.Float64()
				key = c.Relevant[0]
			}
			c.Keys = append(c.Keys, key)
			c.Matched = append(c.Matched, 1)
			c.Prior = append(c.Prior, 0)
			c.F = append(c.F, f)
		}
		cs = append(cs, c)
	}
	return cs
}

// TestBagLearnsTheFeatureThatFinds: bagged models, and models averaged
// over folds, learn to weigh the feature that marks the relevant page,
// on queries they were not learnt from too; the average keeps the hand
// model's sum of weights, and the same seed gives the same model.
func TestBagLearnsTheFeatureThatFinds(t *testing.T) {
	sets := [][]Candidates{urlCandidates(60, 1)}
	unseen := urlCandidates(60, 2)
	hand := barrel.HandModel(&barrel.DefaultWeights)
	for name, learn := range map[string]func() barrel.Model{
		"bag":   func() barrel.Model { return Bag(sets, hand, 1, 1, 3) },
		"folds": func() barrel.Model { return Folds(sets, hand, 1, 1, 3) },
	} {
		m := learn()
		if again := learn(); again.W != m.W || again.Prior != m.Prior {
			t.Errorf("%s: the same seed gave %v and %v", name, m, again)
		}
		if m.W[barrel.FeatURL] <= 0 {
			t.Errorf("%s: url weight %v, want above 0", name, m.W[barrel.FeatURL])
		}
		handMRR, mrr := MRR(unseen, &hand), MRR(unseen, &m)
		if mrr < 0.9 || mrr <= handMRR {
			t.Errorf("%s: unseen queries: MRR@10 %.3f learnt, %.3f hand weights; want the learnt above 0.9 and above", name, mrr, handMRR)
		}
		sum := func(m *barrel.Model) (s float64) {
			for _, w := range m.W {
				s += w
			}
			return s
		}
		if d := sum(&m) - sum(&hand); d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: sum of weights %v, hand model's %v", name, sum(&m), sum(&hand))
		}
	}
}

// TestPairwiseLearnsTheFeatureThatFinds: the pairwise logistic loss,
// with and without LambdaRank's weights, learns to weigh the feature that
// marks the relevant page, on queries it was not learnt from too, and is
// deterministic.
func TestPairwiseLearnsTheFeatureThatFinds(t *testing.T) {
	sets := [][]Candidates{urlCandidates(60, 1)}
	unseen := urlCandidates(60, 2)
	hand := barrel.HandModel(&barrel.DefaultWeights)
	for _, lambda := range []bool{false, true} {
		opts := PairwiseOptions{Lambda: lambda, L2: 0.01}
		m := Pairwise(sets, hand, opts)
		if again := Pairwise(sets, hand, opts); again != m {
			t.Errorf("lambda %v: gave %v and %v", lambda, m, again)
		}
		if m.W[barrel.FeatURL] <= 0 {
			t.Errorf("lambda %v: url weight %v, want above 0", lambda, m.W[barrel.FeatURL])
		}
		for i, w := range m.W {
			if w < 0 {
				t.Errorf("lambda %v: %s weighs %v, below 0", lambda, barrel.FeatureNames[i], w)
			}
		}
		handMRR, mrr := MRR(unseen, &hand), MRR(unseen, &m)
		if mrr < 0.9 || mrr <= handMRR {
			t.Errorf("lambda %v: unseen queries: MRR@10 %.3f learnt, %.3f hand weights; want the learnt above 0.9 and above", lambda, mrr, handMRR)
		}
	}
}

// TestLambdaWeights: a pair's weight is the change of the reciprocal
// rank if its two candidates swapped.
func TestLambdaWeights(t *testing.T) {
	c := &Candidates{Relevant: []string{"r"}, Keys: []string{"a", "b", "r", "c"}, Matched: []int{1, 1, 1, 1}}
	q := pairQuery{c: c, rel: []bool{false, false, true, false},
		pairs: []pair{{2, 0}, {2, 1}, {2, 3}}}
	got := lambdaWeights(q, []float64{4, 3, 2, 1}) // r third
	want := []float64{1 - 1.0/3, 0.5 - 1.0/3, 1.0/3 - 0.25}
	for i := range want {
		if d := got[i] - want[i]; d > 1e-12 || d < -1e-12 {
			t.Errorf("pair %v: weight %v, want %v", q.pairs[i], got[i], want[i])
		}
	}
}

// TestTrainDerivedLearnsAProduct: when only the product of two features
// marks the relevant page (it has both; the others have twice one of
// them), no weights of the features alone put it first, and learning
// the derived features does.
func TestTrainDerivedLearnsAProduct(t *testing.T) {
	var cs []Candidates
	for q := range 40 {
		c := Candidates{Relevant: []string{fmt.Sprint(q, "-rel")}}
		add := func(key string, def, tm float64) {
			var f [barrel.NumFeatures]float64
			f[barrel.FeatDef], f[barrel.FeatTitleMatch] = def, tm
			c.Keys, c.Matched, c.Prior, c.F = append(c.Keys, key), append(c.Matched, 1), append(c.Prior, 0), append(c.F, f)
		}
		add(fmt.Sprint(q, "-a"), 2, 0)
		add(fmt.Sprint(q, "-b"), 0, 2)
		add(c.Relevant[0], 1, 1)
		cs = append(cs, c)
	}
	sets := [][]Candidates{cs}
	var start barrel.Model
	start.W[barrel.FeatDef], start.W[barrel.FeatTitleMatch] = 1, 1
	plain, plainMRR := Train(sets, start, 1, 2)
	if plain.D != ([barrel.NumDerived]float64{}) || plainMRR > 0.5 {
		t.Errorf("Train: derived weights %v, MRR@10 %v; want none and at most 1/2", plain.D, plainMRR)
	}
	m, mrr := TrainDerived(sets, start, 1, 2)
	if m.D[barrel.DerivDefTitle] <= 0 || mrr != 1 {
		t.Errorf("TrainDerived: definition_x_title weighs %v, MRR@10 %v; want above 0 and 1", m.D[barrel.DerivDefTitle], mrr)
	}
	if again, _ := TrainDerived(sets, start, 1, 2); again != m {
		t.Errorf("TrainDerived gave %v and %v", m, again)
	}
}
