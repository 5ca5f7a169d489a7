package recrawl

import (
	"math"
	"slices"
)

// ChangeStats are the sufficient statistics of Estimate for one page, kept
// across crawl turns and updated one fetch interval at a time, so that a
// crawl that runs for years never re-reads its fetch history. Everything
// Estimate needs is a count or a sum, except the maximum likelihood score's
// sum over changed intervals of t/(e^(rt)-1), which depends on each interval:
// those are kept in bins of 1/8 octave (count and sum of lengths), and the
// term is evaluated at each bin's mean. Within a bin the lengths differ by
// at most 9%, so the estimate matches Estimate over the full history to
// about 1e-4 (TestChangeStatsMatchEstimate); for a page crawled at steady
// intervals there are one or two bins, a few dozen bytes.
type ChangeStats struct {
	N, X         int     // intervals observed and how many showed a change
	SumGap       float64 // total length of the intervals, days
	SumUnchanged float64 // total length of the unchanged ones
	MinGap       float64 // shortest and longest interval (for regularity)
	MaxGap       float64
	Changed      []GapBin // changed intervals by length, bins increasing
}

// A GapBin holds the changed intervals whose length falls in one bin.
type GapBin struct {
	Bin   int16
	Count uint32
	Sum   float64 // days
}

const gapBinsPerOctave = 8

// GapBinOf returns the bin of an interval of gap days.
func GapBinOf(gap float64) int16 {
	b := math.Floor(gapBinsPerOctave * math.Log2(gap))
	return int16(math.Max(-30000, math.Min(30000, b)))
}

// Add records one interval of gap days (> 0) between two fetches and
// whether the page changed in it.
func (s *ChangeStats) Add(gap float64, changed bool) {
	if !(gap > 0) || math.IsInf(gap, 0) {
		return
	}
	if s.N == 0 {
		s.MinGap, s.MaxGap = gap, gap
	} else {
		s.MinGap, s.MaxGap = math.Min(s.MinGap, gap), math.Max(s.MaxGap, gap)
	}
	s.N++
	s.SumGap += gap
	if !changed {
		s.SumUnchanged += gap
		return
	}
	s.X++
	b := GapBinOf(gap)
	i, found := slices.BinarySearchFunc(s.Changed, b, func(g GapBin, b int16) int { return int(g.Bin) - int(b) })
	if !found {
		s.Changed = slices.Insert(s.Changed, i, GapBin{Bin: b})
	}
	s.Changed[i].Count++
	s.Changed[i].Sum += gap
}

// EstimateStats is Estimate from the statistics instead of the history: the
// same methods chosen by the same rules.
func EstimateStats(s *ChangeStats, prior Prior) (float64, string) {
	minH := prior.MinHistory
	if minH <= 0 {
		minH = 5
	}
	n, x := s.N, s.X
	regular := n > 0 && s.MaxGap <= s.MinGap*1.05
	interval := 0.0
	if n > 0 {
		interval = s.SumGap / float64(n)
	}
	score := func(a, b float64) func(r float64) float64 {
		return func(r float64) float64 {
			v := a/r - b - s.SumUnchanged
			for _, g := range s.Changed {
				v += float64(g.Count) * changedTerm(r, g.Sum/float64(g.Count))
			}
			return v
		}
	}
	if n >= minH && x > 0 && interval > 0 {
		if regular {
			return -math.Log((float64(n-x)+0.5)/(float64(n)+0.5)) / interval, MethodCGM
		}
		if x < n {
			return bisectRate(score(0, 0)), MethodMLE
		}
	}
	if n == 0 || prior.Days <= 0 {
		return prior.Rate, MethodPrior
	}
	return bisectRate(score(prior.Rate*prior.Days, prior.Days)), MethodPrior
}
