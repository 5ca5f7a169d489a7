// Package changeweb is a web that changes, served over real HTTP on a
// loopback address, with the truth exposed to tests: it exists so that the
// two measurements a real crawl cannot check — each host's crawl-rate
// capacity and the crawl's weighted freshness, sum w e^(-delta tau) / sum w
// in "Crawling the internet: data science within a large engineering system"
// (Bill Richoux, 2018) — can be checked against known values.
//
// The pages and links are internal/sitegen's (Generate and Render, used
// read-only); changeweb replaces sitegen's day-granular versions with its own
// continuous ones: every page changes as a Poisson process of a known rate,
// drawn per page from the seed (a share never change, a share change about
// hourly, the rest log-uniformly in between), on a virtual Clock that runs
// Speed times faster than real time. Some pages also carry a timestamp or a
// visit counter that differs on every request without being a meaningful
// change, so that a change detector has something to be fooled by: the truth
// (Version) counts only meaningful changes.
//
// Each host has a capacity C in requests per virtual second. The host is a
// single queue served at C: a request that arrives while earlier work is
// unfinished waits (its answer slows down as the queue grows, the early
// warning Heritrix-like and delay-based estimators look for), and once the
// wait would exceed the host's MaxQueue it is refused with 503 and a
// Retry-After. A host can be dead: it accepts connections and never answers
// (Hang), or refuses them (Refuse: its name resolves to a loopback address
// nothing listens on). robots.txt is sitegen's, with an optional Crawl-delay.
//
// The server counts, per host, the requests it received, answered and
// refused, the most requests received within any one virtual second, the
// smallest gap between two requests and the longest wait a client took after
// a 503: the counters tests use to check that a crawler obeyed limits.
//
// Everything but real-time scheduling is deterministic for a seed.
package changeweb

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sekitei/crawlkit/internal/sitegen"
)

// Dead says how a dead host fails.
type Dead int

const (
	Alive  Dead = iota
	Hang        // accepts connections, reads the request, never answers
	Refuse      // connections are refused
)

// HostConfig describes one host.
type HostConfig struct {
	Name        string
	Capacity    float64       // requests per virtual second served without queueing; 0 = unlimited
	MaxQueue    time.Duration // longest queue wait before 503s (virtual; default 1s)
	BaseLatency time.Duration // answer time of an idle host (virtual; default 10ms)
	CrawlDelay  time.Duration // robots.txt Crawl-delay for every agent; 0 = none (whole seconds or fractions, written as seconds)
	RetryAfter  string        // Retry-After value sent with 503s; "" = the queue's wait in whole seconds (at least 1)
	Dead        Dead
}

// Config describes the web.
type Config struct {
	Seed     uint64
	Hosts    []HostConfig
	Articles int       // sitegen articles over all hosts (default 20 per host)
	Wiki     int       // sitegen encyclopedia pages over all hosts (default 10 per host)
	Speed    float64   // virtual seconds per real second (default 1)
	Epoch    time.Time // virtual time at start (default 2026-01-01T00:00:00Z)
	Clock    *Clock    // a clock to share; when set, Speed and Epoch are ignored

	// Shares of pages by change rate and noise; zero values take the defaults.
	NeverShare  float64 // pages that never change (default 0.2)
	HourlyShare float64 // pages that change MaxRate times a day (default 0.1)
	MinRate     float64 // lowest rate of the others, changes per day (default 0.1)
	MaxRate     float64 // the fastest pages' rate, changes per day (default 24: hourly)
	NoiseShare  float64 // pages with a timestamp or counter in the body (default 0.2, half each)
}

// Noise is what changes in a page on every request without being a
// meaningful change.
type Noise int

const (
	NoNoise   Noise = iota
	Timestamp       // the virtual time of the request
	Counter         // the number of requests the page has served
)

// PageTruth is what the server knows about a page.
type PageTruth struct {
	URL   string
	Host  string
	Path  string  // with query
	Rate  float64 // meaningful changes per day (Poisson); 0 = never
	Noise Noise
}

// HostStats are a host's counters, in virtual time.
type HostStats struct {
	Requests        int           // received, answered or not (robots.txt included)
	Served          int           // answered with the page, robots.txt or 404
	Rejected        int           // answered 503
	MaxPerSecond    int           // most requests received within any one virtual second
	MinGap          time.Duration // smallest gap between two consecutive requests (0 with fewer than 2)
	MaxWaitAfter503 time.Duration // longest gap between a 503 and the next request
	First, Last     time.Time     // first and last arrivals
}

// Server serves the web. Start it with Start; Close it when done.
type Server struct {
	cfg    Config
	clock  *Clock
	web    *sitegen.Web
	ln     net.Listener
	srv    *http.Server
	port   int
	addrs  map[string]string // host -> ip:port to dial
	hosts  map[string]*host
	pages  map[string]*page // host + path
	order  []*page
	done   chan struct{}
	closed sync.Once
}

type host struct {
	cfg HostConfig
	ip  string

	mu       sync.Mutex
	work     float64 // virtual seconds of queued work at last
	last     float64 // virtual seconds since epoch of the last arrival
	stats    HostStats
	window   []time.Time // arrivals in the last virtual second
	last503  time.Time
	pending  bool // a 503 was sent and no request came since
	lastSeen time.Time
}

type page struct {
	truth PageTruth
	sp    *sitegen.Page

	mu     sync.Mutex
	rng    *rand.Rand
	events []float64 // change times, virtual seconds since epoch, ascending
	next   float64   // the first change not yet in events
	visits int
}

// Start generates the web and serves it on 127.0.0.1 on a free port.
func Start(cfg Config) (*Server, error) {
	if len(cfg.Hosts) == 0 {
		return nil, errors.New("changeweb: no hosts")
	}
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.NeverShare, 0.2)
	def(&cfg.HourlyShare, 0.1)
	def(&cfg.MinRate, 0.1)
	def(&cfg.MaxRate, 24)
	def(&cfg.NoiseShare, 0.2)
	if cfg.Articles == 0 {
		cfg.Articles = 20 * len(cfg.Hosts)
	}
	if cfg.Wiki == 0 {
		cfg.Wiki = 10 * len(cfg.Hosts)
	}
	if cfg.Epoch.IsZero() {
		cfg.Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	s := &Server{cfg: cfg, clock: cfg.Clock, addrs: map[string]string{}, hosts: map[string]*host{},
		pages: map[string]*page{}, done: make(chan struct{})}
	if s.clock == nil {
		s.clock = NewClock(cfg.Epoch, cfg.Speed)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("changeweb: %w", err)
	}
	s.ln = ln
	s.port = ln.Addr().(*net.TCPAddr).Port
	names := make([]string, len(cfg.Hosts))
	for i, hc := range cfg.Hosts {
		hc.Name = strings.ToLower(hc.Name)
		if hc.MaxQueue == 0 {
			hc.MaxQueue = time.Second
		}
		if hc.BaseLatency == 0 {
			hc.BaseLatency = 10 * time.Millisecond
		}
		if _, dup := s.hosts[hc.Name]; dup || hc.Name == "" {
			ln.Close()
			return nil, fmt.Errorf("changeweb: host %q empty or repeated", hc.Name)
		}
		h := &host{cfg: hc, ip: "127.0.0.1"}
		if hc.Dead == Refuse {
			if h.ip, err = refusingIP(s.port); err != nil {
				ln.Close()
				return nil, err
			}
		}
		s.hosts[hc.Name] = h
		s.addrs[hc.Name] = net.JoinHostPort(h.ip, strconv.Itoa(s.port))
		names[i] = hc.Name
	}
	s.web = sitegen.Generate(sitegen.Config{Seed: cfg.Seed, Hosts: names, Port: s.port, Articles: cfg.Articles, Wiki: cfg.Wiki})
	for _, sp := range s.web.Pages {
		p := s.newPage(sp)
		s.pages[sp.Host+sp.Path] = p
		s.order = append(s.order, p)
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// refusingIP finds a loopback address other than 127.0.0.1 where nothing
// listens on port, so that connecting to it is refused.
func refusingIP(port int) (string, error) {
	for i := 2; i < 250; i++ {
		ip := fmt.Sprintf("127.0.0.%d", i)
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			continue
		}
		return ip, nil
	}
	return "", errors.New("changeweb: no free loopback address for a refusing host")
}

// newPage draws a page's change rate and noise from its own stream, so that
// they do not depend on the other pages.
func (s *Server) newPage(sp *sitegen.Page) *page {
	seed := hash(sp.Host + sp.Path)
	r := rand.New(rand.NewPCG(s.cfg.Seed, seed))
	var rate float64
	switch u := r.Float64(); {
	case u < s.cfg.NeverShare:
		rate = 0
	case u < s.cfg.NeverShare+s.cfg.HourlyShare:
		rate = s.cfg.MaxRate
	default: // log-uniform in [MinRate, MaxRate)
		rate = s.cfg.MinRate * math.Pow(s.cfg.MaxRate/s.cfg.MinRate, r.Float64())
	}
	noise := NoNoise
	if u := r.Float64(); u < s.cfg.NoiseShare/2 {
		noise = Timestamp
	} else if u < s.cfg.NoiseShare {
		noise = Counter
	}
	p := &page{sp: sp, truth: PageTruth{URL: s.web.Config.URL(sp.Host, sp.Path), Host: sp.Host, Path: sp.Path, Rate: rate, Noise: noise},
		rng: rand.New(rand.NewPCG(s.cfg.Seed^0x636861, seed)), next: math.Inf(1)}
	if rate > 0 {
		p.next = p.rng.ExpFloat64() / (rate / 86400)
	}
	return p
}

// version returns the number of changes in [epoch, at), at in virtual
// seconds since the epoch.
func (p *page) version(at float64) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.next < at {
		p.events = append(p.events, p.next)
		p.next += p.rng.ExpFloat64() / (p.truth.Rate / 86400)
	}
	return sort.SearchFloat64s(p.events, at)
}

// Close stops the server; hanging requests are cut off.
func (s *Server) Close() error {
	s.closed.Do(func() { close(s.done) })
	return s.srv.Close()
}

// Clock returns the server's virtual clock.
func (s *Server) Clock() *Clock { return s.clock }

// Port returns the port every host is served on.
func (s *Server) Port() int { return s.port }

// URL returns the absolute URL of a path on a host.
func (s *Server) URL(host, path string) string { return s.web.Config.URL(host, path) }

// Addr returns the address (ip:port) to dial for a host.
func (s *Server) Addr(host string) string { return s.addrs[strings.ToLower(host)] }

// HostsFile returns the hosts' addresses in /etc/hosts form (for fetch --hosts-file).
func (s *Server) HostsFile() string {
	var b strings.Builder
	for _, hc := range s.cfg.Hosts {
		fmt.Fprintf(&b, "%s %s\n", s.hosts[strings.ToLower(hc.Name)].ip, strings.ToLower(hc.Name))
	}
	return b.String()
}

// DialContext dials a host of the web by name (the port is the server's);
// other addresses are dialled as given. For an http.Transport.
func (s *Server) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		if a, ok := s.addrs[strings.ToLower(h)]; ok {
			addr = a
		}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// Pages returns the truth of every page, in a fixed order (robots.txt excluded).
func (s *Server) Pages() []PageTruth {
	out := make([]PageTruth, len(s.order))
	for i, p := range s.order {
		out[i] = p.truth
	}
	return out
}

// Truth returns what the server knows about a page given by host and path.
func (s *Server) Truth(host, path string) (PageTruth, bool) {
	p, ok := s.pages[strings.ToLower(host)+path]
	if !ok {
		return PageTruth{}, false
	}
	return p.truth, true
}

// Version returns the number of meaningful changes a page has had by the
// virtual time at (-1 for an unknown page).
func (s *Server) Version(host, path string, at time.Time) int {
	p, ok := s.pages[strings.ToLower(host)+path]
	if !ok {
		return -1
	}
	return p.version(at.Sub(s.clock.Epoch()).Seconds())
}

// Capacity returns a host's true capacity in requests per virtual second
// (0: unlimited).
func (s *Server) Capacity(host string) float64 {
	if h, ok := s.hosts[strings.ToLower(host)]; ok {
		return h.cfg.Capacity
	}
	return 0
}

// Stats returns a host's counters.
func (s *Server) Stats(host string) HostStats {
	h, ok := s.hosts[strings.ToLower(host)]
	if !ok {
		return HostStats{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// Copy is a crawler's copy of a page: fetched at a virtual time, with a weight.
type Copy struct {
	Host, Path string
	Fetched    time.Time
	Weight     float64 // <= 0 counts as 1
}

// Freshness returns the weighted share of copies that are fresh at the
// virtual time at, sum w [no meaningful change since the fetch] / sum w:
// the objective of Richoux (2018), measured on the truth. Unknown pages
// count as stale.
func (s *Server) Freshness(copies []Copy, at time.Time) float64 {
	var fresh, total float64
	for _, c := range copies {
		w := c.Weight
		if w <= 0 {
			w = 1
		}
		total += w
		if v := s.Version(c.Host, c.Path, c.Fetched); v >= 0 && v == s.Version(c.Host, c.Path, at) {
			fresh += w
		}
	}
	if total == 0 {
		return 0
	}
	return fresh / total
}

// ExpectedFreshness returns the expectation of Freshness given only when
// each copy was fetched, sum w e^(-rate tau) / sum w (a Poisson page is
// unchanged tau after a fetch with probability e^(-rate tau), whatever
// came before), and the standard deviation of Freshness about it, sqrt(sum
// w^2 p (1 - p)) / sum w: what an estimator of freshness targets, without
// the noise of one realisation of the changes. Unknown pages count as
// stale.
func (s *Server) ExpectedFreshness(copies []Copy, at time.Time) (mean, sd float64) {
	var fresh, variance, total float64
	for _, c := range copies {
		w := c.Weight
		if w <= 0 {
			w = 1
		}
		total += w
		p, ok := s.pages[strings.ToLower(c.Host)+c.Path]
		if !ok {
			continue
		}
		f := math.Exp(-p.truth.Rate / 86400 * math.Max(0, at.Sub(c.Fetched).Seconds()))
		fresh += w * f
		variance += w * w * f * (1 - f)
	}
	if total == 0 {
		return 0, 0
	}
	return fresh / total, math.Sqrt(variance) / total
}

// Robots returns a host's robots.txt.
func (s *Server) Robots(name string) string {
	h := s.hosts[strings.ToLower(name)]
	if h == nil || h.cfg.CrawlDelay <= 0 {
		return sitegen.Robots
	}
	// Crawl-delay goes into the * group, the one an ordinary crawler obeys.
	d := strconv.FormatFloat(h.cfg.CrawlDelay.Seconds(), 'f', -1, 64)
	return strings.Replace(sitegen.Robots, "User-agent: *\n", "User-agent: *\nCrawl-delay: "+d+"\n", 1)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	name := strings.ToLower(r.Host)
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	h, ok := s.hosts[name]
	if !ok {
		http.Error(w, "no such host", http.StatusMisdirectedRequest)
		return
	}
	now := s.clock.Now()
	wait, ok, retry := h.admit(now, now.Sub(s.clock.Epoch()).Seconds())
	if h.cfg.Dead == Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		// Cut the connection: a handler that returns would answer 200.
		panic(http.ErrAbortHandler)
	}
	if !ok {
		s.sleep(r.Context(), h.cfg.BaseLatency)
		w.Header().Set("Retry-After", retry)
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
		return
	}
	if !s.sleep(r.Context(), h.cfg.BaseLatency+wait) {
		panic(http.ErrAbortHandler) // closing: no half-made answer
	}
	if r.URL.Path == "/robots.txt" {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, s.Robots(name))
		return
	}
	p, ok := s.pages[name+r.URL.RequestURI()]
	if !ok {
		http.NotFound(w, r)
		return
	}
	// The page as it is when the answer is written.
	at := s.clock.Now()
	v := p.version(at.Sub(s.clock.Epoch()).Seconds())
	cp := *p.sp
	cp.Version = v
	body := s.web.Render(&cp)
	switch p.truth.Noise {
	case Timestamp:
		body = strings.Replace(body, "</body>", "<p class=\"generated\">Generated "+at.UTC().Format(time.RFC3339Nano)+"</p></body>", 1)
	case Counter:
		p.mu.Lock()
		p.visits++
		n := p.visits
		p.mu.Unlock()
		body = strings.Replace(body, "</body>", "<p class=\"visits\">Visitor number "+strconv.Itoa(n)+"</p></body>", 1)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, body)
}

// sleep waits a virtual duration; false if the client went away or the
// server closed.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(s.clock.Real(d))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// admit counts an arrival and runs the host's queue: the host works through
// one request in 1/C virtual seconds; a request waits for the work queued
// before it, and is refused when that wait would exceed MaxQueue.
func (h *host) admit(now time.Time, t float64) (wait time.Duration, ok bool, retryAfter string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := &h.stats
	if st.Requests > 0 {
		if gap := now.Sub(h.lastSeen); st.Requests == 1 || gap < st.MinGap {
			st.MinGap = max(gap, 0)
		}
	} else {
		st.First = now
	}
	if h.pending {
		st.MaxWaitAfter503 = max(st.MaxWaitAfter503, now.Sub(h.last503))
		h.pending = false
	}
	st.Requests++
	st.Last, h.lastSeen = now, now
	h.window = append(h.window, now)
	cut := 0
	for cut < len(h.window) && now.Sub(h.window[cut]) >= time.Second {
		cut++
	}
	h.window = h.window[cut:]
	st.MaxPerSecond = max(st.MaxPerSecond, len(h.window))
	if h.cfg.Dead != Alive {
		return 0, false, ""
	}
	if h.cfg.Capacity <= 0 {
		st.Served++
		return 0, true, ""
	}
	work := max(0, h.work-(t-h.last))
	h.last = t
	if work > h.cfg.MaxQueue.Seconds() {
		h.work = work
		st.Rejected++
		h.last503, h.pending = now, true
		retryAfter = h.cfg.RetryAfter
		if retryAfter == "" {
			retryAfter = strconv.Itoa(max(1, int(math.Ceil(work))))
		}
		return 0, false, retryAfter
	}
	h.work = work + 1/h.cfg.Capacity
	st.Served++
	return time.Duration(work * float64(time.Second)), true, ""
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
