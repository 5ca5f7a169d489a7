// Package hostrate estimates, per host, the highest crawl rate the host
// tolerates, from what a fetcher observes of each request, and paces the
// fetcher by it.
//
// "Crawling the internet: data science within a large engineering system"
// (Bill Richoux, 2018) says that Google continuously estimates the maximum
// crawl rate of each host; those estimates are the host limits k_i behind
// each host's threshold lambda_i in recrawl. This package keeps that
// estimate; a fetcher paces each host by it (Reserve or TryStart before a
// request, Observe after it) and the crawl loop hands its average over time,
// with the headroom the next probe needs, to recrawl as k_i (Limits,
// WriteHostRates: crawls per day; Rates is the average alone).
//
// # Rules
//
// Per host the Estimator keeps an allowed rate r (requests per second) and
// adapts it like TCP congestion control, as Heritrix's politeness and
// Google's crawler do in spirit: back off fast on distress, probe upward
// slowly.
//
//   - Distress is a 429 or 5xx answer, a timeout, a refused or reset
//     connection (hard: r *= Decrease, 0.5), or latency well above the host's
//     baseline, SlowRun answers in a row slower than both SlowFactor times the
//     baseline and the baseline plus MinSlow (soft: r *= SlowDecrease, 0.75;
//     Heritrix spaces requests by a multiple of the last fetch's duration for
//     the same reason: a host that answers slowly is busy). The baseline
//     follows falling latency at once and rising latency at most e-fold per
//     BaselineWindow, so that a queue building slowly at the host is seen.
//     One episode causes one decrease: distress on requests that started
//     before the last decrease is ignored for the rate (the host was
//     answering the old rate), and slow answers while the queue drains too.
//   - The rate at the last distress is remembered as the host's known limit
//     M. After HealthyRun healthy answers and at least ProbeEvery since the
//     last change, r grows: by SlowStart (x1.5) while no limit is known; half
//     way back to M when below 0.95 M; by Probe (x1.05) beyond it. Growth is
//     thus fast up to what the host took before and slow past it (as CUBIC).
//     Only a rate in use grows: when the requests booked since the last
//     change came slower than 0.9 r (the fetcher had no more URLs, or its
//     connections waited on answers), r stays, so the estimate never climbs
//     on no evidence.
//   - Bounds: r stays in [Floor, Ceiling]; a robots.txt Crawl-delay d caps it
//     at 1/d, always; a rate pinned by hand replaces the estimate (but not the
//     Crawl-delay cap); a pinned rate of 0 means "do not crawl this host".
//   - Retry-After on a 429 or 503 pauses the host for that long, clamped to
//     [0, MaxRetryAfter]; a date in the past, a huge number or garbage is
//     clamped or ignored and reported (Result.RetryAfterErr), never obeyed
//     blindly.
//   - A host that does not answer DeadAfter times in a row (timeouts,
//     refused or reset connections, other network errors, 5xx other than
//     503) rests: Reserve refuses it with a *HostError of code "resting"
//     until Rest has passed (doubling with each rest in a row, up to MaxRest),
//     so the fetcher can defer its URLs and carry on with the others. Any
//     answer ends the rest cycle.
//
// Pacing spaces request starts by 1/r (Reserve books the next start ahead;
// TryStart books only a start that may happen now, for worker pools), so the
// host sees at most r request starts a second however many connections the
// fetcher keeps to it. The pacing rate is a saw tooth by design; Rates
// reports its exponential average over Smoothing, the level recrawl needs.
// golang.org/x/time/rate is not used: with a burst of one its token bucket is
// exactly this spacing, and the estimator also needs Retry-After pauses,
// rests, a clock that tests can speed up, and state it can save, which a
// Limiter does not hold; adding it would buy one line of arithmetic.
//
// # State
//
// Save writes the per-host state (rate, smoothed rate, known limit, baseline
// latency, failure counters, resting-until, pinned rate, Crawl-delay) as versioned
// JSON beside the target, fsynced and renamed over it, so a crash leaves the
// old file or the new one; Load reads it back and reports a corrupt file with
// its path. Pins come from a user's file of host<TAB>rate lines (ReadPins).
// WriteHostRates writes the rates in the format recrawl --host-rates reads.
package hostrate

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
)

// Clock is the time source; the zero Config uses real time. Tests pass a
// sped-up clock (internal/changeweb.Clock satisfies it).
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Config sets the rules' parameters; zero fields take the defaults in
// brackets.
type Config struct {
	Initial        float64       // rate of a host never seen, requests/s [0.5]
	Floor          float64       // lowest rate [1/60]
	Ceiling        float64       // highest rate [10]
	Decrease       float64       // factor on hard distress [0.5]
	SlowDecrease   float64       // factor on slow answers [0.75]
	SlowStart      float64       // growth factor while no limit is known [1.5]
	Probe          float64       // growth factor beyond the known limit [1.05]
	HealthyRun     int           // healthy answers before a probe [10]
	ProbeEvery     time.Duration // least time between two increases [10s]
	SlowFactor     float64       // slow = latency > SlowFactor x baseline ... [3]
	MinSlow        time.Duration // ... and > baseline + MinSlow [100ms]
	SlowRun        int           // slow answers in a row that count as distress [2]
	MaxRetryAfter  time.Duration // clamp for Retry-After [10m]
	DeadAfter      int           // failures in a row before a rest [5]
	Rest           time.Duration // first rest [10m]
	MaxRest        time.Duration // longest rest [24h]
	Smoothing      time.Duration // time constant of the smoothed estimate Rates reports [10m]
	BaselineWindow time.Duration // the baseline latency rises at most e-fold in this time [10m]
	Clock          Clock         // [real time]
	// DecreaseFromUse decreases from the rate the host was answering (its
	// healthy answers over the last seconds, or else the requests booked
	// since the last change over their time) when it is below the allowed
	// rate, as TCP halves its flight size rather than its window (RFC 5681):
	// an estimator whose Ceiling is +Inf (no pace but the connections')
	// then learns a host's limit in one step.
	DecreaseFromUse bool
}

func (c Config) withDefaults() Config {
	f := func(v *float64, d float64) {
		if !(*v > 0) {
			*v = d
		}
	}
	f(&c.Initial, 0.5)
	f(&c.Floor, 1.0/60)
	f(&c.Ceiling, 10)
	f(&c.Decrease, 0.5)
	f(&c.SlowDecrease, 0.75)
	f(&c.SlowStart, 1.5)
	f(&c.Probe, 1.05)
	f(&c.SlowFactor, 3)
	d := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	d(&c.ProbeEvery, 10*time.Second)
	d(&c.MinSlow, 100*time.Millisecond)
	d(&c.MaxRetryAfter, 10*time.Minute)
	d(&c.Rest, 10*time.Minute)
	d(&c.MaxRest, 24*time.Hour)
	d(&c.Smoothing, 10*time.Minute)
	d(&c.BaselineWindow, 10*time.Minute)
	i := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	i(&c.HealthyRun, 10)
	i(&c.SlowRun, 2)
	i(&c.DeadAfter, 5)
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	c.Ceiling = max(c.Ceiling, c.Floor)
	c.Initial = min(max(c.Initial, c.Floor), c.Ceiling)
	return c
}

// ErrKind is how a request failed before an answer.
type ErrKind int

const (
	ErrNone    ErrKind = iota // an answer came (Status is set)
	ErrTimeout                // connect, header or body timeout
	ErrRefused                // connection refused
	ErrReset                  // connection reset or closed mid-exchange
	ErrOther                  // any other network error (DNS included)
)

var errKindNames = []string{"none", "timeout", "refused", "reset", "other"}

func (k ErrKind) String() string {
	if k >= 0 && int(k) < len(errKindNames) {
		return errKindNames[k]
	}
	return fmt.Sprintf("ErrKind(%d)", int(k))
}

// Observation is what a fetcher saw of one request to a host.
type Observation struct {
	Host       string        // host[:port], as the fetcher keys hosts
	Start      time.Time     // when the request started (the Clock's time; zero: now - Latency)
	Latency    time.Duration // start to response headers (or to the failure)
	Status     int           // HTTP status; 0 when no answer came
	RetryAfter string        // the Retry-After header, as received
	Err        ErrKind
}

// Result is what the estimator made of an observation.
type Result struct {
	Rate          float64       // the host's allowed rate now, requests/s
	Pause         time.Duration // the host is paused this long (Retry-After, clamped)
	RetryAfterErr error         // what was wrong with Retry-After, if anything (it was clamped or ignored)
	Decreased     bool          // this observation lowered the rate
	Resting       bool          // the host now rests (see HostError)
}

// Error codes of HostError, for a fetcher's error field.
const (
	CodeResting = "resting" // the host failed DeadAfter times in a row and rests until Until
	CodePinned  = "pinned"  // the host is pinned to rate 0: do not crawl it
)

// HostError is Reserve's refusal to pace a request to a host now.
type HostError struct {
	Host     string
	Code     string    // CodeResting or CodePinned
	Until    time.Time // end of the rest (CodeResting)
	Failures int       // failures in a row (CodeResting)
}

func (e *HostError) Error() string {
	if e.Code == CodePinned {
		return fmt.Sprintf("%s: host %s is pinned to rate 0 (do not crawl)", e.Code, e.Host)
	}
	return fmt.Sprintf("%s: host %s rests until %s after %d failures in a row", e.Code, e.Host, e.Until.UTC().Format(time.RFC3339), e.Failures)
}

// hostState is one host's state; the exported fields are saved.
type hostState struct {
	Rate        float64   `json:"rate"`                  // estimate, requests/s
	Limit       float64   `json:"limit,omitempty"`       // rate at the last distress (M); 0 = none known
	BaselineMS  float64   `json:"baseline_ms,omitempty"` // healthy answer latency, ms
	Failures    int       `json:"failures,omitempty"`    // failures in a row
	Rests       int       `json:"rests,omitempty"`       // rests in a row
	RestUntil   time.Time `json:"rest_until,omitzero"`
	Pinned      *float64  `json:"pinned,omitempty"`        // requests/s set by hand; 0 = do not crawl
	CrawlDelayS float64   `json:"crawl_delay_s,omitempty"` // robots.txt Crawl-delay, seconds
	Smooth      float64   `json:"smooth,omitempty"`        // the estimate averaged over Smoothing, requests/s
	Updated     time.Time `json:"updated,omitzero"`

	next         time.Time // earliest start of the next request
	pauseUntil   time.Time // Retry-After
	lastDecrease time.Time
	calmUntil    time.Time   // slow answers to requests started before it are the old queue draining
	lastChange   time.Time   // last increase or decrease
	healthy      int         // healthy answers since the last change
	books        int         // requests booked since the last change or probe
	bookFirst    time.Time   // the first of them
	slow         int         // slow answers in a row
	firstBook    time.Time   // the first request ever booked (DecreaseFromUse)
	okStarts     []time.Time // starts of the recent healthy answers (DecreaseFromUse)
}

// Estimator keeps the per-host estimates. It is safe for concurrent use.
type Estimator struct {
	cfg   Config
	mu    sync.Mutex
	hosts map[string]*hostState
}

// New returns an Estimator with no hosts.
func New(cfg Config) *Estimator {
	return &Estimator{cfg: cfg.withDefaults(), hosts: map[string]*hostState{}}
}

// Config returns the configuration in use, defaults filled in.
func (e *Estimator) Config() Config { return e.cfg }

func key(host string) string { return strings.ToLower(strings.TrimSpace(host)) }

func (e *Estimator) host(name string) *hostState {
	k := key(name)
	h := e.hosts[k]
	if h == nil {
		h = &hostState{Rate: e.cfg.Initial}
		e.hosts[k] = h
	}
	return h
}

// allowed is the rate the host is paced by: the pin or the estimate, capped
// by Crawl-delay.
func (h *hostState) allowed() float64 { return h.limited(h.Rate) }

// limited applies the pin and the Crawl-delay cap to an estimate.
func (h *hostState) limited(r float64) float64 {
	if h.Pinned != nil {
		r = *h.Pinned
	}
	if h.CrawlDelayS > 0 {
		r = min(r, 1/h.CrawlDelayS)
	}
	return r
}

func (e *Estimator) clamp(h *hostState, r float64) float64 {
	r = min(max(r, e.cfg.Floor), e.cfg.Ceiling)
	if h.CrawlDelayS > 0 {
		r = min(r, 1/h.CrawlDelayS) // probing past the host's own cap measures nothing
	}
	return r
}

// Reserve books the next request to host and returns how long to wait
// before starting it (0: now). It refuses a host pinned to 0 (CodePinned)
// and a resting host (CodeResting) with a *HostError. It suits a fetcher
// that keeps one goroutine per host connection: call it before every request
// to the host, robots.txt and redirect hops included, start the request
// after the wait, and report it with Observe. A start later than booked is
// not caught up: Observe spaces the next one from the actual start.
func (e *Estimator) Reserve(host string) (time.Duration, error) {
	return e.book(host, true)
}

// TryStart books a request to host now if the host may be asked now, and
// returns 0; otherwise it books nothing and returns how long until the host
// may be asked. It suits a worker pool that orders hosts by when they are
// ready (a worker that took the host calls it and, on a wait, puts the host
// back), because the booking is made at the actual start. Errors as Reserve.
func (e *Estimator) TryStart(host string) (time.Duration, error) {
	return e.book(host, false)
}

func (e *Estimator) book(host string, ahead bool) (time.Duration, error) {
	now := e.cfg.Clock.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.host(host)
	r := h.allowed()
	if r <= 0 {
		return 0, &HostError{Host: key(host), Code: CodePinned}
	}
	if now.Before(h.RestUntil) {
		return 0, &HostError{Host: key(host), Code: CodeResting, Until: h.RestUntil, Failures: h.Failures}
	}
	start := laterOf(laterOf(now, h.next), h.pauseUntil)
	if !ahead && start.After(now) {
		return start.Sub(now), nil
	}
	h.next = start.Add(time.Duration(float64(time.Second) / r))
	if h.firstBook.IsZero() {
		h.firstBook = start
	}
	if h.books == 0 {
		h.bookFirst = start
	}
	h.books++
	return start.Sub(now), nil
}

// Wait is Reserve followed by sleeping on the Clock.
func (e *Estimator) Wait(ctx context.Context, host string) error {
	d, err := e.Reserve(host)
	if err != nil {
		return err
	}
	return e.cfg.Clock.Sleep(ctx, d)
}

// Interval returns the current spacing of requests to host (0 for a host
// that must not be crawled).
func (e *Estimator) Interval(host string) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.host(host).allowed()
	if r <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / r)
}

// Rate returns the host's allowed rate in requests per second.
func (e *Estimator) Rate(host string) float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.host(host).allowed()
}

// Observe applies the rules to one request's outcome.
func (e *Estimator) Observe(o Observation) Result {
	now := e.cfg.Clock.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if o.Start.IsZero() {
		o.Start = now.Add(-o.Latency)
	}
	h := e.host(o.Host)
	sinceLast := now.Sub(h.Updated) // for the baseline's creep; before smooth moves Updated
	e.smooth(h, now)
	if h.lastChange.IsZero() {
		h.lastChange = o.Start // a new host is probed ProbeEvery after its first request
	}
	var res Result
	answered := o.Err == ErrNone && o.Status > 0
	hard := !answered || o.Status == 429 || o.Status >= 500
	failure := !answered || (o.Status >= 500 && o.Status != 503)

	if o.Status == 429 || o.Status == 503 {
		d, err := ParseRetryAfter(o.RetryAfter, now, e.cfg.MaxRetryAfter)
		res.RetryAfterErr = err
		if d > 0 {
			h.pauseUntil = laterOf(h.pauseUntil, now.Add(d))
		}
	}
	if failure {
		h.Failures++
		if h.Failures >= e.cfg.DeadAfter {
			h.Rests++
			rest := e.cfg.Rest << min(h.Rests-1, 30)
			if rest <= 0 || rest > e.cfg.MaxRest {
				rest = e.cfg.MaxRest
			}
			h.RestUntil = now.Add(rest)
			res.Resting = true
		}
	} else {
		h.Failures, h.Rests = 0, 0
		h.RestUntil = time.Time{}
	}

	slow := false
	if answered && !hard {
		lat := float64(o.Latency) / float64(time.Millisecond)
		if h.BaselineMS <= 0 {
			h.BaselineMS = lat
		}
		slow = lat > e.cfg.SlowFactor*h.BaselineMS && lat > h.BaselineMS+float64(e.cfg.MinSlow)/float64(time.Millisecond)
		if !slow {
			// The baseline follows falling latency fast, and rising latency
			// at most by a factor e per BaselineWindow of time (not per
			// answer): a queue that builds slowly at a host must not become
			// the new normal, or latency would never look high (BBR keeps
			// the minimum RTT over a window for the same reason).
			if lat < h.BaselineMS {
				h.BaselineMS += 0.2 * (lat - h.BaselineMS)
			} else if sinceLast > 0 {
				h.BaselineMS = min(lat, h.BaselineMS*(1+float64(sinceLast)/float64(e.cfg.BaselineWindow)))
			}
		}
	}
	if slow {
		h.slow++
	} else {
		h.slow = 0
	}

	adapt := h.Pinned == nil
	// One decrease per episode: distress on a request that started before
	// the last decrease answers the old rate. Slowness lasts longer: the
	// queue the host built drains only at the margin the lower rate leaves,
	// so slow answers count again once it had time to (its excess latency
	// over 1 - SlowDecrease).
	recent := !o.Start.Before(h.lastDecrease)
	if !hard && o.Start.Before(h.calmUntil) {
		recent = false
	}
	switch {
	case hard || h.slow >= e.cfg.SlowRun:
		h.healthy = 0
		if adapt && recent {
			f := e.cfg.Decrease
			if !hard {
				f = e.cfg.SlowDecrease
			}
			base := h.Rate
			if e.cfg.DecreaseFromUse {
				base = min(base, e.answering(h, now))
			}
			h.Limit = base
			h.Rate = e.clamp(h, base*f)
			h.lastDecrease, h.lastChange = now, now
			if !hard {
				excess := max(o.Latency-time.Duration(h.BaselineMS*float64(time.Millisecond)), 0)
				h.calmUntil = now.Add(time.Duration(float64(excess) / (1 - f)))
			}
			h.slow, h.books = 0, 0
			res.Decreased = true
		}
	case slow:
		h.healthy = 0
	default:
		h.healthy++
		if adapt && h.healthy >= e.cfg.HealthyRun && now.Sub(h.lastChange) >= e.cfg.ProbeEvery {
			// Grow only a rate that was used: a host asked more slowly than
			// allowed (the fetcher had nothing more, or waited on answers)
			// proved nothing about a higher rate (as TCP's congestion window
			// validation, RFC 7661).
			// Counted up to now, not to the last booking, so that the
			// connections' bursts (exactly paced, then idle) are not mistaken
			// for use.
			used := float64(h.books) / now.Sub(h.bookFirst).Seconds()
			if h.books < e.cfg.HealthyRun || !(used >= 0.9*h.Rate) {
				h.healthy, h.books = 0, 0
				break
			}
			switch {
			case h.Limit <= 0:
				h.Rate *= e.cfg.SlowStart
			case h.Rate < 0.95*h.Limit:
				h.Rate += (h.Limit - h.Rate) / 2
			default:
				h.Rate *= e.cfg.Probe
			}
			h.Rate = e.clamp(h, h.Rate)
			h.healthy, h.books = 0, 0
			h.lastChange = now
		}
	}
	if e.cfg.DecreaseFromUse && answered && !hard {
		h.okStarts = append(h.okStarts, o.Start)
		if len(h.okStarts) > 256 {
			h.okStarts = append(h.okStarts[:0], h.okStarts[128:]...)
		}
	}
	// Space the next start from this one's actual start too, at the new
	// rate, in case the fetcher started late (a busy worker pool) and would
	// otherwise catch up in a burst.
	if r := h.allowed(); r > 0 {
		h.next = laterOf(h.next, o.Start.Add(time.Duration(float64(time.Second)/r)))
	}
	res.Rate = h.allowed()
	if p := h.pauseUntil.Sub(now); p > 0 {
		res.Pause = p
	}
	return res
}

// answering is the rate host h was answering well at: its healthy
// answers started in the last window (up to 5 s, at least 1 s, less the
// time before its first request) over the window; with fewer than two, the
// requests booked since the last change over their time; +Inf if unknown.
func (e *Estimator) answering(h *hostState, now time.Time) float64 {
	w := min(5*time.Second, max(time.Second, now.Sub(h.firstBook)))
	n := 0
	for i := len(h.okStarts) - 1; i >= 0 && now.Sub(h.okStarts[i]) <= w; i-- {
		n++
	}
	if n >= 2 {
		return float64(n) / w.Seconds()
	}
	if h.books > 0 {
		if d := now.Sub(h.bookFirst).Seconds(); d > 0 {
			return float64(h.books) / d
		}
	}
	return math.Inf(1)
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// SetCrawlDelay records a host's robots.txt Crawl-delay (0 removes it). The
// host is never paced faster than one request per Crawl-delay.
func (e *Estimator) SetCrawlDelay(host string, d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.host(host)
	h.CrawlDelayS = max(d.Seconds(), 0)
	h.Rate = e.clamp(h, h.Rate)
}

// Pin fixes a host's rate by hand (requests/s; 0 = do not crawl); a negative
// or NaN rate removes the pin.
func (e *Estimator) Pin(host string, rate float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.host(host)
	if rate >= 0 && !math.IsInf(rate, 0) {
		h.Pinned = &rate
	} else {
		h.Pinned = nil
	}
}

// SetPins replaces every pin by those given (as ReadPins returns them):
// hosts not in pins are unpinned.
func (e *Estimator) SetPins(pins map[string]float64) {
	e.mu.Lock()
	for _, h := range e.hosts {
		h.Pinned = nil
	}
	e.mu.Unlock()
	for host, r := range pins {
		e.Pin(host, r)
	}
}

// HostStatus is a snapshot of one host, for reports.
type HostStatus struct {
	Host       string
	Rate       float64 // allowed rate, requests/s (what Reserve paces by)
	Estimate   float64 // the estimate before pin and Crawl-delay
	Limit      float64 // rate at the last distress; 0 = none known
	Smoothed   float64 // the estimate averaged over Smoothing, pin and Crawl-delay applied (Rates / 86400)
	Baseline   time.Duration
	Failures   int
	RestUntil  time.Time
	Pinned     bool
	CrawlDelay time.Duration
}

// Hosts returns every host's status, sorted by host.
func (e *Estimator) Hosts() []HostStatus {
	now := e.cfg.Clock.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]HostStatus, 0, len(e.hosts))
	for k, h := range e.hosts {
		e.smooth(h, now)
		out = append(out, HostStatus{Host: k, Rate: h.allowed(), Estimate: h.Rate, Limit: h.Limit, Smoothed: h.limited(h.Smooth),
			Baseline: time.Duration(h.BaselineMS * float64(time.Millisecond)), Failures: h.Failures,
			RestUntil: h.RestUntil, Pinned: h.Pinned != nil, CrawlDelay: time.Duration(h.CrawlDelayS * float64(time.Second))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

// smooth brings the smoothed estimate up to now: an exponential average in
// time of the estimate, which held its value since the last update.
func (e *Estimator) smooth(h *hostState, now time.Time) {
	if h.Smooth <= 0 || h.Updated.IsZero() {
		h.Smooth = h.Rate
	} else if dt := now.Sub(h.Updated); dt > 0 {
		h.Smooth += (1 - math.Exp(-float64(dt)/float64(e.cfg.Smoothing))) * (h.Rate - h.Smooth)
	}
	h.Updated = now
}

// Limits returns every host's crawl limit for planning, in crawls per day:
// the k_i recrawl gives each host (WriteHostRates writes them). It is the
// level Rates reports (or the pace, when it has just risen above it) grown
// by the step the estimator's next increase would take: x SlowStart while
// no limit is known, half way to the known limit M below 0.95 M, x Probe
// beyond. A host pinned by hand gets its pin, a resting host its level, and
// Crawl-delay and Ceiling cap it.
//
// Why more than the level: the estimator raises only a rate in use (the
// host asked at 0.9 of it or more), and a crawl whose planner gives a host
// no more URLs than the level can fetch in a slot never uses more than the
// level: the estimate would stay where it is however much the host could
// take. With the headroom the planner hands a host it wants more of a few
// URLs beyond the pace, fetch keeps the host busy (pacing, never faster
// than the estimate), and the estimator can probe; where the crawl wants
// fewer pages than the level the limit does not bind and changes nothing;
// at a host's known limit the headroom is only the probe step (5%), so a
// turn overruns its slot by at most that.
func (e *Estimator) Limits() map[string]float64 {
	return e.perDay(e.planRate)
}

// planRate is a host's estimate grown by its next increase (see Limits).
func (e *Estimator) planRate(h *hostState, now time.Time) float64 {
	level := max(h.Smooth, h.Rate)
	if h.Pinned != nil || now.Before(h.RestUntil) {
		return h.Smooth
	}
	switch {
	case h.Limit <= 0:
		level *= e.cfg.SlowStart
	case level < 0.95*h.Limit:
		level += (h.Limit - level) / 2
	default:
		level *= e.cfg.Probe
	}
	return e.clamp(h, level)
}

// Rates returns every host's crawl rate in crawls per day: the estimate
// averaged over Smoothing (the pacing rate is a saw tooth by design: it
// backs off and probes; a report wants the level), or the pinned rate,
// capped by Crawl-delay. A host pinned to 0 is in the map with 0. recrawl
// plans with Limits, this level plus a probing headroom.
func (e *Estimator) Rates() map[string]float64 {
	return e.perDay(func(h *hostState, _ time.Time) float64 { return h.Smooth })
}

// perDay gives every host's rate, as rate says from its smoothed state,
// limited by its pin and Crawl-delay, in crawls per day.
func (e *Estimator) perDay(rate func(h *hostState, now time.Time) float64) map[string]float64 {
	now := e.cfg.Clock.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	m := make(map[string]float64, len(e.hosts))
	for k, h := range e.hosts {
		e.smooth(h, now)
		m[k] = h.limited(rate(h, now)) * 86400
	}
	return m
}
