package hostrate

import (
	"math"
	"testing"
	"time"
)

// Limits: the level grown by the estimator's next step, per rule.
func TestLimitsHeadroom(t *testing.T) {
	r := newRig(t, Config{Initial: 4})
	r.ok(1) // no limit known: slow start
	if got, want := r.e.Limits()[host], 1.5*4*86400.0; !near(got, want) {
		t.Errorf("no limit known: %v, want %v", got, want)
	}
	r.req(503, 10*time.Millisecond, ErrNone, "") // rate 2, known limit 4
	r.clk.t = r.clk.t.Add(3 * time.Hour)         // the level settles at 2
	if got, want := r.e.Limits()[host], 3*86400.0; math.Abs(got/want-1) > 1e-6 {
		t.Errorf("below the known limit: %v, want half way to it, %v", got, want)
	}
	if got := r.e.Rates()[host]; math.Abs(got/(2*86400)-1) > 1e-6 {
		t.Errorf("Rates %v, want the level alone, %v", got, 2*86400)
	}
	e := New(Config{Initial: 4, Clock: r.clk})
	e.Observe(Observation{Host: "at.test", Start: r.clk.t, Latency: time.Millisecond, Status: 503}) // limit 4, rate 2
	e.mu.Lock()
	e.hosts["at.test"].Rate, e.hosts["at.test"].Smooth = 4, 4 // back at the limit
	e.mu.Unlock()
	if got, want := e.Limits()["at.test"], 1.05*4*86400; !near(got, want) {
		t.Errorf("at the known limit: %v, want the probe step, %v", got, want)
	}
	e.Pin("pinned.test", 2)
	e.Pin("off.test", 0)
	e.SetCrawlDelay("delay.test", 2*time.Second)
	e.Observe(Observation{Host: "delay.test", Start: r.clk.t, Latency: time.Millisecond, Status: 200})
	for h, want := range map[string]float64{"pinned.test": 2 * 86400, "off.test": 0, "delay.test": 0.5 * 86400} {
		if got := e.Limits()[h]; !near(got, want) {
			t.Errorf("%s: %v, want %v (pins and Crawl-delay take no headroom)", h, got, want)
		}
	}
}

// simHost is a host of a capacity in requests a second: a single queue
// served at that rate, answering after its queue's wait and 503 once the
// wait would pass maxQueue (as internal/changeweb's hosts).
type simHost struct {
	capacity float64
	maxQueue time.Duration
	work     float64 // seconds of queued work at last
	last     time.Time
	rejected int
}

func (h *simHost) serve(at time.Time) (time.Duration, int) {
	const base = 10 * time.Millisecond
	work := 0.0
	if !h.last.IsZero() {
		work = max(0, h.work-at.Sub(h.last).Seconds())
	}
	h.last = at
	if work > h.maxQueue.Seconds() {
		h.work = work
		h.rejected++
		return base, 503
	}
	h.work = work + 1/h.capacity
	return base + time.Duration(work*float64(time.Second)), 200
}

// crawlTurns runs a crawl loop against one host on a fake clock: every slot
// the planner hands fetch min(want, k x slot) URLs of the host, k from
// plan; fetch asks them in turn over one connection, paced by Reserve; the
// next turn starts a slot after this one, or when this one ends if later.
// It returns the pages fetched (200s) and the estimator.
func crawlTurns(t *testing.T, plan func(*Estimator) map[string]float64, h *simHost, want, turns int, slot time.Duration) (int, *Estimator) {
	clk := &fakeClock{t: t0}
	e := New(Config{Initial: 0.5, Clock: clk})
	fetched := 0
	for range turns {
		start := clk.t
		n := want
		if k, ok := plan(e)[host]; ok {
			n = min(want, int(k/86400*slot.Seconds()))
		}
		for range n {
			w, err := e.Reserve(host)
			if err != nil {
				t.Fatal(err)
			}
			clk.t = clk.t.Add(w)
			at := clk.t
			lat, status := h.serve(at)
			clk.t = clk.t.Add(lat)
			e.Observe(Observation{Host: host, Start: at, Latency: lat, Status: status})
			if status == 200 {
				fetched++
			}
		}
		clk.t = laterOf(clk.t, start.Add(slot))
	}
	return fetched, e
}

// The planner's host limit and the estimate, on a host of capacity 8/s
// that the crawl would ask 16 times a second, one-minute turns from the
// initial 0.5/s. The estimator grows the pace within a turn (a turn's
// burst is use), but the level Rates reports follows it over Smoothing:
// planned at the level alone, fetch is handed fewer URLs than its pace can
// take while the rate grows. Planned with Limits' headroom, it fetches at
// least 1.5 times as much over the first 10 turns, the estimates grow the
// same (within 25% of the capacity after an hour), and the host answers no
// more 503s. Where the crawl wants less than the estimate, the limit does
// not bind and both plans fetch all it wants.
func TestLimitsFollowThePace(t *testing.T) {
	const capacity = 8.0
	slot := time.Minute
	want := int(2 * capacity * slot.Seconds())
	for _, turns := range []int{10, 60} {
		hl, hh := &simHost{capacity: capacity, maxQueue: time.Second}, &simHost{capacity: capacity, maxQueue: time.Second}
		level, eLevel := crawlTurns(t, (*Estimator).Rates, hl, want, turns, slot)
		headroom, eHead := crawlTurns(t, (*Estimator).Limits, hh, want, turns, slot)
		rl, rh := eLevel.Rates()[host]/86400, eHead.Rates()[host]/86400
		t.Logf("%d turns, capacity %g/s, the crawl wants %d a turn: planned at the level %d fetched (estimate %.2f/s, %d 503s); with the headroom %d (estimate %.2f/s, %d 503s)",
			turns, capacity, want, level, rl, hl.rejected, headroom, rh, hh.rejected)
		if turns == 10 && float64(headroom) < 1.5*float64(level) {
			t.Errorf("%d turns: %d fetches with the headroom, %d at the level: want at least 1.5 times as many", turns, headroom, level)
		}
		if headroom < level || hh.rejected > hl.rejected {
			t.Errorf("%d turns: with the headroom %d fetches and %d 503s, at the level %d and %d", turns, headroom, hh.rejected, level, hl.rejected)
		}
		if math.Abs(rh/rl-1) > 0.1 {
			t.Errorf("%d turns: estimates %.2f/s with the headroom, %.2f/s without: want the same growth", turns, rh, rl)
		}
		if turns == 60 && math.Abs(rh/capacity-1) > 0.25 {
			t.Errorf("after %d turns the estimate is %.2f/s, want within 25%% of the capacity %g/s", turns, rh, capacity)
		}
	}
	// A crawl that wants 1 a second of the same host.
	small := int(slot.Seconds())
	a, _ := crawlTurns(t, (*Estimator).Rates, &simHost{capacity: capacity, maxQueue: time.Second}, small, 20, slot)
	b, _ := crawlTurns(t, (*Estimator).Limits, &simHost{capacity: capacity, maxQueue: time.Second}, small, 20, slot)
	if b != 20*small || a > b {
		t.Errorf("wanting %d a turn for 20 turns: fetched %d planned at the level, %d with the headroom, want all %d with the headroom", small, a, b, 20*small)
	}
}
