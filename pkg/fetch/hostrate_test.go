package fetch

import (
	"context"
	"math"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/internal/changeweb"
	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/robots"
)

// changewebConfig is a fetcher for srv: names resolve to the server's
// loopback addresses, politeness per host (all share 127.0.0.1), pacing by
// est on the server's clock.
func changewebConfig(srv *changeweb.Server, est *hostrate.Estimator) Config {
	cfg := testConfig()
	cfg.QueueBy = QueueByHost
	cfg.PerHost = 4
	cfg.Workers = 32
	cfg.HostRates = est
	cfg.Clock = srv.Clock()
	cfg.Delay = time.Second // the pace of a host never seen
	cfg.LookupIP = func(_ context.Context, host string) ([]netip.Addr, error) {
		ap, err := netip.ParseAddrPort(srv.Addr(host))
		if err != nil {
			return nil, err
		}
		return []netip.Addr{ap.Addr()}, nil
	}
	return cfg
}

// pagesByHost lists the URLs of each host's pages that its robots.txt
// allows to fetch, by host name.
func pagesByHost(srv *changeweb.Server) map[string][]string {
	m := map[string][]string{}
	for _, p := range srv.Pages() {
		if robots.Parse([]byte(srv.Robots(p.Host))).Group(robots.ProductToken(DefaultUserAgent)).Allowed(p.Path) {
			m[p.Host] = append(m[p.Host], p.URL)
		}
	}
	return m
}

// cwKey is the key of a changeweb host as fetch and the estimator key it: with the port.
func cwKey(srv *changeweb.Server, name string) string { return name + ":" + strconv.Itoa(srv.Port()) }

// TestHostRatesConverge runs fetch turn after turn on a changing web whose
// hosts serve 2, 5 and 10 requests a (virtual) second, one estimator
// carried from turn to turn through its state file, each turn asking each
// host for about ten seconds of its capacity. The estimates must settle
// within 25% of each capacity, with far fewer 503s than a fixed pace, a
// Crawl-delay must hold and a host pinned to 0 must not be asked.
func TestHostRatesConverge(t *testing.T) {
	const (
		speed   = 5
		turns   = 6
		perTurn = 15.0 // virtual seconds of each host's capacity asked a turn
	)
	hosts := []changeweb.HostConfig{
		{Name: "slow.test", Capacity: 2, MaxQueue: 500 * time.Millisecond},
		{Name: "mid.test", Capacity: 5, MaxQueue: 500 * time.Millisecond},
		{Name: "fast.test", Capacity: 10, MaxQueue: 500 * time.Millisecond},
		{Name: "delay.test", Capacity: 50, CrawlDelay: time.Second},
		{Name: "zero.test", Capacity: 50},
	}
	srv, err := changeweb.Start(changeweb.Config{Seed: 3, Hosts: hosts, Speed: speed, Articles: 160 * len(hosts), Wiki: 10 * len(hosts)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hcfg := hostrate.Config{Initial: 1, Floor: 0.5, Ceiling: 100, HealthyRun: 5, ProbeEvery: time.Second,
		SlowRun: 3, MaxRetryAfter: 2 * time.Second, DeadAfter: 3, Rest: time.Hour, Smoothing: 10 * time.Second,
		BaselineWindow: 30 * time.Second, Clock: srv.Clock()}
	state := t.TempDir() + "/hostrates.json"
	pages := pagesByHost(srv)
	next := map[string]int{}
	var rejected [turns]int // 503s of the three capacity hosts, per turn
	var samples = map[string][]float64{}
	for turn := 0; turn < turns; turn++ {
		est, err := hostrate.Load(state, hcfg)
		if err != nil {
			t.Fatal(err)
		}
		est.Pin(cwKey(srv, "zero.test"), 0)
		var in []string
		for _, h := range hosts {
			n := int(math.Max(h.Capacity*perTurn, 1))
			if h.Capacity > 20 {
				n = 8
			}
			ps := pages[h.Name]
			if n > len(ps) {
				t.Fatalf("%s: %d pages, %d wanted a turn", h.Name, len(ps), n)
			}
			for i := 0; i < n; i++ {
				in = append(in, ps[(next[h.Name]+i)%len(ps)])
			}
			next[h.Name] += n
		}
		before := map[string]int{}
		for _, h := range hosts[:3] {
			before[h.Name] = srv.Stats(h.Name).Rejected
		}
		// Sample the pacing rate during the later turns.
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		if turn >= turns/2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for srv.Clock().Sleep(ctx, 500*time.Millisecond) == nil {
					for _, h := range hosts[:3] {
						samples[h.Name] = append(samples[h.Name], est.Rate(cwKey(srv, h.Name)))
					}
				}
			}()
		}
		out := runFetch(t, changewebConfig(srv, est), in...)
		cancel()
		wg.Wait()
		for _, h := range hosts[:3] {
			rejected[turn] += srv.Stats(h.Name).Rejected - before[h.Name]
		}
		codes := map[string]int{}
		for _, e := range out {
			codes[errCode(e.rec)]++
		}
		if err := est.Save(state); err != nil {
			t.Fatal(err)
		}
		var rates []string
		for _, h := range hosts {
			rates = append(rates, h.Name+"="+ftoa(est.Rate(cwKey(srv, h.Name))))
		}
		t.Logf("turn %d: %d URLs, errors %v, 503s %d, rates %s", turn, len(in), codes, rejected[turn], strings.Join(rates, " "))
		if codes[CodePinned] != 8 {
			t.Errorf("turn %d: %d URLs of zero.test written as pinned, want 8", turn, codes[CodePinned])
		}
	}

	est, err := hostrate.Load(state, hcfg)
	if err != nil {
		t.Fatal(err)
	}
	rates := est.Rates()
	for _, h := range hosts[:3] {
		med := median(samples[h.Name])
		smoothed := rates[cwKey(srv, h.Name)] / 86400
		t.Logf("%s: capacity %.0f/s, pacing rate in the later turns: median %.2f (%d samples); smoothed estimate %.2f", h.Name, h.Capacity, med, len(samples[h.Name]), smoothed)
		if len(samples[h.Name]) < 10 {
			t.Errorf("%s: only %d samples", h.Name, len(samples[h.Name]))
		}
		if math.Abs(med/h.Capacity-1) > 0.25 {
			t.Errorf("%s: median pacing rate %.2f/s not within 25%% of the capacity %.0f/s", h.Name, med, h.Capacity)
		}
		// The smoothed estimate saved at the end lags the pacing rate and
		// dips when a loaded machine makes answers slow (the convergence of
		// the estimate itself is pkg/hostrate's TestConvergence): it must
		// not overshoot the capacity, nor lose more than half of it.
		if smoothed > 1.25*h.Capacity || smoothed < 0.5*h.Capacity {
			t.Errorf("%s: smoothed estimate %.2f/s outside [0.5, 1.25] of the capacity %.0f/s", h.Name, smoothed, h.Capacity)
		}
	}
	// A control turn on the same URLs at a fixed pace (no estimator, no
	// delay, the same connections) meets many more 503s than the
	// estimator's last turn.
	ctl := changewebConfig(srv, nil)
	ctl.HostRates, ctl.Delay = nil, NoDelay
	var in []string
	before := 0
	for _, h := range hosts[:3] {
		in = append(in, pages[h.Name][:int(h.Capacity*perTurn)]...)
		before += srv.Stats(h.Name).Rejected
	}
	runFetch(t, ctl, in...)
	control := -before
	for _, h := range hosts[:3] {
		control += srv.Stats(h.Name).Rejected
	}
	t.Logf("503s: estimator's turns %v; a turn at a fixed pace %d", rejected, control)
	if control == 0 || rejected[turns-1]*4 > control {
		t.Errorf("503s in the estimator's last turn %d, at a fixed pace %d: want at most a quarter", rejected[turns-1], control)
	}
	// Crawl-delay 1s: never paced faster, whatever the capacity.
	if r := est.Rate(cwKey(srv, "delay.test")); r > 1 {
		t.Errorf("delay.test: rate %.2f/s over its Crawl-delay of 1s", r)
	}
	// The server's arrival times carry scheduler jitter (one late arrival
	// bunches with the next), so it is checked by counts: a second holds
	// at most two arrivals paced one a second, four at the connections' pace.
	if st := srv.Stats("delay.test"); st.MaxPerSecond > 2 {
		t.Errorf("delay.test: %d requests within a second; Crawl-delay is 1s", st.MaxPerSecond)
	}
	if st := srv.Stats("zero.test"); st.Requests != 0 {
		t.Errorf("zero.test (pinned to 0): %d requests", st.Requests)
	}
}

// TestHostRatesDeferDeadHosts: hosts that hang or refuse connections cost
// a few requests, not every URL its timeout and retries: once the
// estimator rests them, their remaining URLs are written out with code
// "resting", while a live host in the same run is fetched in full.
func TestHostRatesDeferDeadHosts(t *testing.T) {
	const perHost = 30
	hosts := []changeweb.HostConfig{
		{Name: "hang.test", Dead: changeweb.Hang},
		{Name: "refuse.test", Dead: changeweb.Refuse},
		{Name: "live.test", Capacity: 50},
	}
	srv, err := changeweb.Start(changeweb.Config{Seed: 5, Hosts: hosts, Speed: 5, Articles: 35 * len(hosts), Wiki: 5 * len(hosts)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	est := hostrate.New(hostrate.Config{Initial: 5, DeadAfter: 3, Rest: time.Hour, Clock: srv.Clock()})
	cfg := changewebConfig(srv, est)
	cfg.IgnoreRobots = true // the pages, not robots.txt, stop answering
	cfg.Timeout = 300 * time.Millisecond
	cfg.ReadTimeout = 300 * time.Millisecond
	cfg.Delay = 200 * time.Millisecond
	var in []string
	pages := pagesByHost(srv)
	for _, h := range hosts {
		if len(pages[h.Name]) < perHost {
			t.Fatalf("%s: %d pages", h.Name, len(pages[h.Name]))
		}
		in = append(in, pages[h.Name][:perHost]...)
	}
	out := runFetch(t, cfg, in...)
	codes := map[string]map[string]int{}
	for u, e := range out {
		pu, _ := url.Parse(u)
		h := pu.Hostname()
		if codes[h] == nil {
			codes[h] = map[string]int{}
		}
		codes[h][errCode(e.rec)]++
	}
	t.Logf("codes by host: %v; hang.test saw %d requests", codes, srv.Stats("hang.test").Requests)
	// DeadAfter failures, plus the requests already in flight on the
	// host's other connections, plus their retries booked before the rest.
	maxTried := 3 + cfg.PerHost - 1
	for _, h := range []string{"hang.test", "refuse.test"} {
		tried := perHost - codes[h][CodeResting]
		if codes[h][CodeResting] == 0 || tried > maxTried {
			t.Errorf("%s: %d URLs tried, %d deferred as resting; want at most %d tried", h, tried, codes[h][CodeResting], maxTried)
		}
		if codes[h][""] != 0 {
			t.Errorf("%s: %d URLs fetched from a dead host", h, codes[h][""])
		}
	}
	if n := srv.Stats("hang.test").Requests; n > maxTried*(1+2) { // each tried URL and its 2 retries
		t.Errorf("hang.test: %d requests reached the server", n)
	}
	if codes["live.test"][""] != perHost {
		t.Errorf("live.test: %v, want all %d fetched", codes["live.test"], perHost)
	}
	for _, e := range out {
		if errCode(e.rec) == CodeResting && !strings.Contains(str(e.rec, "error"), "rests until") {
			t.Errorf("resting record without the reason: %s", str(e.rec, "error"))
			break
		}
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[len(s)/2]
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
