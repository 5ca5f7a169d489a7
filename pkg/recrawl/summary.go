package recrawl

import (
	"errors"
	"math"
	"sort"
)

// A Summary is one shard's contribution to lambda_0's equation,
// sum_i min(k_i, U_i(mu)) = k_0: since no host is split across shards, the
// left side is a sum of per-shard curves F_s(mu). A shard evaluates its
// curve at points around its own estimate; a reducer adds the curves and
// solves for k_0 (ReduceLambda0), and every shard then ranks with that
// lambda_0. The equation needs no lambda_i: the article's "lambda_0 from
// the unconstrained hosts".
type Summary struct {
	Shard     string       `json:"shard,omitempty"`
	Objective string       `json:"objective"`
	Pages     int          `json:"pages"`
	Hosts     int          `json:"hosts"`
	Limited   float64      `json:"limited_rate"` // sum of the finite k_i
	Points    [][2]float64 `json:"points"`       // (mu, F_s(mu)), mu increasing
	// Cells, from a crawl state: the page count of each (weight, rate)
	// cell, [weight bin, rate bin, pages]. Counts add exactly, so the
	// reduce of shards' cells solves the same equation as one state.
	Cells [][3]int64 `json:"cells,omitempty"`
}

// summaryPoints spans the shard's estimate by 10^(+-3) in steps of 10^(1/8).
const summaryPoints, summaryStep = 49, 0.125

// Summarize evaluates a shard's curve around center (the shard's own
// lambda_0 estimate, e.g. for its share of the global rate).
func Summarize(ps *Pages, obj Objective, center float64) Summary {
	p := ps.Problem(obj, 0)
	s := Summary{Objective: obj.String(), Pages: ps.Len(), Hosts: len(ps.HostNames)}
	for _, k := range ps.HostRate {
		if !math.IsInf(k, 1) {
			s.Limited += k
		}
	}
	if !(center > 0) || math.IsInf(center, 0) {
		center = 1
	}
	ev := newEvaluator(p)
	for g := 0; g < summaryPoints; g++ {
		mu := center * math.Pow(10, summaryStep*float64(g-summaryPoints/2))
		ev.evalAll(mu)
		f := 0.0
		for i, u := range ev.sum {
			f += math.Min(u, p.HostRate[i])
		}
		s.Points = append(s.Points, [2]float64{mu, f})
	}
	return s
}

// at interpolates the curve at mu, linearly in log-log between points and
// along the end segments' slopes beyond them (F falls towards 0 as mu grows
// and rises without bound, or to the limited rate, as mu falls).
func (s *Summary) at(mu float64) float64 {
	pts := s.Points
	if len(pts) == 0 {
		return 0
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i][0] >= mu })
	switch {
	case i < len(pts) && pts[i][0] == mu:
		return pts[i][1]
	case i == 0:
		i = 1
	case i == len(pts):
		i = len(pts) - 1
	}
	if len(pts) == 1 {
		return pts[0][1]
	}
	a, b := pts[i-1], pts[i]
	if a[1] <= 0 || b[1] <= 0 {
		// Past w/delta of every page: interpolate linearly, never below 0.
		t := (mu - a[0]) / (b[0] - a[0])
		return math.Max(0, a[1]+t*(b[1]-a[1]))
	}
	t := (math.Log(mu) - math.Log(a[0])) / (math.Log(b[0]) - math.Log(a[0]))
	v := math.Exp(math.Log(a[1]) + t*(math.Log(b[1])-math.Log(a[1])))
	if mu < a[0] && s.Limited > 0 && !math.IsInf(s.Limited, 0) && allLimited(s) {
		v = math.Min(v, s.Limited)
	}
	return v
}

func allLimited(s *Summary) bool { return s.Points[0][1] <= s.Limited*(1+1e-9) }

// ReduceLambda0 adds the shards' curves and solves sum F_s(mu) = rate.
func ReduceLambda0(sums []Summary, rate float64) (float64, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return 0, errors.New("reduce: want a finite global rate")
	}
	if len(sums) == 0 {
		return 0, errors.New("reduce: no summaries")
	}
	lo, hi := math.Inf(1), 0.0
	for _, s := range sums {
		if s.Objective != sums[0].Objective {
			return 0, errors.New("reduce: summaries of different objectives")
		}
		if len(s.Points) > 0 {
			lo = math.Min(lo, s.Points[0][0])
			hi = math.Max(hi, s.Points[len(s.Points)-1][0])
		}
	}
	if math.IsInf(lo, 1) {
		return 0, errors.New("reduce: empty summaries")
	}
	total := func(mu float64) float64 {
		t := 0.0
		for i := range sums {
			t += sums[i].at(mu)
		}
		return t
	}
	if total(lo) <= rate {
		// Below the summarised range the curves follow their end slopes,
		// or stay at the hosts' limits; a budget they never reach is more
		// than the pages can use, so every page is worth its crawl.
		found := false
		for m := lo / 10; m > lo*1e-30; m /= 10 {
			if total(m) > rate {
				hi, lo, found = m*10, m, true
				break
			}
		}
		if !found {
			return 0, nil
		}
	}
	for total(hi) > rate {
		hi *= 10
		if hi > 1e300 {
			return 0, errors.New("reduce: no threshold meets the global rate")
		}
	}
	a, b := math.Log(lo), math.Log(hi)
	for i := 0; i < 200 && b-a > 1e-12; i++ {
		m := (a + b) / 2
		if total(math.Exp(m)) > rate {
			a = m
		} else {
			b = m
		}
	}
	return math.Exp(b), nil
}
