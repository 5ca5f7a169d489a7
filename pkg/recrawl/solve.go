package recrawl

import (
	"errors"
	"math"
)

// A Problem is the static recrawl problem: maximise the weighted objective
// over crawl rates rho_j subject to sum over host i of rho_j <= HostRate[i]
// and the sum over all pages <= Rate.
type Problem struct {
	Objective Objective
	W         []float64 // page weights, > 0
	Delta     []float64 // page change rates per day, > 0
	Host      []int32   // page -> host index into HostRate
	HostRate  []float64 // k_i per day; +Inf for a host without a limit
	Rate      float64   // k_0 per day; +Inf (or 0) for no global limit
}

// A Solution holds the optimal multipliers and rates.
type Solution struct {
	Lambda0    float64   // the global multiplier lambda_0
	HostLambda []float64 // lambda_i per host; 0 for an unconstrained host
	// Rate is the optimal crawl rate per page (per day); 0 for a page never
	// worth crawling (w/delta <= lambda_0 + lambda_i).
	Rate []float64
	// Never counts the pages with rate 0.
	Never int
	// Passes counts passes over the pages, for the O(n log 1/eps) claim.
	Passes int
}

// Threshold returns lambda_0 + lambda_i for host i.
func (s *Solution) Threshold(host int32) float64 { return s.Lambda0 + s.HostLambda[host] }

// ErrUnbounded is returned when no limit bounds the crawl rates.
var ErrUnbounded = errors.New("no limit bounds the crawl: give a global rate or a rate limit for every host")

// SolveOptions tune Solve.
type SolveOptions struct {
	// FixLambda0 uses Lambda0 instead of solving for the global multiplier
	// (a value reduced from shard summaries, or kept from an earlier run).
	Lambda0    float64
	FixLambda0 bool
	// SkipRates leaves Solution.Rate nil (rank needs only the multipliers);
	// SkipHosts also leaves every lambda_i at 0 (rank needs only lambda_0
	// unless it reports the steady-state thresholds).
	SkipRates, SkipHosts bool
	// Tol is the tolerance on ln(multiplier) (default 1e-9).
	Tol float64
	// Smooth, if set, maps the solved lambda_0 to the one used (rank blends
	// it with the previous run's value from its state file).
	Smooth func(lambda0 float64) float64
}

// Solve finds the exact static optimum by nested bisection on the
// multipliers. The nesting is decoupled: a host either is unconstrained or
// uses exactly k_i, so lambda_0 solves sum_i min(k_i, U_i(lambda_0)) = k_0,
// where U_i(mu) is host i's total optimal rate at threshold mu; then every
// host over its limit at lambda_0 solves U_i(lambda_0 + lambda_i) = k_i on its
// own pages. All hosts are solved together, one sequential pass over the
// pages per step. Each root is bracketed in ln(mu) and refined by Newton
// steps (the derivative comes free with each page's inverse), falling back
// to bisection whenever a step leaves the bracket, so the cost is
// O(n log(1/eps)) with a small constant: a few tens of passes.
func Solve(p *Problem, opt SolveOptions) (*Solution, error) {
	n := len(p.W)
	if len(p.Delta) != n || len(p.Host) != n {
		return nil, errors.New("recrawl: W, Delta and Host differ in length")
	}
	tol := opt.Tol
	if tol <= 0 {
		tol = 1e-9
	}
	nh := len(p.HostRate)
	s := &Solution{HostLambda: make([]float64, nh)}
	ev := newEvaluator(p)

	limitedSum, allLimited := 0.0, true
	for _, k := range p.HostRate {
		if math.IsInf(k, 1) {
			allLimited = false
		} else {
			limitedSum += k
		}
	}
	globalLimited := p.Rate > 0 && !math.IsInf(p.Rate, 1)

	switch {
	case opt.FixLambda0:
		s.Lambda0 = math.Max(0, opt.Lambda0)
	case n == 0:
	case allLimited && (!globalLimited || limitedSum <= p.Rate):
		s.Lambda0 = 0 // host limits bind before the global one
	case !globalLimited:
		return nil, ErrUnbounded
	default:
		s.Lambda0 = solveLambda0(p, ev, tol, false)
		if opt.Smooth != nil {
			s.Lambda0 = math.Max(0, opt.Smooth(s.Lambda0))
		}
	}
	if n == 0 {
		return s, nil
	}
	if s.Lambda0 == 0 && !allLimited && !opt.FixLambda0 {
		return nil, ErrUnbounded
	}

	if opt.SkipHosts {
		s.Passes = ev.passes
		return s, nil
	}
	// Host multipliers: the hosts over their limit at lambda_0 each solve
	// their own equation, all in the same passes. The pass at lambda_0 is
	// each root's first step.
	if ev.lastMu != s.Lambda0 {
		ev.evalAll(s.Lambda0)
	}
	roots := make([]*root, nh)
	active := make([]bool, nh)
	mus := make([]float64, nh)
	left := 0
	for i, u := range ev.sum {
		if k := p.HostRate[i]; u > k*(1+1e-12) {
			r := newRoot(k, ev.hostMax[i], tol)
			if s.Lambda0 > 0 {
				r.u = math.Log(s.Lambda0)
				r.step(u, ev.slope[i])
			}
			roots[i] = r
			active[i] = true
			left++
		}
	}
	// From here on only the pages of the active hosts are visited, in
	// increasing index order (a sequential, prefetch-friendly walk).
	var list []int32
	if left > 0 {
		list = ev.pagesOf(active, n)
	}
	for left > 0 {
		for i, r := range roots {
			if active[i] {
				mus[i] = math.Exp(r.u)
			}
		}
		ev.evalList(mus, list)
		for i, r := range roots {
			if !active[i] {
				continue
			}
			r.step(ev.sum[i], ev.slope[i])
			if r.done {
				active[i] = false
				left--
				s.HostLambda[i] = math.Max(0, math.Exp(r.best())-s.Lambda0)
			}
		}
		if left > 0 {
			list = ev.prune(list, active)
		}
	}
	s.Passes = ev.passes
	if opt.SkipRates {
		return s, nil
	}
	s.Rate = make([]float64, n)
	use := make([]float64, nh)
	var edge []int32
	for j := 0; j < n; j++ {
		h := p.Host[j]
		mu := s.Lambda0 + s.HostLambda[h]
		y := mu * p.Delta[j] / p.W[j]
		x := p.Objective.unitInverse(y, ev.x[j])
		if math.IsInf(x, 1) {
			if y < 1+4*tol {
				edge = append(edge, int32(j))
			}
			continue
		}
		s.Rate[j] = p.Delta[j] / x
		use[h] += s.Rate[j]
	}
	if len(edge) > 0 {
		fillEdge(p, s, use, edge, globalLimited)
	}
	for _, r := range s.Rate {
		if r == 0 {
			s.Never++
		}
	}
	return s, nil
}

// fillEdge gives the budget left over to the pages whose w/delta equals
// their threshold to within the solver's tolerance. In exact arithmetic
// such a page takes any rate between 0 and delta/36, where V(1/rate) is
// still the threshold to 1e-15; in float64 its rate jumps from delta/36 to
// 0, which would leave part of a host's (or the crawler's) budget unused.
func fillEdge(p *Problem, s *Solution, use []float64, edge []int32, globalLimited bool) {
	const edgeX = 34 // g(34) = 1 - 35 e^-34: 1 to float64 precision
	give := func(j int32, budget float64) float64 {
		r := math.Min(p.Delta[j]/edgeX, budget)
		if r <= 0 {
			return 0
		}
		s.Rate[j] += r
		use[p.Host[j]] += r
		return r
	}
	for _, j := range edge {
		h := p.Host[j]
		if s.HostLambda[h] > 0 {
			give(j, p.HostRate[h]-use[h])
		}
	}
	if !globalLimited || s.Lambda0 == 0 {
		return
	}
	left := p.Rate
	for h, u := range use {
		left -= math.Min(u, p.HostRate[h])
	}
	for _, j := range edge {
		h := p.Host[j]
		if s.HostLambda[h] == 0 && left > 0 {
			left -= give(j, math.Min(left, p.HostRate[h]-use[h]))
		}
	}
}

// sampleSize is the size of the systematic sample whose lambda_0 starts
// the full solve: Newton then needs only a few passes over all pages.
const sampleSize = 100_000

// roughResidual is the relative residual of the global budget under which
// solveLambda0 leaves rough passes for exact ones.
const roughResidual = 1e-3

// exactOnly makes every pass exact (a test compares the two).
var exactOnly = false

// solveLambda0 solves sum_i min(k_i, U_i(mu)) = k_0 for mu. With rough, or
// while the residual is over roughResidual, each page's rate comes from
// one Halley step from its last inverse: one exp a page, its error the
// cube of the warm start's, far below a residual of 1e-3. The exact passes
// that follow restart the search from where the rough ones ended, so the
// result does not depend on the rough rates.
func solveLambda0(p *Problem, ev *evaluator, tol float64, rough bool) float64 {
	n := len(p.W)
	r := newRoot(p.Rate, ev.maxRatio, tol)
	// The global budget met to 1e-8 is plenty (k_0 is itself an estimate);
	// near the root the slope is noisy where hosts switch between bound
	// and free, so Newton would otherwise finish by bisection.
	r.rtol = 1e-8
	if nh := len(p.HostRate); n > 4*sampleSize && nh >= 100 {
		// Every m-th host with all its pages stands for m hosts: each
		// sampled host's min(k_i, U_i) is exact, so scaling the global
		// rate by the share of hosts kept is unbiased.
		m := int32(max(2, n/sampleSize))
		sub := &Problem{Objective: p.Objective, HostRate: p.HostRate}
		kept := 0
		for h := range p.HostRate {
			if int32(h)%m == 0 {
				kept++
			}
		}
		sub.Rate = p.Rate * float64(kept) / float64(nh)
		// The columns made at their size: grown by appending, they were
		// copied a few times over (1% of rank's time).
		count := 0
		for _, h := range p.Host {
			if h%m == 0 {
				count++
			}
		}
		sub.W, sub.Delta, sub.Host = make([]float64, 0, count), make([]float64, 0, count), make([]int32, 0, count)
		for j, h := range p.Host {
			if h%m == 0 {
				sub.W = append(sub.W, p.W[j])
				sub.Delta = append(sub.Delta, p.Delta[j])
				sub.Host = append(sub.Host, h)
			}
		}
		if len(sub.W) > 0 && len(sub.W) < n/2 {
			sev := newEvaluator(sub)
			if guess := solveLambda0(sub, sev, 1e-3, true); guess > 0 && !math.IsInf(guess, 0) {
				r.u = math.Log(guess)
			}
		}
	}
	ev.rough = !exactOnly
	defer func() { ev.rough = false }()
	for !r.done {
		mu := math.Exp(r.u)
		ev.evalAll(mu)
		f, df := 0.0, 0.0
		for i, u := range ev.sum {
			if k := p.HostRate[i]; u >= k {
				f += k
			} else {
				f += u
				df += ev.slope[i]
			}
		}
		r.step(f, df)
		if ev.rough && !rough && math.Abs(f/p.Rate-1) < roughResidual {
			// Close: from here on exact passes, the search begun afresh
			// at the next point (the rough bracket may be a little off).
			ev.rough = false
			r.restart()
		}
	}
	return math.Exp(r.best())
}

// evaluator computes per-host optimal rate sums and their slopes in ln(mu),
// keeping each page's last inverse as the next warm start.
type evaluator struct {
	p        *Problem
	rough    bool      // one Halley step a page (see solveLambda0)
	x        []float64 // warm starts: delta * interval per page
	ex       []float64 // Freshness: e^-x of each warm start, so that a warm pass needs no exp
	sum      []float64 // per host: sum of rates
	slope    []float64 // per host: d sum / d ln(mu)
	hostMax  []float64 // per host: max w/delta (+Inf for harmonic)
	maxRatio float64
	passes   int
	lastMu   float64 // the threshold of the last evalAll
}

func newEvaluator(p *Problem) *evaluator {
	nh := len(p.HostRate)
	ev := &evaluator{p: p, x: make([]float64, len(p.W)), sum: make([]float64, nh),
		slope: make([]float64, nh), hostMax: make([]float64, nh), lastMu: math.NaN()}
	if p.Objective == Freshness {
		ev.ex = make([]float64, len(p.W))
	}
	for j := range p.W {
		r := p.W[j] / p.Delta[j]
		if h := p.Host[j]; r > ev.hostMax[h] {
			ev.hostMax[h] = r
		}
		ev.maxRatio = math.Max(ev.maxRatio, r)
	}
	if p.Objective == Harmonic {
		ev.maxRatio = math.Inf(1)
		for i := range ev.hostMax {
			ev.hostMax[i] = math.Inf(1)
		}
	}
	return ev
}

// page returns the rate of page j at threshold mu and its slope in ln(mu).
func (ev *evaluator) page(j int, mu float64) (rate, slope float64) {
	p := ev.p
	d, w := p.Delta[j], p.W[j]
	y := mu * d / w
	if !(y > 0) {
		return math.Inf(1), 0
	}
	if p.Objective == Harmonic {
		x, e := harmonicInverseD(y, ev.x[j])
		ev.x[j] = x
		return d / x, -y * d / (x * x * (1 - e))
	}
	if y >= 1 {
		return 0, 0 // never worth crawling; keep the old warm start
	}
	acc := exactAcc
	if ev.rough {
		acc = math.Inf(1)
	}
	x := ev.x[j]
	if x > 0 && x < 0.5*math.MaxFloat64 {
		if nx, e, ok := freshWarm(y, x, ev.ex[j], acc); ok {
			ev.x[j], ev.ex[j] = nx, e
			return d / nx, -y * d / (nx * nx * nx * e)
		}
	} else if ev.rough && x == 0 {
		// A cold start in a rough pass: the table's guess, within 1e-6,
		// is plenty, with e^-x from g(x) = y, (1+x)e^-x = 1-y. Its exact
		// e^-x is left to the next pass (0: not known).
		if x := freshGuess(y); x > 0 && x < 0.5*math.MaxFloat64 {
			ev.x[j], ev.ex[j] = x, 0
			return d / x, -y * d * (1 + x) / (x * x * x * (1 - y))
		}
	}
	x, e := freshInverseD(y, ev.x[j], acc)
	ev.x[j], ev.ex[j] = x, e
	return d / x, -y * d / (x * x * x * e)
}

// freshWarm is freshInverseD from a warm start x whose e^-x is known: the
// common page of a pass, which then costs no exp. It fails (ok false) where
// freshInverseD would start afresh or fall back to a Newton step.
func freshWarm(y, x, e, acc float64) (nx, e2 float64, ok bool) {
	if e == 0 {
		e = math.Exp(-x) // after a rough cold start
	}
	g := 1 - (1+x)*e
	if x < 0.01 {
		g = freshUnit(x)
	}
	if g > 2*y || g < y/2 || 1-g > 2*(1-y) || 1-g < (1-y)/2 {
		return 0, 0, false
	}
	f := g - y
	d1 := x * e
	d2 := (1 - x) * e
	den := 2*d1*d1 - f*d2
	if !(den > 0) {
		return 0, 0, false
	}
	nx = x - 2*f*d1/den
	if !(nx > 0) {
		return 0, 0, false
	}
	if dx := nx - x; math.Abs(dx) <= acc*x {
		return nx, expStep(e, dx, nx), true
	}
	nx, e2 = freshHalley(y, nx, acc, true, 1)
	return nx, e2, true
}

func (ev *evaluator) evalAll(mu float64) {
	ev.passes++
	ev.lastMu = mu
	clear(ev.sum)
	clear(ev.slope)
	if ev.p.Objective == Freshness {
		ev.evalFresh(mu)
		return
	}
	for j, h := range ev.p.Host {
		r, sl := ev.page(j, mu)
		ev.sum[h] += r
		ev.slope[h] += sl
	}
}

// evalFresh is evalAll's loop for Freshness, with the common page (a warm
// start that one Halley step brings within the accuracy asked) done in
// line: the same operations in the same order as page and freshInverseD,
// so the same bits, without two calls a page. Any other page goes through
// page.
func (ev *evaluator) evalFresh(mu float64) {
	p := ev.p
	w, delta, xs, es, sum, slope := p.W, p.Delta, ev.x, ev.ex, ev.sum, ev.slope
	acc := exactAcc
	if ev.rough {
		acc = math.Inf(1)
	}
	w = w[:len(p.Host)]
	delta = delta[:len(p.Host)]
	xs = xs[:len(p.Host)]
	es = es[:len(p.Host)]
	for j, h := range p.Host {
		d := delta[j]
		y := mu * d / w[j]
		if y >= 1 {
			// Never worth crawling: page's rate and slope 0, which leave
			// the sums as they are; the old warm start is kept.
			continue
		}
		if x := xs[j]; y > 0 && x > 0 && x < 0.5*math.MaxFloat64 {
			e := es[j]
			if e == 0 {
				e = math.Exp(-x) // after a rough cold start
			}
			g := 1 - (1+x)*e
			if x < 0.01 {
				g = freshUnit(x)
			}
			if !(g > 2*y || g < y/2 || 1-g > 2*(1-y) || 1-g < (1-y)/2) {
				f := g - y
				d1 := x * e
				d2 := (1 - x) * e
				if den := 2*d1*d1 - f*d2; den > 0 {
					nx := x - 2*f*d1/den
					if nx > 0 {
						var e2 float64
						if dx := nx - x; math.Abs(dx) <= acc*x {
							// expStep, in line.
							if math.Abs(dx) <= 0.01 {
								e2 = expSeries(e, dx)
							} else {
								e2 = math.Exp(-nx)
							}
						} else {
							// Not yet: freshInverseD's next steps.
							nx, e2 = freshHalley(y, nx, acc, true, 1)
						}
						xs[j], es[j] = nx, e2
						sum[h] += d / nx
						slope[h] += -y * d / (nx * nx * nx * e2)
						continue
					}
				}
			}
		}
		r, sl := ev.page(j, mu)
		sum[h] += r
		slope[h] += sl
	}
}

// pagesOf lists the pages of the active hosts, so that the last steps of
// the few slow hosts do not scan every page.
func (ev *evaluator) pagesOf(active []bool, n int) []int32 {
	count := 0
	for _, h := range ev.p.Host {
		if active[h] {
			count++
		}
	}
	list := make([]int32, 0, count)
	for j, h := range ev.p.Host {
		if active[h] {
			list = append(list, int32(j))
		}
	}
	return list
}

func (ev *evaluator) prune(list []int32, active []bool) []int32 {
	out := list[:0]
	for _, j := range list {
		if active[ev.p.Host[j]] {
			out = append(out, j)
		}
	}
	return out
}

func (ev *evaluator) evalList(mu []float64, list []int32) {
	ev.passes++
	ev.lastMu = -1
	for _, j := range list {
		h := ev.p.Host[j]
		ev.sum[h], ev.slope[h] = 0, 0
	}
	for _, j := range list {
		h := ev.p.Host[j]
		r, sl := ev.page(int(j), mu[h])
		ev.sum[h] += r
		ev.slope[h] += sl
	}
}

// A root finds u = ln(mu) with f(mu) = target for f decreasing from +Inf at
// mu = 0 to 0 at mu = hi (hi may be +Inf). It keeps a bracket [a, b] with
// f(a) > target >= f(b) and takes Newton steps inside it, bisecting when a
// step would leave the bracket or fails to halve the residual.
type root struct {
	target, tol  float64
	rtol         float64 // relative residual that ends the search
	u            float64
	a, b         float64
	hasA, hasB   bool
	lastG        float64
	done         bool
	steps        int
	bestU        float64 // the last u with f <= target: never over a limit
	hasBest      bool
	maxExpansion float64
	hi           float64 // as given to newRoot
}

func newRoot(target, hi, tol float64) *root {
	r := &root{target: target, tol: tol, rtol: 1e-10, lastG: math.Inf(1), maxExpansion: math.Log(1e3), hi: hi}
	if !math.IsInf(hi, 1) && hi > 0 {
		r.b, r.hasB = math.Log(hi), true
		r.bestU, r.hasBest = r.b, true
		r.u = r.b - math.Log(100)
	}
	return r
}

func (r *root) step(f, df float64) {
	r.steps++
	// Newton runs on ln f - ln target: a host's total rate is close to a
	// power of mu (rho ~ mu^(-1/2) for small mu), so in log-log it is
	// nearly a line and Newton lands in two or three steps even from far.
	g := math.Log(f) - math.Log(r.target)
	df /= f
	if g <= 0 {
		r.b, r.hasB = r.u, true
		r.bestU, r.hasBest = r.u, true
		if -g <= r.rtol {
			r.done = true
			return
		}
	} else {
		r.a, r.hasA = r.u, true
	}
	if r.hasA && r.hasB && r.b-r.a <= r.tol || r.steps > 300 {
		r.done = true
		return
	}
	next := math.NaN()
	if df < 0 && !math.IsInf(df, 0) && math.Abs(g) < 0.5*math.Abs(r.lastG) {
		next = r.u - g/df
	} else if df < 0 && !math.IsInf(df, 0) && r.steps == 1 {
		next = r.u - g/df
	}
	r.lastG = g
	switch {
	case r.hasA && r.hasB:
		if !(next > r.a && next < r.b) {
			next = (r.a + r.b) / 2
		}
	case r.hasA: // root above a
		if !(next > r.u) || next > r.u+r.maxExpansion {
			next = r.u + r.maxExpansion
		}
	default: // root below b
		if !(next < r.u) || next < r.u-r.maxExpansion {
			next = r.u - r.maxExpansion
		}
	}
	if math.Abs(next-r.u) <= r.tol/4 {
		// A tiny Newton step with a residual still large means a nearly
		// vertical slope (a page at its w/delta): bisect instead.
		switch {
		case r.hasA && r.hasB:
			next = (r.a + r.b) / 2
		case g > 0:
			next = r.u + r.tol
		default:
			next = r.u - r.tol
		}
	}
	r.u = next
}

// restart forgets the bracket and the steps, keeping u: the search starts
// afresh from there.
func (r *root) restart() {
	fresh := newRoot(r.target, r.hi, r.tol)
	fresh.rtol, fresh.u = r.rtol, r.u
	*r = *fresh
}

// best returns the root, on the side where f <= target.
func (r *root) best() float64 {
	if r.hasBest {
		return r.bestU
	}
	return r.u
}

// exactAcc ends an exact pass's Halley steps for a page: a step under
// exactAcc*x leaves an error of about exactAcc^3 (Halley converges
// cubically), 1e-9 of the rate, well under the 1e-8 to which the budget
// is met.
const exactAcc = 1e-3
