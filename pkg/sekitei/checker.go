package sekitei

import (
	"errors"
	"math/rand/v2"
)

// CheckOptions describe one reproduction of the course's checker.
type CheckOptions struct {
	Train  int    // good and general URLs each to train on (default 500)
	Quota  int    // default 10000
	Runs   int    // shuffles to average over (default 20)
	Seed   uint64 // first shuffle's seed; run i uses Seed+i
	Stream bool   // tell the model the stream's length (the default pacing assumes 2*Quota otherwise)
	// StreamScale, with Stream, tells the model StreamScale times the true
	// length: how much a wrong estimate costs (default 1).
	StreamScale float64
	// Segments scores the lecture's quota by segments (SegmentFilter, built
	// on the training URLs) instead of the model.
	Segments bool
}

// CheckRun is the outcome of one shuffle.
type CheckRun struct {
	Offered, GoodOffered int // URLs in the stream, good ones among them
	Fetched, GoodFetched int
	FetchedShare         float64 // Fetched / Quota
	GoodShare            float64 // GoodFetched / GoodOffered
	F1                   float64
}

// CheckResult is the checker's score of one site: the mean F1 of its runs.
type CheckResult struct {
	Runs []CheckRun
	F1   float64
}

// Check reproduces the homework's checker on one site: draw Train good and
// Train general URLs to train on, mix the remaining good URLs with the
// remaining general ones, shuffle, and ask the filter URL by URL until the
// quota is used; score the F1 of (fetched / quota) and (good fetched / good
// offered). It repeats that Runs times with new draws.
func Check(good, general []string, opt CheckOptions) (CheckResult, error) {
	if opt.Train <= 0 {
		opt.Train = 500
	}
	if opt.Quota <= 0 {
		opt.Quota = 10000
	}
	if opt.Runs <= 0 {
		opt.Runs = 20
	}
	if len(good) <= opt.Train || len(general) <= opt.Train {
		return CheckResult{}, errors.New("check: need more URLs than the training sample in each file")
	}
	var res CheckResult
	for r := 0; r < opt.Runs; r++ {
		rng := rand.New(rand.NewPCG(opt.Seed+uint64(r), 0xc4ec))
		g := append([]string(nil), good...)
		o := append([]string(nil), general...)
		rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
		rng.Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
		type item struct {
			url  string
			good bool
		}
		var stream []item
		for _, u := range g[opt.Train:] {
			stream = append(stream, item{u, true})
		}
		for _, u := range o[opt.Train:] {
			stream = append(stream, item{u, false})
		}
		rng.Shuffle(len(stream), func(i, j int) { stream[i], stream[j] = stream[j], stream[i] })
		topt := TrainOptions{Quota: opt.Quota, Seed: opt.Seed + uint64(r)}
		if opt.Stream {
			scale := opt.StreamScale
			if scale <= 0 {
				scale = 1
			}
			topt.Stream = int(scale * float64(len(stream)))
		}
		decide, err := newDecider(g[:opt.Train], o[:opt.Train], topt, opt.Segments)
		if err != nil {
			return res, err
		}
		run := CheckRun{Offered: len(stream), GoodOffered: len(g) - opt.Train}
		for _, it := range stream {
			if run.Fetched >= opt.Quota {
				break
			}
			if !decide(it.url) {
				continue
			}
			run.Fetched++
			if it.good {
				run.GoodFetched++
			}
		}
		run.FetchedShare = float64(run.Fetched) / float64(opt.Quota)
		run.GoodShare = float64(run.GoodFetched) / float64(run.GoodOffered)
		if s := run.FetchedShare + run.GoodShare; s > 0 {
			run.F1 = 2 * run.FetchedShare * run.GoodShare / s
		}
		res.Runs = append(res.Runs, run)
		res.F1 += run.F1 / float64(opt.Runs)
	}
	return res, nil
}

// newDecider returns the fetch decision function of one checker run.
func newDecider(good, general []string, topt TrainOptions, segments bool) (func(string) bool, error) {
	stream := topt.Stream
	if stream <= 0 {
		stream = 2 * topt.Quota
	}
	if segments {
		var ex []Example
		for _, u := range good {
			ex = append(ex, Example{URL: u, Good: true})
		}
		for _, u := range general {
			ex = append(ex, Example{URL: u, Good: false})
		}
		site, err := Build("", ex, Options{SiteQuota: topt.Quota, MinQuota: topt.Quota / 100, Seed: topt.Seed})
		if err != nil {
			return nil, err
		}
		f := NewSegmentFilter(site, topt.Quota, stream)
		return func(u string) bool { ok, _ := f.Decide(u); return ok }, nil
	}
	m, _, err := Train(good, general, topt)
	if err != nil {
		return nil, err
	}
	f := NewFilter(m, 0, 0)
	return func(u string) bool { d, err := f.Decide(u); return err == nil && d.Fetch }, nil
}
