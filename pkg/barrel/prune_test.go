package barrel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestPrunedTopKIsExhaustive: skipping the matches whose score bound
// cannot enter the candidates changes no result, score or match count,
// against scoring every match, over random queries (words of the site,
// repeated words, stop words, capitals, OR, phrases, exclusions, site:)
// on a segmented index with re-crawled pages, with the hand weights,
// other weights, a model reading every feature and one reading the
// derived features too, and with offsets.
func TestPrunedTopKIsExhaustive(t *testing.T) {
	dir := t.TempDir()
	site, _, _ := segmentedSite(t, dir, Options{})
	idx := open(t, dir)
	if len(idx.segs) < 2 {
		t.Fatalf("%d segments: the test wants several", len(idx.segs))
	}
	pool := strings.Fields(strings.Join(site.Queries(300), " "))
	model := HandModel(&DefaultWeights)
	model.W[FeatTitle], model.W[FeatBody], model.W[FeatCoord] = 0.5, 1, 0.3
	model.W[FeatCapital], model.W[FeatAnchor], model.W[FeatURL], model.W[FeatHeading] = 0.2, -0.1, 0.4, 0.6
	model.W[FeatDef], model.W[FeatEmph], model.W[FeatDfn] = 0.7, 0.8, 1.1
	derivedModel := model
	derivedModel.D = [NumDerived]float64{0.6, 0.9, 3, 2, 1.5}
	flat := DefaultWeights
	flat.Type = [numTypes]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	flat.K1, flat.B, flat.Rank = 1.2, 0.75, 0.9
	opts := map[string]SearchOptions{
		"hand":    {N: 10, NoSnippets: true},
		"offset":  {N: 3, Offset: 4, NoSnippets: true},
		"model":   {N: 10, NoSnippets: true, Model: &model},
		"derived": {N: 10, NoSnippets: true, Model: &derivedModel},
		"flat":    {N: 20, NoSnippets: true, Weights: &flat},
		"literal": {N: 10, NoSnippets: true, Literal: true},
		"stop":    {N: 10, NoSnippets: true, MaxMatches: 60},
		"deep":    {N: 250, NoSnippets: true},
	}
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 28))
		word := func() string { return pool[rng.IntN(len(pool))] }
		var queries []string
		for range 150 {
			var q []string
			for range 1 + rng.IntN(4) {
				w := word()
				switch rng.IntN(12) {
				case 0:
					w = strings.ToUpper(w[:1]) + w[1:]
				case 1:
					w = "the " + w
				case 2:
					w += " OR " + word()
				case 3:
					w = `"` + w + " " + word() + `"`
				case 4:
					w = "-" + w
				case 5:
					w = fmt.Sprintf("site:site%d.test %s", rng.IntN(50), w)
				case 6:
					w += " " + w
				}
				q = append(q, w)
			}
			queries = append(queries, word()+" "+strings.Join(q, " ")) // not only exclusions
		}
		for range 50 { // one word, and two: the scans that skip by title and by coordination
			queries = append(queries, word(), word()+" "+word())
		}
		for name, opt := range opts {
			before := skippedMatches.Load()
			pruned := exact(t, idx, queries, opt)
			skipped := skippedMatches.Load() - before
			all := bitsWithout(t, idx, queries, opt, true, &pruning, &segmentOrder)
			if pruned != all {
				t.Errorf("seed %d, %s: pruned:\n%s\nevery match scored:\n%s", seed, name, pruned, all)
			}
			if skipped == 0 {
				t.Errorf("seed %d, %s: no match skipped", seed, name)
			}
		}
	}
}

// The bound is computed on every match while it skips a quarter or more
// of them; where it skips fewer it is left off for pauses that double up
// to boundOffMost, and one window where it skips enough puts it back on
// every match.
func TestBoundSchedule(t *testing.T) {
	run := func(b *boundSchedule, n int, skips func(i int) bool) (tried int, pauses []int) {
		for i := range n {
			if !b.try() {
				continue
			}
			tried++
			b.record(skips(i))
			if b.off > 0 {
				pauses = append(pauses, b.off)
			}
		}
		return tried, pauses
	}
	never := func(int) bool { return false }
	always := func(int) bool { return true }

	var b boundSchedule
	tried, pauses := run(&b, 40000, never)
	want := []int{256, 512, 1024, 2048, 4096, 4096}
	if len(pauses) < len(want) || !slices.Equal(pauses[:len(want)], want) || slices.Max(pauses) != boundOffMost {
		t.Errorf("a bound that never skips: pauses %v, want %v then %d each", pauses, want, boundOffMost)
	}
	if tried > 40000/40 {
		t.Errorf("a bound that never skips: computed on %d of 40000 matches", tried)
	}

	b = boundSchedule{}
	if tried, pauses := run(&b, 10000, always); tried != 10000 || len(pauses) > 0 {
		t.Errorf("a bound that always skips: computed on %d of 10000 matches, pauses %v", tried, pauses)
	}
	b = boundSchedule{}
	quarter := func(i int) bool { return i%4 == 0 }
	if tried, _ := run(&b, 10000, quarter); tried != 10000 {
		t.Errorf("a bound that skips a quarter: computed on %d of 10000 matches", tried)
	}

	// Unproductive, then productive: after the pause it is in, the bound
	// is back on every match.
	b = boundSchedule{}
	run(&b, 20000, never)
	left := b.off
	if tried, _ := run(&b, left+boundWindow+5000, always); tried != boundWindow+5000 {
		t.Errorf("productive again: the bound computed on %d of the %d matches after its pause", tried, boundWindow+5000)
	}
	if b.pause != 0 {
		t.Errorf("productive again: pause %d kept", b.pause)
	}
}
