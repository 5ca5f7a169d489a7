package hostrate

import (
	"context"
	"errors"
	"math"
	"net/http"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when told to (or when slept on).
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }
func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.t = c.t.Add(max(d, 0))
	return nil
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rig is an estimator on a fake clock with a fetcher that follows Reserve.
type rig struct {
	t   *testing.T
	clk *fakeClock
	e   *Estimator
	res Result
}

func newRig(t *testing.T, cfg Config) *rig {
	clk := &fakeClock{t: t0}
	cfg.Clock = clk
	return &rig{t: t, clk: clk, e: New(cfg)}
}

const host = "h.test"

// req waits as Reserve says, then reports an answer with that status and
// latency (or an error kind when status is 0).
func (r *rig) req(status int, latency time.Duration, kind ErrKind, retryAfter string) {
	w, err := r.e.Reserve(host)
	if err != nil {
		r.t.Fatalf("Reserve: %v", err)
	}
	r.clk.t = r.clk.t.Add(w)
	start := r.clk.t
	r.clk.t = r.clk.t.Add(latency)
	r.res = r.e.Observe(Observation{Host: host, Start: start, Latency: latency, Status: status, Err: kind, RetryAfter: retryAfter})
}

func (r *rig) ok(n int) {
	for range n {
		r.req(200, 10*time.Millisecond, ErrNone, "")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// The rules, one case each: a configuration, what happens, the rate after.
func TestRules(t *testing.T) {
	base := Config{Initial: 4, Floor: 0.1, Ceiling: 100, HealthyRun: 5, ProbeEvery: time.Second, DeadAfter: 3, Rest: time.Minute}
	noProbe := base
	noProbe.ProbeEvery = time.Hour
	cases := []struct {
		name string
		cfg  Config
		do   func(r *rig)
		rate float64 // want, requests/s
	}{
		{"503 halves", base, func(r *rig) { r.ok(3); r.req(503, 10*time.Millisecond, ErrNone, "") }, 2},
		{"429 halves", base, func(r *rig) { r.req(429, 10*time.Millisecond, ErrNone, "") }, 2},
		{"timeout halves", base, func(r *rig) { r.req(0, time.Second, ErrTimeout, "") }, 2},
		{"refused halves", base, func(r *rig) { r.req(0, time.Millisecond, ErrRefused, "") }, 2},
		{"500 halves", base, func(r *rig) { r.req(500, 10*time.Millisecond, ErrNone, "") }, 2},
		{"404 and 301 are healthy answers", base, func(r *rig) {
			r.req(404, 10*time.Millisecond, ErrNone, "")
			r.req(301, 10*time.Millisecond, ErrNone, "")
		}, 4},
		{"slow answers: SlowRun of them decrease by SlowDecrease", base, func(r *rig) {
			r.ok(3) // baseline 10ms
			r.req(200, 500*time.Millisecond, ErrNone, "")
			r.req(200, 500*time.Millisecond, ErrNone, "")
		}, 3},
		{"one slow answer is not distress", noProbe, func(r *rig) {
			r.ok(3)
			r.req(200, 500*time.Millisecond, ErrNone, "")
			r.ok(1)
		}, 4},
		{"slower but within MinSlow of the baseline is healthy", noProbe, func(r *rig) {
			r.ok(3)
			for range 4 {
				r.req(200, 50*time.Millisecond, ErrNone, "") // 5x baseline, only +40ms
			}
		}, 4},
		{"slow start: x1.5 after a healthy run", base, func(r *rig) { r.clk.t = r.clk.t.Add(time.Second); r.ok(5) }, 6},
		{"no probe before ProbeEvery", Config{Initial: 4, HealthyRun: 2, ProbeEvery: time.Hour}, func(r *rig) { r.ok(20) }, 4},
		{"back half way to the known limit", base, func(r *rig) {
			r.req(503, 10*time.Millisecond, ErrNone, "") // limit 4, rate 2
			r.clk.t = r.clk.t.Add(time.Second)
			r.ok(5)
		}, 3},
		{"probe x1.05 beyond the known limit", base, func(r *rig) {
			r.req(503, 10*time.Millisecond, ErrNone, "")
			for range 6 { // 2 -> 3 -> 3.5 -> 3.75 -> 3.875 (>= 0.95*4) -> x1.05 ...
				r.clk.t = r.clk.t.Add(time.Second)
				r.ok(5)
			}
		}, 3.875 * 1.05 * 1.05},
		{"floor", base, func(r *rig) {
			for range 10 {
				r.req(503, 10*time.Millisecond, ErrNone, "")
			}
		}, 0.1},
		{"ceiling", Config{Initial: 90, Ceiling: 100, HealthyRun: 1, ProbeEvery: time.Millisecond}, func(r *rig) { r.ok(10) }, 100},
		{"Crawl-delay caps the estimate", base, func(r *rig) { r.e.SetCrawlDelay(host, 2*time.Second); r.clk.t = r.clk.t.Add(time.Second); r.ok(5) }, 0.5},
		{"Crawl-delay caps a pin", base, func(r *rig) { r.e.Pin(host, 5); r.e.SetCrawlDelay(host, time.Second) }, 1},
		{"a pin replaces the estimate and stops adaptation", base, func(r *rig) {
			r.e.Pin(host, 7)
			r.req(503, 10*time.Millisecond, ErrNone, "")
			r.req(0, time.Second, ErrTimeout, "")
		}, 7},
		{"unpinning returns to the estimate", base, func(r *rig) { r.e.Pin(host, 7); r.e.Pin(host, -1) }, 4},
		{"SetPins drops pins not listed", base, func(r *rig) { r.e.Pin(host, 7); r.e.SetPins(map[string]float64{"other.test": 1}) }, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.cfg)
			c.do(r)
			if got := r.e.Rate(host); !near(got, c.rate) {
				t.Errorf("rate %v, want %v", got, c.rate)
			}
		})
	}
}

func TestOneDecreasePerEpisode(t *testing.T) {
	r := newRig(t, Config{Initial: 8, Floor: 0.1})
	// Three requests in flight when the host starts refusing: one decrease.
	starts := []time.Time{r.clk.t, r.clk.t.Add(10 * time.Millisecond), r.clk.t.Add(20 * time.Millisecond)}
	r.clk.t = r.clk.t.Add(100 * time.Millisecond)
	for _, s := range starts {
		r.e.Observe(Observation{Host: host, Start: s, Latency: 50 * time.Millisecond, Status: 503})
	}
	if got := r.e.Rate(host); got != 4 {
		t.Fatalf("rate %v after one episode, want 4", got)
	}
	// A request started after the decrease that is refused too: another.
	r.req(503, 10*time.Millisecond, ErrNone, "")
	if got := r.e.Rate(host); got != 2 {
		t.Fatalf("rate %v after a second episode, want 2", got)
	}
}

// A queue that builds slowly (latency +3% an answer) is still seen: the
// baseline may not rise faster than e-fold per BaselineWindow.
func TestSlowlyRisingLatencyIsSeen(t *testing.T) {
	r := newRig(t, Config{Initial: 4, ProbeEvery: time.Hour, BaselineWindow: time.Minute, MinSlow: 10 * time.Millisecond})
	lat := 10 * time.Millisecond
	for i := 0; i < 200 && !r.res.Decreased; i++ {
		r.req(200, lat, ErrNone, "")
		lat = lat * 103 / 100
	}
	if !r.res.Decreased {
		t.Fatalf("no decrease; latency rose to %v, baseline %v", lat, r.e.Hosts()[0].Baseline)
	}
	if got := r.e.Rate(host); got != 3 {
		t.Fatalf("rate %v, want 3 (a soft decrease)", got)
	}
}

func TestUnusedRateDoesNotGrow(t *testing.T) {
	r := newRig(t, Config{Initial: 4, HealthyRun: 5, ProbeEvery: time.Second})
	// The fetcher asks once a second although 4/s are allowed: no evidence.
	for range 30 {
		r.clk.t = r.clk.t.Add(time.Second)
		r.ok(1)
	}
	if got := r.e.Rate(host); got != 4 {
		t.Fatalf("rate %v after 30 answers at a quarter of it, want 4 (unchanged)", got)
	}
}

func TestPacing(t *testing.T) {
	r := newRig(t, Config{Initial: 4})
	var waits []time.Duration
	for range 3 {
		w, err := r.e.Reserve(host)
		if err != nil {
			t.Fatal(err)
		}
		waits = append(waits, w)
	}
	if waits[0] != 0 || waits[1] != 250*time.Millisecond || waits[2] != 500*time.Millisecond {
		t.Fatalf("Reserve waits %v, want 0, 250ms, 500ms", waits)
	}
	// TryStart books nothing while the host is not ready.
	r2 := newRig(t, Config{Initial: 4})
	if w, _ := r2.e.TryStart(host); w != 0 {
		t.Fatalf("first TryStart waits %v", w)
	}
	r2.clk.t = r2.clk.t.Add(100 * time.Millisecond)
	for range 3 {
		if w, _ := r2.e.TryStart(host); w != 150*time.Millisecond {
			t.Fatalf("TryStart before the slot waits %v, want 150ms", w)
		}
	}
	r2.clk.t = r2.clk.t.Add(150 * time.Millisecond)
	if w, _ := r2.e.TryStart(host); w != 0 {
		t.Fatalf("TryStart at the slot waits %v", w)
	}
	if got := r2.e.Interval(host); got != 250*time.Millisecond {
		t.Fatalf("Interval %v", got)
	}
}

func TestRetryAfterPauses(t *testing.T) {
	cfg := Config{Initial: 10, MaxRetryAfter: 30 * time.Second}
	cases := []struct {
		value string
		pause time.Duration
		bad   bool
	}{
		{"", 0, false},
		{"7", 7 * time.Second, false},
		{"86400", 30 * time.Second, true},
		{"99999999999999999999999", 30 * time.Second, true},
		{t0.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"later", 0, true},
		{"-5", 0, true},
	}
	for _, c := range cases {
		r := newRig(t, cfg)
		r.req(503, 0, ErrNone, c.value)
		if r.res.Pause != c.pause || (r.res.RetryAfterErr != nil) != c.bad {
			t.Errorf("Retry-After %q: pause %v err %v; want %v, bad %v", c.value, r.res.Pause, r.res.RetryAfterErr, c.pause, c.bad)
		}
		w, err := r.e.Reserve(host)
		if err != nil || w > cfg.MaxRetryAfter || w < c.pause {
			t.Errorf("Retry-After %q: next request waits %v (%v), want %v..%v", c.value, w, err, c.pause, cfg.MaxRetryAfter)
		}
	}
}

func TestDeadHostRests(t *testing.T) {
	r := newRig(t, Config{Initial: 1, DeadAfter: 3, Rest: time.Minute, MaxRest: 3 * time.Minute})
	r.req(0, time.Second, ErrTimeout, "")
	r.req(503, time.Millisecond, ErrNone, "") // an answer, busy but alive: the count starts again
	r.req(0, time.Second, ErrReset, "")
	r.req(0, time.Second, ErrRefused, "")
	if r.res.Resting {
		t.Fatal("resting after 2 failures in a row")
	}
	r.req(500, time.Millisecond, ErrNone, "") // an error answer is a failure
	if !r.res.Resting {
		t.Fatal("not resting after 3 failures in a row")
	}
	rest := func() *HostError {
		_, err := r.e.Reserve(host)
		var he *HostError
		if !errors.As(err, &he) || he.Code != CodeResting {
			t.Fatalf("Reserve on a resting host: %v", err)
		}
		return he
	}
	until := rest().Until
	if d := until.Sub(r.clk.t); d != time.Minute {
		t.Fatalf("rests %v, want 1m", d)
	}
	// After the rest one request is let through; it fails: twice as long,
	// then capped at MaxRest.
	for _, want := range []time.Duration{2 * time.Minute, 3 * time.Minute, 3 * time.Minute} {
		r.clk.t = rest().Until
		r.req(0, time.Second, ErrTimeout, "")
		if d := rest().Until.Sub(r.clk.t); d != want {
			t.Fatalf("rest %v, want %v", d, want)
		}
	}
	// An answer ends it.
	r.clk.t = rest().Until
	r.ok(1)
	if _, err := r.e.Reserve(host); err != nil {
		t.Fatalf("after an answer: %v", err)
	}
	if hs := r.e.Hosts()[0]; hs.Failures != 0 || !hs.RestUntil.IsZero() {
		t.Fatalf("after an answer: %+v", hs)
	}
}

func TestPinnedZero(t *testing.T) {
	r := newRig(t, Config{})
	r.e.Pin("Z.test", 0)
	_, err := r.e.Reserve("z.TEST")
	var he *HostError
	if !errors.As(err, &he) || he.Code != CodePinned || he.Host != "z.test" {
		t.Fatalf("Reserve on a host pinned to 0: %v", err)
	}
	if _, err := r.e.TryStart("z.test"); !errors.As(err, &he) {
		t.Fatalf("TryStart on a host pinned to 0: %v", err)
	}
	if r.e.Interval("z.test") != 0 || r.e.Rates()["z.test"] != 0 {
		t.Fatal("a host pinned to 0 has an interval or a rate")
	}
}

func TestRatesAreSmoothedPerDay(t *testing.T) {
	r := newRig(t, Config{Initial: 2, Smoothing: time.Minute})
	r.ok(1)
	if got := r.e.Rates()[host]; got != 2*86400 {
		t.Fatalf("Rates %v, want %v", got, 2*86400)
	}
	r.req(503, 0, ErrNone, "") // rate 1 from now
	r.clk.t = r.clk.t.Add(time.Minute)
	want := (1 + math.Exp(-1)) * 86400 // 2 decayed one time constant toward 1
	if got := r.e.Rates()[host]; math.Abs(got/want-1) > 0.01 {
		t.Fatalf("Rates %v one time constant after a halving, want %v", got, want)
	}
	r.clk.t = r.clk.t.Add(time.Hour)
	if got := r.e.Rates()[host]; math.Abs(got/86400-1) > 0.01 {
		t.Fatalf("Rates %v long after, want %v", got, 86400)
	}
}
