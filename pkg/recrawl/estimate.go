package recrawl

import (
	"math"
	"strings"
)

// Observations are what a crawler learns about a page's changes: at each
// fetch after the first, whether it changed since the previous one.
type Observations struct {
	// Gaps are the times between consecutive fetches in days and Changed
	// whether the page differed; or, for counts, leave them nil and set N,
	// X and Interval.
	Gaps    []float64
	Changed []bool
	// N fetch intervals of which X showed a change, each Interval days long
	// (counts given without the individual fetch times).
	N, X     int
	Interval float64
}

// A Prior is what is assumed about a page with little history: a change
// rate (per day) worth Days days of observation. It is a Gamma(1+Rate*Days,
// Days) prior on the rate, whose mode is Rate.
type Prior struct {
	Rate       float64
	Days       float64
	MinHistory int // fewer observed intervals use the prior (default 5)
}

// Estimate methods.
const (
	MethodCGM   = "cgm"   // Cho and Garcia-Molina, regular intervals
	MethodMLE   = "mle"   // maximum likelihood, irregular intervals
	MethodPrior = "prior" // posterior mode with the prior (little history)
)

// Estimate returns the change rate (per day) of a page and the method used:
//   - regular intervals I with n >= MinHistory intervals, X > 0 changes: the
//     estimator of Cho and Garcia-Molina (2003), r = -ln((n - X + 0.5)/(n + 0.5))/I,
//     nearly unbiased where the naive X/(nI) saturates;
//   - irregular intervals with 0 < X < n: maximum likelihood, the root of
//     sum over changed gaps t e^(-rt)/(1-e^(-rt)) = sum over unchanged gaps t;
//   - otherwise (little history, no change seen, or a change at every
//     fetch): the posterior mode under the Prior.
func Estimate(o Observations, prior Prior) (float64, string) {
	minH := prior.MinHistory
	if minH <= 0 {
		minH = 5
	}
	n, x := o.N, o.X
	regular, interval := true, o.Interval
	if o.Gaps != nil {
		n, x = len(o.Gaps), 0
		lo, hi := math.Inf(1), 0.0
		for i, g := range o.Gaps {
			if o.Changed[i] {
				x++
			}
			lo, hi = math.Min(lo, g), math.Max(hi, g)
		}
		regular = n > 0 && hi <= lo*1.05
		interval = 0
		for _, g := range o.Gaps {
			interval += g
		}
		if n > 0 {
			interval /= float64(n)
		}
	}
	if n >= minH && x > 0 && interval > 0 {
		if regular {
			return -math.Log((float64(n-x)+0.5)/(float64(n)+0.5)) / interval, MethodCGM
		}
		if x < n {
			return solveRate(o, n, x, interval, 0, 0), MethodMLE
		}
	}
	if n == 0 || prior.Days <= 0 {
		return prior.Rate, MethodPrior
	}
	return solveRate(o, n, x, interval, prior.Rate*prior.Days, prior.Days), MethodPrior
}

// solveRate finds the root of the score of the (penalised) likelihood,
// decreasing in r: changed(r) - unchanged + a/r - b.
func solveRate(o Observations, n, x int, interval, a, b float64) float64 {
	score := func(r float64) float64 {
		s := a/r - b
		if o.Gaps == nil {
			t := interval
			s += float64(x)*changedTerm(r, t) - float64(n-x)*t
			return s
		}
		for i, t := range o.Gaps {
			if o.Changed[i] {
				s += changedTerm(r, t)
			} else {
				s -= t
			}
		}
		return s
	}
	return bisectRate(score)
}

// bisectRate finds the root of a score decreasing in r, in 1e-9..1e6 a day.
func bisectRate(score func(r float64) float64) float64 {
	lo, hi := 1e-9, 1e6
	if score(hi) > 0 {
		return hi
	}
	if score(lo) < 0 {
		return lo
	}
	for i := 0; i < 200 && hi/lo > 1+1e-12; i++ {
		mid := math.Sqrt(lo * hi)
		if score(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}

// changedTerm is d/dr ln(1 - e^(-rt)) = t e^(-rt) / (1 - e^(-rt)).
func changedTerm(r, t float64) float64 {
	rt := r * t
	if rt < 1e-12 {
		return 1 / r
	}
	return t / math.Expm1(rt)
}

// ChangefreqRate is the change rate per day a sitemap's <changefreq>
// announces (sitemaps.org protocol): the prior of a page never observed.
// "always" counts as hourly, the fastest a turn-based loop can see, and
// "never" (archived pages) as once in ten years, since a rate must be > 0.
func ChangefreqRate(changefreq string) (float64, bool) {
	switch strings.ToLower(strings.TrimSpace(changefreq)) {
	case "always", "hourly":
		return 24, true
	case "daily":
		return 1, true
	case "weekly":
		return 1.0 / 7, true
	case "monthly":
		return 1.0 / 30, true
	case "yearly":
		return 1.0 / 365, true
	case "never":
		return 1.0 / 3650, true
	}
	return 0, false
}
