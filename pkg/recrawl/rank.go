package recrawl

import (
	"cmp"
	"math"
	"slices"
)

// RankOptions configure one ranking slot.
type RankOptions struct {
	Objective Objective
	// Rate is the global limit k_0 per day (0: none).
	Rate float64
	// Slot is the slot length in days: a host may get k_i*Slot crawls in it
	// and the crawler k_0*Slot.
	Slot float64
	// N, when > 0, caps the pages of the slot instead of Rate*Slot (and
	// stands for a global rate of N/Slot when lambda_0 is estimated).
	N int
	// FixLambda0 uses Lambda0 instead of estimating it.
	Lambda0    float64
	FixLambda0 bool
	// HostCarry and GlobalCarry are the fractions of a crawl left over from
	// the last slot (kept in the state file); nil and 0 for none.
	HostCarry   []float64
	GlobalCarry float64
	// Smooth, if set, blends the estimated lambda_0 (see SolveOptions).
	Smooth func(lambda0 float64) float64
	// Static asks for each host's steady-state lambda_i (StaticLambda),
	// which next_fetch, explain and the state file use; it costs a few
	// passes over the constrained hosts' pages.
	Static bool
	// CandidateValues computes Value only where it can reach lambda_0:
	// a page whose V is below lambda_0 by a cheap bound (V <= (w/delta)
	// min(1, x^2/2), x = delta tau) gets 0 in Value instead, without the
	// exponentials. Selected, the candidates and the limits are the same;
	// for a caller that reads Value of the selected pages only.
	CandidateValues bool
}

// A RankResult is the plan for one slot.
type RankResult struct {
	// Lambda0 is the global threshold: a page is a candidate once its
	// crawl value reaches it.
	Lambda0 float64
	// StaticLambda is each host's lambda_i of the static optimum: the
	// steady-state part of the host's threshold, used for next_fetch (all
	// zero unless RankOptions.Static).
	StaticLambda []float64
	// SlotLambda is each host's lambda_i in this slot: how far above
	// lambda_0 the host's limit pushed its threshold (0 if it did not bind).
	SlotLambda []float64
	Value      []float64 // V(tau) per page
	// Selected are the pages to crawl now, highest value first.
	Selected []int32
	// Per host: candidates (V >= lambda_0), cap for the slot, selected.
	HostCandidates, HostCap, HostSelected []int
	// GlobalCap is the slot's global cap (-1: none); GlobalCut the value of
	// the best page the global cap left out (0: none).
	GlobalCap int
	GlobalCut float64
	// Estimated tells whether lambda_0 was estimated from the pages.
	Estimated bool
	// Carries to keep for the next slot.
	HostCarry   []float64
	GlobalCarry float64
}

const unlimited = math.MaxInt

// Rank plans one slot the article's way: each page's crawl value V(tau)
// is compared with lambda_0; each host takes its candidates in decreasing
// value up to its limit for the slot (its lambda_i is implicit: the value
// where its limit cut), and the crawler takes the best of those up to its
// own limit. lambda_0 is the static multiplier of the global limit,
// sum_i min(k_i, U_i(lambda_0)) = k_0, which needs no lambda_i: constrained
// hosts count with their k_i, the others with their pages' optimal rates.
func Rank(ps *Pages, opt RankOptions) (*RankResult, error) {
	n := ps.Len()
	nh := len(ps.HostNames)
	res := &RankResult{Value: make([]float64, n), SlotLambda: make([]float64, nh),
		HostCandidates: make([]int, nh), HostCap: make([]int, nh), HostSelected: make([]int, nh),
		HostCarry: make([]float64, nh), GlobalCap: -1}
	rate := opt.Rate
	if opt.N > 0 && opt.Slot > 0 {
		rate = float64(opt.N) / opt.Slot
	}
	sopt := SolveOptions{SkipRates: true, SkipHosts: !opt.Static, Lambda0: opt.Lambda0, FixLambda0: opt.FixLambda0, Smooth: opt.Smooth}
	if !(rate > 0) || math.IsInf(rate, 1) {
		sopt.FixLambda0 = true // no global limit: lambda_0 is 0 unless given
	}
	sol, err := Solve(ps.Problem(opt.Objective, rate), sopt)
	if err != nil {
		return nil, err
	}
	res.Lambda0 = sol.Lambda0
	res.StaticLambda = sol.HostLambda
	res.Estimated = !sopt.FixLambda0

	// Candidates grouped by host (a counting sort keeps input order).
	start := make([]int, nh+1)
	for j := 0; j < n; j++ {
		w, d, tau := ps.W[j], ps.Delta[j], ps.Tau[j]
		if opt.CandidateValues && opt.Objective.below(w, d, tau, res.Lambda0) {
			continue // Value 0: not a candidate
		}
		v := opt.Objective.Value(w, d, tau)
		res.Value[j] = v
		if v > 0 && v >= res.Lambda0 {
			res.HostCandidates[ps.Host[j]]++
		}
	}
	for h := 0; h < nh; h++ {
		start[h+1] = start[h] + res.HostCandidates[h]
	}
	// Each candidate carries its value, so that the selections below
	// compare neighbouring memory, not values scattered over the pages.
	cand := make([]pageValue, start[nh])
	next := slices.Clone(start[:nh])
	for j := 0; j < n; j++ {
		if v := res.Value[j]; v > 0 && v >= res.Lambda0 {
			h := ps.Host[j]
			cand[next[h]] = pageValue{v: v, j: int32(j)}
			next[h]++
		}
	}
	sel := make([]pageValue, 0, len(cand))
	for h := 0; h < nh; h++ {
		hc := cand[start[h]:start[h+1]]
		capacity := unlimited
		if k := ps.HostRate[h]; !math.IsInf(k, 1) {
			allowed := k*opt.Slot + carryOf(opt.HostCarry, h)
			capacity = int(math.Floor(allowed + 1e-9))
			res.HostCarry[h] = math.Max(0, allowed-float64(capacity))
		}
		res.HostCap[h] = capacity
		if len(hc) > capacity {
			// The best capacity in any order (sel is sorted below), and
			// the next best, whose value is the slot's lambda.
			selectK(hc, capacity, byValue)
			res.SlotLambda[h] = hc[capacity].v - res.Lambda0
			hc = hc[:capacity]
		}
		sel = append(sel, hc...)
	}
	gcap := unlimited
	switch {
	case opt.N > 0:
		gcap = opt.N
	case opt.Rate > 0 && !math.IsInf(opt.Rate, 1):
		allowed := opt.Rate*opt.Slot + opt.GlobalCarry
		gcap = int(math.Floor(allowed + 1e-9))
		res.GlobalCarry = math.Max(0, allowed-float64(gcap))
	}
	if gcap != unlimited {
		res.GlobalCap = gcap
	}
	if len(sel) > gcap {
		selectK(sel, gcap, byValue)
		res.GlobalCut = sel[gcap].v
		sel = sel[:gcap]
	}
	slices.SortFunc(sel, byValue)
	res.Selected = make([]int32, len(sel))
	for i, c := range sel {
		res.Selected[i] = c.j
		res.HostSelected[ps.Host[c.j]]++
	}
	return res, nil
}

// below tells, without an exponential, whether Value(w, delta, tau) is
// surely under lambda0: both units, g(x) = 1 - (1+x)e^-x and
// h(x) = x - 1 + e^-x, are at most x^2/2 (their slopes are at most x),
// and g is under 1. The margin of 1e-9 is far over the rounding of the
// computed values (their relative error is under 1e-11 where x >= 0.01,
// and the series below is under x^2/2 term by term).
func (o Objective) below(w, delta, tau, lambda0 float64) bool {
	if !(tau > 0) || math.IsInf(tau, 1) || !(lambda0 > 0) {
		return false
	}
	x := delta * tau
	u := x * x / 2
	if o == Freshness && u > 1 {
		u = 1
	}
	return w/delta*u*(1+1e-9) < lambda0
}

// A pageValue is a candidate page and its crawl value.
type pageValue struct {
	v float64
	j int32
}

// byValue orders candidates by decreasing value, then by index: a strict
// total order, so that the selection does not depend on the input order.
func byValue(a, b pageValue) int {
	if c := cmp.Compare(b.v, a.v); c != 0 {
		return c
	}
	return cmp.Compare(a.j, b.j)
}

func carryOf(c []float64, h int) float64 {
	if h < len(c) {
		return c[h]
	}
	return 0
}

// Threshold returns host h's steady-state threshold lambda_0 + lambda_i.
func (r *RankResult) Threshold(h int32) float64 { return r.Lambda0 + r.StaticLambda[h] }

// NextFetch returns, for a page not selected, the days from now until its
// crawl value reaches its host's steady-state threshold: 0 when it already
// has (the limits of this slot left it out), +Inf when it never will.
func (r *RankResult) NextFetch(ps *Pages, obj Objective, j int) float64 {
	th := r.Threshold(ps.Host[j])
	if r.Value[j] >= th {
		return 0
	}
	iv := obj.Interval(ps.W[j], ps.Delta[j], th)
	if math.IsInf(iv, 1) {
		return iv
	}
	return math.Max(0, iv-ps.Tau[j])
}
