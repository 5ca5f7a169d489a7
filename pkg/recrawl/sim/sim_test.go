package sim

import (
	"math"
	"sync"
	"testing"

	"github.com/sekitei/crawlkit/pkg/recrawl"
)

// The claims, each checked on a seeded world of 20 hosts x 50 pages
// (1,000 pages, a global limit of a third of their total change rate, host
// limits between 0.3x and 3x their share), hourly slots.

var (
	cacheMu sync.Mutex
	cache   = map[string]map[string]Result{}
	worlds  = map[string]*World{}
)

func results(t *testing.T, name string, cfg Config, policies []string) (*World, map[string]Result) {
	t.Helper()
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if r, ok := cache[name]; ok {
		return worlds[name], r
	}
	w, err := NewWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Run(policies)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Result{}
	for _, r := range res {
		m[r.Policy] = r
		t.Logf("%s %-12s score %.4f crawls %d hostCV %.3f starved %d focus %+v", name, r.Policy, r.Score, r.Crawls, r.HostCV, r.Starved, r.Focus)
	}
	cache[name], worlds[name] = m, w
	return w, m
}

func steady(t *testing.T) (*World, map[string]Result) {
	return results(t, "steady", Config{Seed: 1, Warmup: 10}, AllPolicies)
}

func TestThresholdReachesStaticOptimum(t *testing.T) {
	w, r := steady(t)
	thr := r[Threshold].Score
	if rel := (w.Optimum - thr) / w.Optimum; rel > 0.01 || rel < -0.002 {
		t.Errorf("threshold freshness %.4f is %.2f%% from the static optimum %.4f; want within 1%%", thr, 100*rel, w.Optimum)
	}
	// The static schedule itself, executed slot by slot under the same
	// limits, does no better than the threshold policy.
	if s := r[Static].Score; s > thr+1e-9 {
		t.Errorf("static schedule %.4f beats threshold %.4f", s, thr)
	}
}

func TestBaselinesLose(t *testing.T) {
	_, r := steady(t)
	for _, p := range []string{Uniform, Proportional, Nutch} {
		if r[p].Score >= r[Threshold].Score || r[p].Score >= r[Static].Score {
			t.Errorf("%s %.4f should lose to threshold %.4f and static %.4f", p, r[p].Score, r[Threshold].Score, r[Static].Score)
		}
	}
	// Cho and Garcia-Molina: proportional is worse than uniform (and here
	// worst of all).
	for p, res := range r {
		if p != Proportional && res.Score <= r[Proportional].Score {
			t.Errorf("%s %.4f is not better than proportional %.4f", p, res.Score, r[Proportional].Score)
		}
	}
}

func TestEstimatedRatesStayClose(t *testing.T) {
	w, r := steady(t)
	est := r[Estimated].Score
	if rel := (w.Optimum - est) / w.Optimum; rel > 0.05 {
		t.Errorf("with estimated rates freshness %.4f is %.1f%% below the known-rate optimum %.4f; want within 5%%", est, 100*rel, w.Optimum)
	}
	if est >= r[Threshold].Score {
		t.Errorf("estimated rates %.4f should not beat known rates %.4f", est, r[Threshold].Score)
	}
}

func TestNewHostSpread(t *testing.T) {
	// The article's scenario, measured from its start: a new host whose
	// pages were all crawled in the last day, undifferentiated, limited.
	_, r := results(t, "newhost", Config{Seed: 1, Scenario: NewHost, Days: 20}, []string{Threshold, Static, StaticPlan})
	thr, st, plan := r[Threshold].Focus, r[Static].Focus, r[StaticPlan].Focus
	// The static schedule as planned bunches the recrawls of pages crawled
	// together: its peak on the new host is far over the host's limit (it
	// meets the limit only on average), while the threshold policy spreads
	// them and is fresher there all the same.
	if plan.Peak < 2*thr.Peak || plan.Peak < 2*plan.Limit {
		t.Errorf("static plan peak %.1f/day: want bunching well over threshold's %.1f and the limit %.1f", plan.Peak, thr.Peak, plan.Limit)
	}
	if thr.Score < plan.Score {
		t.Errorf("new host freshness: threshold %.4f < static plan %.4f", thr.Score, plan.Score)
	}
	if thr.Score < st.Score {
		t.Errorf("new host freshness: threshold %.4f < static %.4f", thr.Score, st.Score)
	}
	if thr.CV >= st.CV {
		t.Errorf("new host crawl-rate CV: threshold %.3f should be below static %.3f", thr.CV, st.CV)
	}
	if thr.Peak > st.Peak {
		t.Errorf("new host peak: threshold %.1f/day above static %.1f/day", thr.Peak, st.Peak)
	}
	if thr.Peak > math.Floor(thr.Limit)+1 {
		t.Errorf("new host crawled %.1f/day over its limit %.1f", thr.Peak, thr.Limit)
	}
	if r[Threshold].Score < r[Static].Score {
		t.Errorf("overall freshness: threshold %.4f < static %.4f", r[Threshold].Score, r[Static].Score)
	}
}

func TestHalvedHostLimit(t *testing.T) {
	_, r := results(t, "halving", Config{Seed: 1, Scenario: Halving, Warmup: 10}, []string{Threshold, Static})
	if r[Threshold].Focus.Score <= r[Static].Focus.Score {
		t.Errorf("halved host: threshold %.4f should beat static %.4f", r[Threshold].Focus.Score, r[Static].Focus.Score)
	}
	if r[Threshold].Score <= r[Static].Score {
		t.Errorf("overall: threshold %.4f should beat static %.4f", r[Threshold].Score, r[Static].Score)
	}
	// The host's limit halved: its crawls over the second half respect it.
	if f := r[Threshold].Focus; f.Mean > f.Limit*0.75+0.5 {
		t.Errorf("halved host averaged %.2f/day; limit %.2f then %.2f", f.Mean, f.Limit, f.Limit/2)
	}
}

func TestHarmonicObjective(t *testing.T) {
	w, r := results(t, "harmonic", Config{Seed: 1, Warmup: 10, Objective: recrawl.Harmonic},
		[]string{Threshold, Static, Uniform, Proportional})
	thr := r[Threshold].Score // staleness: lower is better
	if rel := (thr - w.Optimum) / w.Optimum; rel > 0.01 || rel < -0.002 {
		t.Errorf("harmonic threshold %.4f is %.2f%% from the optimum %.4f", thr, 100*rel, w.Optimum)
	}
	for _, p := range []string{Uniform, Proportional} {
		if r[p].Score <= thr {
			t.Errorf("harmonic: %s %.4f should be staler than threshold %.4f", p, r[p].Score, thr)
		}
	}
	// Every changing page gets crawled under harmonic staleness, while
	// binary freshness gives some pages up.
	if r[Threshold].Starved != 0 {
		t.Errorf("harmonic threshold starved %d pages", r[Threshold].Starved)
	}
	_, f := steady(t)
	if f[Threshold].Starved == 0 {
		t.Errorf("freshness threshold starved no page; the world should have some never worth crawling")
	}
}

func TestDeterministic(t *testing.T) {
	cfg := Config{Seed: 9, Hosts: 4, PagesPerHost: 10, Days: 5}
	a, _ := NewWorld(cfg)
	b, _ := NewWorld(cfg)
	ra, err := a.Run([]string{Nutch, Estimated})
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := b.Run([]string{Nutch, Estimated})
	for i := range ra {
		if ra[i].Score != rb[i].Score || ra[i].Crawls != rb[i].Crawls || ra[i].Focus != rb[i].Focus || len(ra[i].Hosts) != 4 {
			t.Errorf("same seed, different results: %+v vs %+v", ra[i], rb[i])
		}
	}
	if _, err := NewWorld(Config{Scenario: "nope"}); err == nil {
		t.Error("unknown scenario accepted")
	}
	if _, err := a.Run([]string{"nope"}); err == nil {
		t.Error("unknown policy accepted")
	}
}
