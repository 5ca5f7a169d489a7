// Package sim is a discrete-event simulator of recrawl policies: pages with
// Poisson changes drawn from a seed, per-host and global crawl limits, and a
// crawler that decides slot by slot what to fetch. It measures what the
// recrawl tool claims: time-averaged weighted freshness (or harmonic
// staleness) per policy, and how volatile each host's crawl rate is.
//
// Freshness is accounted exactly in expectation: between two crawls a gap
// apart, a page with change rate delta is fresh for (1 - e^(-delta gap))/delta
// days on average, so the score has no sampling noise from the change
// process. Changes are still drawn (the crawler sees "changed since the last
// fetch" with probability 1 - e^(-delta gap)) because the adaptive and the
// estimating policies learn from them.
package sim

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/sekitei/crawlkit/pkg/recrawl"
)

// Policies the simulator knows.
const (
	Threshold    = "threshold"    // crawl value >= lambda_0, best first within the limits (the article)
	Static       = "static"       // the static optimum's intervals, most overdue first
	StaticPlan   = "static-plan"  // the static optimum's schedule as planned: host limits hold on average only
	Uniform      = "uniform"      // one interval for every page, within the limits
	Proportional = "proportional" // crawl rate proportional to the change rate
	Nutch        = "nutch"        // Nutch AdaptiveFetchSchedule: x0.8 on change, x1.4 otherwise
	Estimated    = "estimated"    // threshold with change rates estimated from its own fetches
)

// AllPolicies lists every policy in report order. StaticPlan is left out:
// it breaks the host limits by design and is asked for by name.
var AllPolicies = []string{Threshold, Static, Uniform, Proportional, Nutch, Estimated}

// Scenarios.
const (
	Steady  = "steady"  // every page in its steady state at the start
	NewHost = "newhost" // plus a new host whose pages were all crawled the day before
	Halving = "halving" // host 0's limit halves half-way through
)

// Config describes a simulated world and run.
type Config struct {
	Seed         uint64
	Hosts        int     // hosts (default 20)
	PagesPerHost int     // pages per host (default 50)
	Rate         float64 // global crawls per day (default: a third of the pages' total change rate)
	Days         float64 // horizon (default 60)
	Warmup       float64 // days not measured (default 10; 0 for newhost)
	Slot         float64 // slot length in days (default 1/24)
	Window       float64 // window for per-host rates in days (default 1)
	Objective    recrawl.Objective
	Scenario     string
	// Prior for the estimating policy (default 0.5 a day worth 2 days).
	Prior recrawl.Prior
}

// HostStats describes one host's crawl over the measured period.
type HostStats struct {
	Name   string
	Score  float64 // the host's weighted freshness or harmonic staleness
	Crawls int
	Mean   float64 // crawls per day
	Peak   float64 // the busiest window, in crawls per day
	CV     float64 // coefficient of variation of the per-window crawl counts
	Limit  float64 // the host's limit at the start (crawls per day)
}

// A Result is one policy's outcome.
type Result struct {
	Policy string
	// Score is the weighted time-averaged freshness (higher is better) or,
	// for the harmonic objective, harmonic staleness (lower is better).
	Score  float64
	Crawls int
	// HostCV is the mean over hosts of the CV of per-window crawl counts;
	// MaxPeak the highest window rate of any host relative to its limit.
	HostCV  float64
	MaxPeak float64
	// Starved counts the pages never crawled during the run.
	Starved int
	// Focus is the scenario's host: the new one, the halved one, or host 0.
	Focus HostStats
	// Hosts has every host's statistics, in host order.
	Hosts []HostStats
}

// World is the generated set of pages; Optimum the analytic score of the
// static optimum (what no policy can beat in the steady state).
type World struct {
	cfg      Config
	W, Delta []float64
	Host     []int32
	Limit    []float64 // per host, at the start
	Rate     float64
	Names    []string
	Last0    []float64 // last crawl time at the start (days, <= 0)
	focus    int32
	sol      *recrawl.Solution
	Optimum  float64
	Lambda0  float64
	interval []float64 // static optimum intervals
}

func (c *Config) defaults() {
	if c.Hosts <= 0 {
		c.Hosts = 20
	}
	if c.PagesPerHost <= 0 {
		c.PagesPerHost = 50
	}
	if c.Days <= 0 {
		c.Days = 60
	}
	if c.Warmup < 0 || c.Warmup >= c.Days {
		c.Warmup = 0
	}
	if c.Slot <= 0 {
		c.Slot = 1.0 / 24
	}
	if c.Window <= 0 {
		c.Window = 1
	}
	if c.Scenario == "" {
		c.Scenario = Steady
	}
	if c.Prior.Rate <= 0 {
		c.Prior = recrawl.Prior{Rate: 0.5, Days: 2}
	}
}

// NewWorld draws the pages of a config.
func NewWorld(cfg Config) (*World, error) {
	cfg.defaults()
	switch cfg.Scenario {
	case Steady, NewHost, Halving:
	default:
		return nil, fmt.Errorf("scenario %q: want steady, newhost or halving", cfg.Scenario)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x7ec7a11))
	w := &World{cfg: cfg}
	sumDelta := 0.0
	for h := 0; h < cfg.Hosts; h++ {
		w.Names = append(w.Names, fmt.Sprintf("host%d.example", h))
		for j := 0; j < cfg.PagesPerHost; j++ {
			w.W = append(w.W, math.Exp(0.7*rng.NormFloat64()))
			d := 0.05 * math.Exp(rng.Float64()*math.Log(100)) // 0.05 .. 5 a day
			w.Delta = append(w.Delta, d)
			w.Host = append(w.Host, int32(h))
			sumDelta += d
		}
	}
	n := len(w.W)
	w.Rate = cfg.Rate
	if w.Rate <= 0 {
		w.Rate = sumDelta / 3
	}
	// Host limits: a share of the global rate between 0.3x and 3x the
	// host's page share, so that some hosts bind and others do not.
	for h := 0; h < cfg.Hosts; h++ {
		f := math.Exp(math.Log(0.3) + rng.Float64()*math.Log(10))
		w.Limit = append(w.Limit, w.Rate*float64(cfg.PagesPerHost)/float64(n)*f)
	}
	w.focus = 0
	if cfg.Scenario == NewHost {
		// A new host of undifferentiated pages (same weight and change
		// rate), whose limit binds in the steady state.
		w.focus = int32(cfg.Hosts)
		w.Names = append(w.Names, "new.example")
		m := cfg.PagesPerHost
		for j := 0; j < m; j++ {
			w.W = append(w.W, 1)
			w.Delta = append(w.Delta, 0.5)
			w.Host = append(w.Host, w.focus)
		}
		w.Limit = append(w.Limit, math.Inf(1))
		// Its limit: half of what it would take at the global threshold.
		sol, err := w.solve(w.Limit)
		if err != nil {
			return nil, err
		}
		w.Limit[w.focus] = 0.5 * float64(m) * recrawl.Freshness.Rate(1, 0.5, sol.Lambda0)
		if cfg.Objective == recrawl.Harmonic {
			w.Limit[w.focus] = 0.5 * float64(m) * recrawl.Harmonic.Rate(1, 0.5, sol.Lambda0)
		}
	}
	sol, err := w.solve(w.Limit)
	if err != nil {
		return nil, err
	}
	w.sol, w.Lambda0 = sol, sol.Lambda0
	w.interval = make([]float64, len(w.W))
	totalW, score := 0.0, 0.0
	for j, r := range sol.Rate {
		w.interval[j] = 1 / r // +Inf for rate 0
		totalW += w.W[j]
		score += w.W[j] * cfg.Objective.Score(w.Delta[j], w.interval[j])
	}
	w.Optimum = score / totalW
	// Start in the steady state: each page at a uniform phase of its
	// optimal interval (never-crawled pages at a phase of 10/delta).
	w.Last0 = make([]float64, len(w.W))
	for j := range w.W {
		iv := w.interval[j]
		if math.IsInf(iv, 1) {
			iv = 10 / w.Delta[j]
		}
		w.Last0[j] = -rng.Float64() * iv
		if w.Host[j] == w.focus && cfg.Scenario == NewHost {
			w.Last0[j] = -rng.Float64() // all crawled during the last day
		}
	}
	return w, nil
}

func (w *World) solve(limit []float64) (*recrawl.Solution, error) {
	return recrawl.Solve(&recrawl.Problem{Objective: w.cfg.Objective, W: w.W, Delta: w.Delta,
		Host: w.Host, HostRate: limit, Rate: w.Rate}, recrawl.SolveOptions{})
}

// Pages returns the number of pages.
func (w *World) Pages() int { return len(w.W) }

// Run simulates the policies on the world; each gets the same seed for the
// change observations.
func (w *World) Run(policies []string) ([]Result, error) {
	var out []Result
	for _, p := range policies {
		r, err := w.run(p)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// limitAt is host h's limit at time t (the halving scenario halves host 0).
func (w *World) limitAt(h int, t float64) float64 {
	k := w.Limit[h]
	if w.cfg.Scenario == Halving && h == int(w.focus) && t >= w.cfg.Days/2 {
		return k / 2
	}
	return k
}

// fixedRates water-fills the budget: page j gets min(c*base_j, host cap
// share) with c found by bisection so the total is the global rate.
func (w *World) fixedRates(base []float64) []float64 {
	nh := len(w.Limit)
	hostBase := make([]float64, nh)
	for j, b := range base {
		hostBase[w.Host[j]] += b
	}
	rates := func(c float64) ([]float64, float64) {
		r := make([]float64, len(base))
		total := 0.0
		for j, b := range base {
			h := w.Host[j]
			f := math.Min(c, w.Limit[h]/hostBase[h])
			r[j] = f * b
			total += r[j]
		}
		return r, total
	}
	lo, hi := 0.0, 1.0
	for _, t := rates(hi); t < w.Rate && hi < 1e12; _, t = rates(hi) {
		hi *= 2
	}
	for i := 0; i < 100; i++ {
		mid := (lo + hi) / 2
		if _, t := rates(mid); t < w.Rate {
			lo = mid
		} else {
			hi = mid
		}
	}
	r, _ := rates(lo)
	return r
}

type pageState struct {
	last     float64
	interval float64 // schedule-based policies
	// estimation
	gaps    []float64
	changed []bool
	delta   float64 // the policy's belief about the change rate
}

func (w *World) run(policy string) (Result, error) {
	cfg := w.cfg
	n := len(w.W)
	nh := len(w.Limit)
	obj := cfg.Objective
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xc4a9e5))
	st := make([]pageState, n)
	for j := range st {
		st[j].last = w.Last0[j]
		st[j].delta = w.Delta[j]
	}
	lambda0 := w.Lambda0
	switch policy {
	case Threshold:
	case Static, StaticPlan:
		for j := range st {
			st[j].interval = w.interval[j]
		}
	case Uniform, Proportional:
		base := make([]float64, n)
		for j := range base {
			base[j] = 1
			if policy == Proportional {
				base[j] = w.Delta[j]
			}
		}
		for j, r := range w.fixedRates(base) {
			st[j].interval = 1 / r
		}
	case Nutch:
		for j := range st {
			st[j].interval = float64(n) / w.Rate
		}
	case Estimated:
		for j := range st {
			st[j].delta = cfg.Prior.Rate
		}
		var err error
		if lambda0, err = w.estimatedLambda0(st); err != nil {
			return Result{}, err
		}
	default:
		return Result{}, fmt.Errorf("policy %q: want one of %v", policy, AllPolicies)
	}

	stale := make([]float64, n) // accumulated loss over the measured period
	crawled := make([]bool, n)
	account := func(j int, t float64) {
		a := math.Max(st[j].last, cfg.Warmup) - st[j].last
		b := t - st[j].last
		if b > a {
			stale[j] += obj.Staleness(w.Delta[j], a, b)
		}
	}
	windows := int(math.Ceil((cfg.Days - cfg.Warmup) / cfg.Window))
	counts := make([][]int, nh)
	for h := range counts {
		counts[h] = make([]int, windows)
	}
	hostCredit := make([]float64, nh)
	globalCredit := 0.0
	prio := make([]float64, n)
	var cand, sel []int32
	crawls := 0
	slots := int(math.Round(cfg.Days / cfg.Slot))
	nextEstimate := 1.0
	for s := 0; s < slots; s++ {
		t0 := float64(s) * cfg.Slot
		tm := t0 + cfg.Slot/2
		if policy == Estimated && t0 >= nextEstimate {
			// lambda_0 is re-estimated daily from the current beliefs,
			// as the article's central estimate is.
			var err error
			if lambda0, err = w.estimatedLambda0(st); err != nil {
				return Result{}, err
			}
			nextEstimate += 1
		}
		cand = cand[:0]
		for j := 0; j < n; j++ {
			age := tm - st[j].last
			switch policy {
			case Threshold, Estimated:
				v := obj.Value(w.W[j], st[j].delta, age)
				if v > 0 && v >= lambda0 {
					prio[j] = v
					cand = append(cand, int32(j))
				}
			default:
				if over := age - st[j].interval; over >= 0 {
					prio[j] = over
					cand = append(cand, int32(j))
				}
			}
		}
		slices.SortFunc(cand, func(a, b int32) int {
			if c := cmp.Compare(prio[b], prio[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		// Limits: per-host credit, then the global credit.
		// Credit carries the fraction of a crawl a slot leaves over, and
		// at most one slot's worth more: a host never gets a burst.
		for h := 0; h < nh; h++ {
			k := w.limitAt(h, t0) * cfg.Slot
			hostCredit[h] = math.Min(hostCredit[h]+k, k+1)
		}
		globalCredit = math.Min(globalCredit+w.Rate*cfg.Slot, w.Rate*cfg.Slot+1)
		sel = sel[:0]
		for _, j := range cand {
			if globalCredit < 1 {
				break
			}
			h := w.Host[j]
			// The static plan meets host limits only on average (the
			// static problem's constraint): its per-slot bursts are what
			// the article's threshold policy avoids.
			if hostCredit[h] < 1 && policy != StaticPlan {
				continue
			}
			hostCredit[h]--
			globalCredit--
			sel = append(sel, j)
		}
		for m, j := range sel {
			t := t0 + (float64(m)+0.5)*cfg.Slot/float64(len(sel))
			account(int(j), t)
			gap := t - st[j].last
			changed := rng.Float64() < -math.Expm1(-w.Delta[j]*gap)
			switch policy {
			case Nutch:
				if changed {
					st[j].interval *= 0.8
				} else {
					st[j].interval *= 1.4
				}
				st[j].interval = math.Min(math.Max(st[j].interval, cfg.Slot), 365)
			case Estimated:
				ps := &st[j]
				ps.gaps = append(ps.gaps, gap)
				ps.changed = append(ps.changed, changed)
				ps.delta, _ = recrawl.Estimate(recrawl.Observations{Gaps: ps.gaps, Changed: ps.changed}, cfg.Prior)
			}
			st[j].last = t
			crawled[j] = true
			crawls++
			if t >= cfg.Warmup {
				wi := int((t - cfg.Warmup) / cfg.Window)
				if wi < windows {
					counts[w.Host[j]][wi]++
				}
			}
		}
	}
	for j := range st {
		account(j, cfg.Days)
	}
	res := w.summarise(policy, stale, counts, crawls)
	for _, c := range crawled {
		if !c {
			res.Starved++
		}
	}
	return res, nil
}

// estimatedLambda0 solves the static problem on the policy's beliefs.
func (w *World) estimatedLambda0(st []pageState) (float64, error) {
	d := make([]float64, len(st))
	for j := range st {
		d[j] = st[j].delta
	}
	s, err := recrawl.Solve(&recrawl.Problem{Objective: w.cfg.Objective, W: w.W, Delta: d, Host: w.Host,
		HostRate: w.Limit, Rate: w.Rate}, recrawl.SolveOptions{SkipRates: true})
	if err != nil {
		return 0, err
	}
	return s.Lambda0, nil
}

func (w *World) summarise(policy string, stale []float64, counts [][]int, crawls int) Result {
	cfg := w.cfg
	span := cfg.Days - cfg.Warmup
	score := func(pages func(int) bool) float64 {
		sw, sl := 0.0, 0.0
		for j := range w.W {
			if pages(j) {
				sw += w.W[j]
				sl += w.W[j] * stale[j]
			}
		}
		loss := sl / (sw * span)
		if cfg.Objective == recrawl.Harmonic {
			return loss
		}
		return 1 - loss
	}
	res := Result{Policy: policy, Crawls: crawls, Score: score(func(int) bool { return true })}
	cvSum := 0.0
	for h, c := range counts {
		hs := hostStats(c, cfg.Window)
		cvSum += hs.CV
		if p := hs.Peak / w.Limit[h]; p > res.MaxPeak {
			res.MaxPeak = p
		}
		hs.Name = w.Names[h]
		hs.Limit = w.Limit[h]
		hs.Score = score(func(j int) bool { return w.Host[j] == int32(h) })
		if int32(h) == w.focus {
			res.Focus = hs
		}
		res.Hosts = append(res.Hosts, hs)
	}
	res.HostCV = cvSum / float64(len(counts))
	return res
}

func hostStats(c []int, window float64) HostStats {
	var hs HostStats
	sum, sq := 0.0, 0.0
	for _, k := range c {
		hs.Crawls += k
		f := float64(k)
		sum += f
		sq += f * f
		hs.Peak = math.Max(hs.Peak, f/window)
	}
	nw := float64(len(c))
	mean := sum / nw
	hs.Mean = mean / window
	if mean > 0 {
		hs.CV = math.Sqrt(math.Max(0, sq/nw-mean*mean)) / mean
	}
	return hs
}
