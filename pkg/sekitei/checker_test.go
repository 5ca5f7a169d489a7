package sekitei

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestChecker reproduces the course's checker on the bundled sites: train
// on 500 good + 500 general URLs, offer the rest shuffled URL by URL until
// the quota of 10,000 is used, F1 of (fetched / quota, good fetched / good
// offered), averaged over 20 shuffles per site and then over the sites.
// Nothing in the method names these sites; the figures go to docs/sekitei.md.
func TestChecker(t *testing.T) {
	type result struct {
		site string
		tell bool
		f1   float64
	}
	results := make(chan result, 4)
	t.Run("sites", func(t *testing.T) {
		for _, site := range sites {
			for _, tell := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/told=%v", site, tell), func(t *testing.T) {
					t.Parallel()
					good, general := siteURLs(t, site)
					res, err := Check(good, general, CheckOptions{Runs: 20, Seed: 1, Stream: tell})
					if err != nil {
						t.Fatal(err)
					}
					worst := 1.0
					for _, r := range res.Runs {
						if r.Fetched > 10000 {
							t.Fatalf("fetched %d > quota", r.Fetched)
						}
						worst = min(worst, r.F1)
					}
					t.Logf("stream told=%v %-9s F1 %.4f (worst run %.4f)", tell, site, res.F1, worst)
					if res.F1 < 0.88 {
						t.Errorf("F1 %.4f, want >= 0.88 per site", res.F1)
					}
					results <- result{site, tell, res.F1}
				})
			}
		}
	})
	close(results)
	mean := map[bool]float64{}
	n := 0
	for r := range results {
		mean[r.tell] += r.f1 / float64(len(sites))
		n++
	}
	if n != 2*len(sites) {
		t.Fatalf("%d of %d checker runs finished", n, 2*len(sites))
	}
	for _, tell := range []bool{true, false} {
		t.Logf("stream told=%v: mean F1 over the sites %.4f", tell, mean[tell])
		if mean[tell] < 0.90 {
			t.Errorf("stream told=%v: mean F1 %.4f, want >= 0.90", tell, mean[tell])
		}
	}
}

// TestCheckerBaseline checks the checker itself: a model that knows nothing
// (every URL scores the same) spends the quota evenly over the stream and
// scores what fetching everything scores, about 0.646.
func TestCheckerBaseline(t *testing.T) {
	good, general := siteURLs(t, "lenta")
	m := &Model{Format: ModelFormat, Version: ModelVersion, Quota: 10000, Weights: map[string]float64{}}
	m.index()
	type item struct {
		u    string
		good bool
	}
	var stream []item
	for _, u := range good[500:] {
		stream = append(stream, item{u, true})
	}
	for _, u := range general[500:] {
		stream = append(stream, item{u, false})
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(stream), func(i, j int) { stream[i], stream[j] = stream[j], stream[i] })
	f := NewFilter(m, 0, len(stream))
	fetched, goodFetched := 0, 0
	for _, it := range stream {
		if fetched == 10000 {
			break
		}
		d, err := f.Decide(it.u)
		if err != nil {
			t.Fatal(err)
		}
		if d.Fetch {
			fetched++
			if it.good {
				goodFetched++
			}
		}
	}
	p, r := float64(fetched)/10000, float64(goodFetched)/1500
	f1 := 2 * p * r / (p + r)
	t.Logf("know-nothing model: fetched %d, good %d, F1 %.4f", fetched, goodFetched, f1)
	if fetched != 10000 || f1 < 0.60 || f1 > 0.70 {
		t.Errorf("know-nothing model: fetched %d, F1 %.4f; want the quota used and F1 near 0.646", fetched, f1)
	}
}

// TestCheckerSegmentQuotas scores the lecture's quota by segments as the
// filter: better than fetching everything, below the model.
func TestCheckerSegmentQuotas(t *testing.T) {
	for _, site := range sites {
		good, general := siteURLs(t, site)
		seg, err := Check(good, general, CheckOptions{Runs: 5, Seed: 1, Stream: true, Segments: true})
		if err != nil {
			t.Fatal(err)
		}
		model, err := Check(good, general, CheckOptions{Runs: 5, Seed: 1, Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-9s segment quotas F1 %.4f, model F1 %.4f", site, seg.F1, model.F1)
		if seg.F1 < 0.66 || seg.F1 >= model.F1 {
			t.Errorf("%s: segment quotas F1 %.4f, want above fetch-all (0.646) and below the model (%.4f)", site, seg.F1, model.F1)
		}
	}
}
