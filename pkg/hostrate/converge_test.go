package hostrate_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/internal/changeweb"
	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/robots"
)

const agent = "crawlkit-test"

// crawler is a small fetcher: one goroutine per host, each request paced by
// the estimator, at most `workers` exchanges in flight over all hosts.
type crawler struct {
	srv     *changeweb.Server
	clock   *changeweb.Clock
	est     *hostrate.Estimator
	client  *http.Client
	slots   chan struct{}
	mu      sync.Mutex
	results map[string]*hostResult
}

type hostResult struct {
	fetched   int
	statuses  map[int]int
	errs      map[hostrate.ErrKind]int
	code      string // the HostError code that stopped the host
	deferred  int    // URLs left when it stopped
	badRA     int    // Retry-After values the estimator clamped or ignored
	maxPause  time.Duration
	samples   []float64 // the host's rate, sampled in the second half of the run
	lastStart time.Time
	minGap    time.Duration // client side
}

func newCrawler(srv *changeweb.Server, est *hostrate.Estimator, workers int, timeout time.Duration) *crawler {
	tr := &http.Transport{DialContext: srv.DialContext, MaxIdleConnsPerHost: 2, DisableCompression: true}
	return &crawler{srv: srv, clock: srv.Clock(), est: est, slots: make(chan struct{}, workers),
		client:  &http.Client{Transport: tr, Timeout: srv.Clock().Real(timeout)},
		results: map[string]*hostResult{}}
}

func (c *crawler) result(host string) *hostResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.results[host]
	if r == nil {
		r = &hostResult{statuses: map[int]int{}, errs: map[hostrate.ErrKind]int{}}
		c.results[host] = r
	}
	return r
}

// get fetches one URL: take a worker slot, ask the estimator whether the
// host may be asked now (if not, give the slot back and wait), exchange,
// Observe.
func (c *crawler) get(ctx context.Context, host, path string) ([]byte, int, error) {
	for {
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
		wait, err := c.est.TryStart(host)
		if err != nil {
			<-c.slots
			return nil, 0, err
		}
		if wait == 0 {
			break
		}
		<-c.slots
		if err := c.clock.Sleep(ctx, wait); err != nil {
			return nil, 0, err
		}
	}
	defer func() { <-c.slots }()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.srv.URL(host, path), nil)
	req.Header.Set("User-Agent", agent+"/1.0")
	start := c.clock.Now()
	r0 := c.result(host)
	c.mu.Lock()
	if !r0.lastStart.IsZero() && (r0.minGap == 0 || start.Sub(r0.lastStart) < r0.minGap) {
		r0.minGap = start.Sub(r0.lastStart)
	}
	r0.lastStart = start
	c.mu.Unlock()
	resp, err := c.client.Do(req)
	latency := c.clock.Now().Sub(start)
	if ctx.Err() != nil {
		return nil, 0, ctx.Err()
	}
	o := hostrate.Observation{Host: host, Start: start, Latency: latency, Err: hostrate.Classify(err)}
	var body []byte
	if err == nil {
		o.Status, o.RetryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			o.Status, o.Err = 0, hostrate.Classify(err)
		}
	}
	res := c.est.Observe(o)
	r := c.result(host)
	c.mu.Lock()
	if o.Err != hostrate.ErrNone {
		r.errs[o.Err]++
	} else {
		r.statuses[o.Status]++
		r.fetched++
	}
	if res.RetryAfterErr != nil {
		r.badRA++
	}
	r.maxPause = max(r.maxPause, res.Pause)
	c.mu.Unlock()
	if o.Err != hostrate.ErrNone {
		return nil, 0, errExchange
	}
	return body, o.Status, nil
}

// errExchange is a request that got no answer; the estimator has seen it.
var errExchange = errors.New("no answer")

// crawlHost reads robots.txt, then fetches the host's allowed pages round
// and round until ctx ends or the estimator refuses the host.
func (c *crawler) crawlHost(ctx context.Context, host string, paths []string) {
	r := c.result(host)
	stop := func(err error, left int) {
		var he *hostrate.HostError
		if errors.As(err, &he) {
			c.mu.Lock()
			r.code, r.deferred = he.Code, left
			c.mu.Unlock()
		}
	}
	body, status, err := c.get(ctx, host, "/robots.txt")
	for err == errExchange { // unreachable: ask again, as paced, until the host rests
		body, status, err = c.get(ctx, host, "/robots.txt")
	}
	if err != nil {
		stop(err, len(paths))
		return
	}
	g := robots.FromStatus(status, body).Group(agent)
	if d, ok := g.CrawlDelay(); ok {
		c.est.SetCrawlDelay(host, d)
	}
	var allowed []string
	for _, p := range paths {
		if g.Allowed(p) {
			allowed = append(allowed, p)
		}
	}
	if len(allowed) == 0 { // robots.txt allows nothing: nothing to crawl (the test's checks then fail on the host)
		return
	}
	// perHost connections share the host's URLs, as fetch --per-host N.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range perHost {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)-1) % len(allowed)
				if _, _, err := c.get(ctx, host, allowed[i]); err != nil && err != errExchange {
					stop(err, len(allowed)-i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// perHost is the connections per host: with one, a host is never asked
// faster than one over its latency, so its capacity would not be reached.
const perHost = 4

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[len(s)/2]
}

// TestConvergence crawls a changeweb of hosts with capacities 2, 5 and 20
// requests per (virtual) second, a hanging host, a refusing host, a pinned
// host, a host pinned to 0, a host with a Crawl-delay and three hosts that
// send absurd Retry-After values, all at once over real loopback HTTP, on a
// clock 4 times faster than real time, and checks the estimates against the
// server's truth and counters.
func TestConvergence(t *testing.T) {
	const (
		speed    = 4
		run      = 56 * time.Second // virtual
		clampRA  = 2 * time.Second
		crawlDel = time.Second
		pinned   = 3.0
	)
	past := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat)
	hosts := []changeweb.HostConfig{
		{Name: "slow.test", Capacity: 2},
		{Name: "mid.test", Capacity: 5},
		{Name: "fast.test", Capacity: 20},
		{Name: "hang.test", Dead: changeweb.Hang},
		{Name: "refuse.test", Dead: changeweb.Refuse},
		{Name: "pinned.test", Capacity: 50},
		{Name: "zero.test", Capacity: 50},
		{Name: "delay.test", Capacity: 50, CrawlDelay: crawlDel},
		{Name: "huge-ra.test", Capacity: 1, MaxQueue: 50 * time.Millisecond, RetryAfter: "99999999999999999999"},
		{Name: "past-ra.test", Capacity: 1, MaxQueue: 50 * time.Millisecond, RetryAfter: past},
		{Name: "junk-ra.test", Capacity: 1, MaxQueue: 50 * time.Millisecond, RetryAfter: "soon-ish"},
	}
	srv, err := changeweb.Start(changeweb.Config{Seed: 7, Hosts: hosts, Speed: speed, Articles: 10 * len(hosts), Wiki: 5 * len(hosts)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	est := hostrate.New(hostrate.Config{
		Initial: 1, Floor: 0.6, Ceiling: 100, HealthyRun: 5, ProbeEvery: time.Second,
		MinSlow: 100 * time.Millisecond, SlowRun: 3, MaxRetryAfter: clampRA, DeadAfter: 3, Rest: time.Hour, Smoothing: 10 * time.Second, BaselineWindow: 30 * time.Second,
		Clock: srv.Clock(),
	})
	est.Pin("pinned.test", pinned)
	est.Pin("zero.test", 0)
	byHost := map[string][]string{}
	for _, p := range srv.Pages() {
		byHost[p.Host] = append(byHost[p.Host], p.Path)
	}
	c := newCrawler(srv, est, 16, 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), srv.Clock().Real(run))
	defer cancel()
	var wg sync.WaitGroup
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.crawlHost(ctx, h.Name, byHost[h.Name])
		}()
	}
	// Sample the estimates over the second half of the run.
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = srv.Clock().Sleep(ctx, run/2)
		for ctx.Err() == nil {
			for _, h := range hosts[:3] {
				r := c.result(h.Name)
				rate := est.Rate(h.Name)
				c.mu.Lock()
				r.samples = append(r.samples, rate)
				c.mu.Unlock()
			}
			_ = srv.Clock().Sleep(ctx, 500*time.Millisecond)
		}
	}()
	wg.Wait()

	for _, hs := range est.Hosts() {
		st := srv.Stats(hs.Host)
		r := c.result(hs.Host)
		t.Logf("%-13s rate %6.2f/s limit %6.2f baseline %5.1fms | server: %4d requests, %4d served, %3d 503s, max %2d in 1s, min gap %v, max wait after 503 %v | client: %v %v code %q deferred %d bad Retry-After %d min gap %v",
			hs.Host, hs.Rate, hs.Limit, float64(hs.Baseline)/1e6, st.Requests, st.Served, st.Rejected, st.MaxPerSecond,
			st.MinGap.Round(time.Millisecond), st.MaxWaitAfter503.Round(time.Millisecond), r.statuses, r.errs, r.code, r.deferred, r.badRA, r.minGap.Round(time.Millisecond))
	}

	// Convergence: the estimate over the second half stays near the truth.
	for _, h := range hosts[:3] {
		r := c.result(h.Name)
		truth := srv.Capacity(h.Name)
		med, smoothed := median(r.samples), est.Rates()[h.Name]/86400
		lo, hi := spread(r.samples)
		t.Logf("%s: capacity %.0f/s; pacing rate over the second half: median %.2f (%+.0f%%), range %.2f..%.2f (%d samples); smoothed estimate (Rates) at the end %.2f (%+.0f%%)",
			h.Name, truth, med, 100*(med/truth-1), lo, hi, len(r.samples), smoothed, 100*(smoothed/truth-1))
		if len(r.samples) < 10 {
			t.Errorf("%s: only %d samples", h.Name, len(r.samples))
		}
		if math.Abs(med/truth-1) > 0.25 {
			t.Errorf("%s: median pacing rate %.2f/s is not within 25%% of the capacity %.0f/s", h.Name, med, truth)
		}
		if math.Abs(smoothed/truth-1) > 0.25 {
			t.Errorf("%s: estimate %.2f/s is not within 25%% of the capacity %.0f/s", h.Name, smoothed, truth)
		}
		// The host was kept busy, not starved: it served at least a third of
		// its capacity on average (a loaded test machine slows the client).
		st := srv.Stats(h.Name)
		if got := float64(st.Served) / run.Seconds(); got < truth/3 {
			t.Errorf("%s: served %.2f/s on average, capacity %.0f/s", h.Name, got, truth)
		}
	}

	// Dead hosts rest after DeadAfter failures and their URLs are deferred,
	// while the others go on (checked above: they converged in the same run).
	for _, name := range []string{"hang.test", "refuse.test"} {
		r, st := c.result(name), srv.Stats(name)
		if r.code != hostrate.CodeResting || r.deferred == 0 {
			t.Errorf("%s: stopped with code %q and %d URLs deferred, want %q and some", name, r.code, r.deferred, hostrate.CodeResting)
		}
		if r.fetched != 0 {
			t.Errorf("%s: %d answers from a dead host", name, r.fetched)
		}
		// DeadAfter (3) failures, and perHost-1 more that were in flight.
		if n := r.errs[hostrate.ErrTimeout] + r.errs[hostrate.ErrRefused]; n < 3 || n > 3+perHost-1 {
			t.Errorf("%s: %d failures (%v) before the rest, want 3..%d", name, n, r.errs, 3+perHost-1)
		}
		if name == "hang.test" && st.Requests != r.errs[hostrate.ErrTimeout] {
			t.Errorf("%s: server saw %d requests, client %d timeouts", name, st.Requests, r.errs[hostrate.ErrTimeout])
		}
		if name == "refuse.test" && (st.Requests != 0 || r.errs[hostrate.ErrRefused] == 0) {
			t.Errorf("%s: server saw %d requests, client %d refusals; want 0 and some", name, st.Requests, r.errs[hostrate.ErrRefused])
		}
	}

	// Pins: rate 0 is never asked; a pinned host gets its rate, not its capacity.
	if st, r := srv.Stats("zero.test"), c.result("zero.test"); st.Requests != 0 || r.code != hostrate.CodePinned {
		t.Errorf("zero.test: %d requests, code %q; want 0 and %q", st.Requests, r.code, hostrate.CodePinned)
	}
	checkPaced(t, srv, c.result("pinned.test"), "pinned.test", pinned, run)
	// Crawl-delay caps a host whose capacity is far higher.
	checkPaced(t, srv, c.result("delay.test"), "delay.test", 1/crawlDel.Seconds(), run)
	if r := est.Rate("delay.test"); r > 1/crawlDel.Seconds() {
		t.Errorf("delay.test: rate %.2f over its Crawl-delay", r)
	}

	// Absurd Retry-After values: the hosts did send 503s with them, the
	// estimator flagged the huge and past ones, and the client never waited
	// longer than the clamp (the lowest rate's interval is below it).
	for _, name := range []string{"huge-ra.test", "past-ra.test", "junk-ra.test"} {
		st, r := srv.Stats(name), c.result(name)
		if st.Rejected == 0 {
			t.Errorf("%s: no 503 sent; the test did not exercise Retry-After", name)
			continue
		}
		if r.badRA == 0 {
			t.Errorf("%s: %d 503s, none reported as a bad Retry-After", name, st.Rejected)
		}
		if r.maxPause > clampRA {
			t.Errorf("%s: paused %v, over the clamp %v", name, r.maxPause, clampRA)
		}
		if slack := time.Second; st.MaxWaitAfter503 > clampRA+slack { // a wait obeyed would be a day, or forever
			t.Errorf("%s: the client waited %v after a 503, over the clamp %v (+%v)", name, st.MaxWaitAfter503, clampRA, slack)
		}
		if st.Requests <= st.Rejected+5 {
			t.Errorf("%s: %d requests, %d refused: the client stopped crawling", name, st.Requests, st.Rejected)
		}
	}
}

// checkPaced checks with the server's counters that a host was asked at
// about rate requests per second and never faster.
//
// The client's own start times (same clock) must be spaced by the interval,
// less the moment between TryStart's booking and the client reading the
// clock (10% slack, which still catches a doubled rate); the server's arrival times carry scheduler jitter (a
// request handled late bunches with the next), so its counters are checked
// by counts, which one late arrival moves by at most one.
func checkPaced(t *testing.T, srv *changeweb.Server, r *hostResult, host string, rate float64, run time.Duration) {
	t.Helper()
	st := srv.Stats(host)
	interval := time.Duration(float64(time.Second) / rate)
	if r.minGap < interval*9/10 {
		t.Errorf("%s: the client started two requests %v apart, the pace is one per %v", host, r.minGap, interval)
	}
	if limit := int(math.Ceil(rate)) + 1; st.MaxPerSecond > limit {
		t.Errorf("%s: %d requests within one second, the pace is %.2f/s", host, st.MaxPerSecond, rate)
	}
	if got := float64(st.Requests) / run.Seconds(); got < rate*0.7 || got > rate*1.05 {
		t.Errorf("%s: asked %.2f times a second on average, pace %.2f/s", host, got, rate)
	}
}

// spread returns the least and greatest of xs.
func spread(xs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}
