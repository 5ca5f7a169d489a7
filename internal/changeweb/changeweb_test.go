package changeweb

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/robots"
)

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func client(s *Server, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: s.DialContext, DisableCompression: true}}
}

func get(t *testing.T, c *http.Client, url string) (int, http.Header, string, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}

var twoHosts = []HostConfig{{Name: "a.test"}, {Name: "b.test"}}

func TestTruthIsDeterministic(t *testing.T) {
	a := start(t, Config{Seed: 5, Hosts: twoHosts})
	b := start(t, Config{Seed: 5, Hosts: twoHosts})
	c := start(t, Config{Seed: 6, Hosts: twoHosts})
	pa, pb, pc := a.Pages(), b.Pages(), c.Pages()
	if len(pa) < 50 || len(pa) != len(pb) {
		t.Fatalf("%d and %d pages", len(pa), len(pb))
	}
	at := a.Clock().Epoch().Add(72 * time.Hour)
	same := 0
	for i := range pa {
		// URLs differ by port only.
		if pa[i].Path != pb[i].Path || pa[i].Rate != pb[i].Rate || pa[i].Noise != pb[i].Noise {
			t.Fatalf("page %d differs: %+v, %+v", i, pa[i], pb[i])
		}
		if va, vb := a.Version(pa[i].Host, pa[i].Path, at), b.Version(pb[i].Host, pb[i].Path, at); va != vb {
			t.Fatalf("%s: version %d and %d at the same time", pa[i].Path, va, vb)
		}
		if i < len(pc) && pc[i].Path == pa[i].Path && pc[i].Rate == pa[i].Rate {
			same++
		}
	}
	if same == len(pa) {
		t.Fatal("another seed gave the same web")
	}
}

// Changes are Poisson with the page's rate: counted over 30 virtual days,
// the total is within 4 standard deviations of sum(rate x 30 days); pages
// that never change never do; the rates spread from never to hourly.
func TestChangesArePoisson(t *testing.T) {
	s := start(t, Config{Seed: 1, Hosts: twoHosts, Articles: 200, Wiki: 100})
	const days = 30
	at := s.Clock().Epoch().Add(days * 24 * time.Hour)
	var want, got float64
	var never, hourly, between int
	for _, p := range s.Pages() {
		v := s.Version(p.Host, p.Path, at)
		switch {
		case p.Rate == 0:
			never++
			if v != 0 {
				t.Fatalf("%s never changes but has version %d", p.Path, v)
			}
		case p.Rate == 24:
			hourly++
		default:
			between++
		}
		if p.Rate < 0 || p.Rate > 24 {
			t.Fatalf("%s: rate %v", p.Path, p.Rate)
		}
		want += p.Rate * days
		got += float64(v)
		// A version never goes down.
		if half := s.Version(p.Host, p.Path, at.Add(-days*12*time.Hour)); half > v {
			t.Fatalf("%s: version %d then %d", p.Path, half, v)
		}
	}
	if never == 0 || hourly == 0 || between == 0 {
		t.Fatalf("rates not spread: %d never, %d hourly, %d between", never, hourly, between)
	}
	if math.Abs(got-want) > 4*math.Sqrt(want) {
		t.Fatalf("%v changes in %d days, want %v +- %v", got, days, want, 4*math.Sqrt(want))
	}
	t.Logf("%d pages: %d never, %d hourly, %d between; %v changes in %d days, expected %.0f", len(s.Pages()), never, hourly, between, got, days, want)
}

// Freshness measured on the truth agrees with its expectation
// sum e^(-delta tau) / n for copies all fetched at one time.
func TestFreshness(t *testing.T) {
	s := start(t, Config{Seed: 2, Hosts: twoHosts, Articles: 300, Wiki: 100})
	fetched := s.Clock().Epoch().Add(24 * time.Hour)
	for _, tau := range []time.Duration{0, time.Hour, 6 * time.Hour, 48 * time.Hour} {
		var copies []Copy
		var want, variance float64
		for _, p := range s.Pages() {
			copies = append(copies, Copy{Host: p.Host, Path: p.Path, Fetched: fetched})
			f := math.Exp(-p.Rate * tau.Hours() / 24)
			want += f
			variance += f * (1 - f)
		}
		n := float64(len(copies))
		got := s.Freshness(copies, fetched.Add(tau))
		if math.Abs(got*n-want) > 4*math.Sqrt(variance)+1e-9 {
			t.Errorf("tau %v: freshness %.4f, expected %.4f +- %.4f", tau, got, want/n, 4*math.Sqrt(variance)/n)
		}
		mean, sd := s.ExpectedFreshness(copies, fetched.Add(tau))
		if math.Abs(mean-want/n) > 1e-9 || math.Abs(sd-math.Sqrt(variance)/n) > 1e-9 {
			t.Errorf("tau %v: ExpectedFreshness %.4f +- %.4f, want %.4f +- %.4f", tau, mean, sd, want/n, math.Sqrt(variance)/n)
		}
		t.Logf("tau %v: freshness %.4f, expected %.4f", tau, got, want/n)
	}
	// Weights count, and an unknown page is stale.
	p := s.Pages()[0]
	cs := []Copy{{Host: p.Host, Path: p.Path, Fetched: fetched, Weight: 3}, {Host: p.Host, Path: "/nowhere", Fetched: fetched}}
	if got := s.Freshness(cs, fetched); got != 0.75 {
		t.Errorf("weighted freshness %v, want 0.75", got)
	}
	if got, sd := s.ExpectedFreshness(cs, fetched); got != 0.75 || sd != 0 {
		t.Errorf("weighted expected freshness %v +- %v, want 0.75 +- 0", got, sd)
	}
	day := fetched.Add(24 * time.Hour)
	cs[0].Weight, cs = 1, cs[:1]
	if got, sd := s.ExpectedFreshness(cs, day); math.Abs(got-math.Exp(-p.Rate)) > 1e-12 || math.Abs(sd-math.Sqrt(got*(1-got))) > 1e-12 {
		t.Errorf("one page of rate %g a day, a day after its fetch: %v +- %v, want e^-rate", p.Rate, got, sd)
	}
}

// Pages served over HTTP change exactly when their version does; noise
// changes the body on every request without a change of version.
func TestServedPagesChange(t *testing.T) {
	s := start(t, Config{Seed: 3, Hosts: twoHosts, Speed: 3600, Articles: 100}) // 1 real second = 1 virtual hour
	c := client(s, 5*time.Second)
	var plain, noisy []PageTruth
	for _, p := range s.Pages() {
		switch {
		case p.Noise == NoNoise && p.Rate == 24 && len(plain) < 12:
			plain = append(plain, p)
		case p.Noise != NoNoise && p.Rate == 0 && len(noisy) < 4:
			noisy = append(noisy, p)
		}
	}
	if len(plain) < 12 || len(noisy) < 2 {
		t.Fatalf("%d plain hourly pages, %d noisy static pages", len(plain), len(noisy))
	}
	type fetch struct {
		body string
		v    int // version, when the same before and after the request; -1 if it moved
	}
	fetchAll := func(ps []PageTruth) []fetch {
		out := make([]fetch, len(ps))
		for i, p := range ps {
			before := s.Version(p.Host, p.Path, s.Clock().Now())
			status, _, body, err := get(t, c, p.URL)
			after := s.Version(p.Host, p.Path, s.Clock().Now())
			if err != nil || status != 200 {
				t.Fatalf("%s: %d %v", p.URL, status, err)
			}
			out[i] = fetch{body, before}
			if before != after {
				out[i].v = -1
			}
		}
		return out
	}
	first, firstNoisy := fetchAll(plain), fetchAll(noisy)
	time.Sleep(1500 * time.Millisecond) // 1.5 virtual hours
	second, secondNoisy := fetchAll(plain), fetchAll(noisy)
	changed := 0
	for i := range plain {
		a, b := first[i], second[i]
		if a.v < 0 || b.v < 0 {
			continue // a change during the request: either body is right
		}
		if (a.body != b.body) != (a.v != b.v) {
			t.Errorf("%s: versions %d, %d but bodies equal: %v", plain[i].Path, a.v, b.v, a.body == b.body)
		}
		if a.v != b.v {
			changed++
			if !strings.Contains(b.body, "Updated "+strconv.Itoa(b.v)+" times") {
				t.Errorf("%s: version %d not in the page", plain[i].Path, b.v)
			}
		}
	}
	if changed == 0 {
		t.Error("none of 12 hourly pages changed over 1.5 virtual hours (chance: 0.22^12)")
	}
	for i, p := range noisy {
		if firstNoisy[i].body == secondNoisy[i].body {
			t.Errorf("%s (noise %d): the same body twice", p.Path, p.Noise)
		}
		if s.Version(p.Host, p.Path, s.Clock().Now()) != 0 {
			t.Errorf("%s: a page that never changes has changed", p.Path)
		}
	}
	t.Logf("%d of %d pages changed over 1.5 virtual hours", changed, len(plain))
}

func TestRobotsCrawlDelay(t *testing.T) {
	s := start(t, Config{Seed: 1, Hosts: []HostConfig{{Name: "a.test", CrawlDelay: 1500 * time.Millisecond}, {Name: "b.test"}}})
	c := client(s, 5*time.Second)
	for host, want := range map[string]time.Duration{"a.test": 1500 * time.Millisecond, "b.test": 0} {
		status, _, body, err := get(t, c, s.URL(host, "/robots.txt"))
		if err != nil || status != 200 {
			t.Fatalf("%s: %d %v", host, status, err)
		}
		g := robots.Parse([]byte(body)).Group("anybot")
		d, ok := g.CrawlDelay()
		if d != want || ok != (want > 0) {
			t.Errorf("%s: Crawl-delay %v %v, want %v", host, d, ok, want)
		}
		if g.Allowed("/search?q=x") {
			t.Errorf("%s: robots.txt lost sitegen's rules", host)
		}
	}
}

// A host of capacity C under a load far above it answers slower as its
// queue grows, then 503 with Retry-After, and serves about C a second; an
// unlimited host under the same load refuses nothing.
func TestCapacity(t *testing.T) {
	const capacity = 20
	s := start(t, Config{Seed: 1, Speed: 1, Hosts: []HostConfig{
		{Name: "small.test", Capacity: capacity, MaxQueue: 300 * time.Millisecond},
		{Name: "big.test"},
	}})
	c := client(s, 5*time.Second)
	load := func(host string) (maxLatency time.Duration, retryAfter []string) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		deadline := time.Now().Add(2 * time.Second)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					t0 := time.Now()
					status, h, _, err := get(t, c, s.URL(host, "/"))
					mu.Lock()
					switch {
					case err != nil:
						t.Errorf("%s: %v", host, err)
					case status == 200:
						maxLatency = max(maxLatency, time.Since(t0))
					case status == 503:
						retryAfter = append(retryAfter, h.Get("Retry-After"))
					}
					mu.Unlock()
					time.Sleep(5 * time.Millisecond)
				}
			}()
		}
		wg.Wait()
		return maxLatency, retryAfter
	}
	lat, ras := load("small.test")
	st := s.Stats("small.test")
	if st.Rejected == 0 || len(ras) != st.Rejected {
		t.Fatalf("small.test: %d 503s counted, %d seen", st.Rejected, len(ras))
	}
	for _, ra := range ras {
		if n, err := strconv.Atoi(ra); err != nil || n < 1 {
			t.Fatalf("Retry-After %q", ra)
		}
	}
	// Served: the capacity over the run, plus what the queue held.
	if most := capacity*2.0 + capacity*0.3 + 5; float64(st.Served) > most || float64(st.Served) < capacity {
		t.Errorf("small.test served %d in 2 s at capacity %d/s", st.Served, capacity)
	}
	if lat < 150*time.Millisecond {
		t.Errorf("small.test: slowest answer %v; an overloaded queue should have slowed it", lat)
	}
	if st.MaxPerSecond <= capacity || st.Requests != st.Served+st.Rejected {
		t.Errorf("small.test stats: %+v", st)
	}
	t.Logf("small.test: %+v, slowest answer %v", st, lat)
	load("big.test")
	if st := s.Stats("big.test"); st.Rejected != 0 || st.Served < 50 {
		t.Errorf("big.test: %+v", st)
	}
	if s.Capacity("small.test") != capacity || s.Capacity("big.test") != 0 {
		t.Error("Capacity does not tell the truth")
	}
}

// The counters a test relies on: the most requests in one second, the
// smallest gap, and how long the client waited after a 503.
func TestStats(t *testing.T) {
	s := start(t, Config{Seed: 1, Hosts: []HostConfig{{Name: "a.test", Capacity: 1, MaxQueue: time.Millisecond, BaseLatency: time.Millisecond}}})
	c := client(s, 5*time.Second)
	var statuses []int
	for range 4 { // back to back: the first is served, the next ones queue past 1ms: 503
		status, _, _, err := get(t, c, s.URL("a.test", "/"))
		if err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, status)
	}
	time.Sleep(1200 * time.Millisecond)
	status, _, _, _ := get(t, c, s.URL("a.test", "/"))
	statuses = append(statuses, status)
	st := s.Stats("a.test")
	if statuses[0] != 200 || statuses[1] != 503 || statuses[4] != 200 {
		t.Fatalf("statuses %v", statuses)
	}
	if st.Requests != 5 || st.MaxPerSecond != 4 || st.MinGap > 500*time.Millisecond || st.MaxWaitAfter503 < 1200*time.Millisecond {
		t.Fatalf("stats %+v", st)
	}
}

func TestDeadHosts(t *testing.T) {
	s := start(t, Config{Seed: 1, Hosts: []HostConfig{{Name: "hang.test", Dead: Hang}, {Name: "refuse.test", Dead: Refuse}, {Name: "ok.test"}}})
	c := client(s, 300*time.Millisecond)
	_, _, _, err := get(t, c, s.URL("hang.test", "/"))
	var ne interface{ Timeout() bool }
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("hang.test: %v, want a timeout", err)
	}
	if st := s.Stats("hang.test"); st.Requests != 1 || st.Served != 0 {
		t.Errorf("hang.test: %+v", st)
	}
	if _, _, _, err := get(t, c, s.URL("refuse.test", "/")); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("refuse.test: %v, want connection refused", err)
	}
	if status, _, _, err := get(t, c, s.URL("ok.test", "/")); err != nil || status != 200 {
		t.Errorf("ok.test: %d %v", status, err)
	}
	if !strings.Contains(s.HostsFile(), s.Addr("refuse.test")[:strings.LastIndexByte(s.Addr("refuse.test"), ':')]+" refuse.test\n") {
		t.Errorf("hosts file %q lacks refuse.test's address %s", s.HostsFile(), s.Addr("refuse.test"))
	}
	// Close cuts off a request that hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL("hang.test", "/"), nil)
		_, err := client(s, 0).Do(req)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a request to a hanging host got an answer")
		}
	case <-ctx.Done(): // only a stuck handler gets here
		t.Fatal("a hanging request outlived Close")
	}
}

func TestClock(t *testing.T) {
	c := NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 3600)
	if c.Real(time.Hour) != time.Second || c.Virtual(time.Second) != time.Hour {
		t.Fatal("conversions")
	}
	a := c.Now()
	if err := c.Sleep(context.Background(), 20*time.Minute); err != nil { // 1/3 s real
		t.Fatal(err)
	}
	if d := c.Now().Sub(a); d < 20*time.Minute {
		t.Fatalf("slept %v virtual, want at least 20m", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); err == nil {
		t.Fatal("Sleep ignored a cancelled context")
	}
	// Skip jumps at once, on top of the running time; a negative one is
	// ignored.
	b := c.Now()
	c.Skip(48 * time.Hour)
	c.Skip(-time.Hour)
	if d := c.Now().Sub(b); d < 48*time.Hour || d > 49*time.Hour {
		t.Fatalf("after skipping 48h the clock moved %v", d)
	}
	if c.Epoch() != time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) {
		t.Fatal("Skip moved the epoch")
	}
}

// Pages change on the virtual clock whether it runs or skips: a skip of a
// day moves an hourly page's version on by about 24.
func TestSkipChangesPages(t *testing.T) {
	s := start(t, Config{Seed: 3, Hosts: twoHosts, HourlyShare: 0.5})
	var changes, hourly int
	before := map[string]int{}
	for _, p := range s.Pages() {
		before[p.Path] = s.Version(p.Host, p.Path, s.Clock().Now())
	}
	s.Clock().Skip(24 * time.Hour)
	for _, p := range s.Pages() {
		if p.Rate == 24 {
			hourly++
			changes += s.Version(p.Host, p.Path, s.Clock().Now()) - before[p.Path]
		}
	}
	// Poisson: mean 24 a page, sd sqrt(24 n) over n pages.
	if want, sd := 24*float64(hourly), math.Sqrt(24*float64(hourly)); hourly == 0 || math.Abs(float64(changes)-want) > 4*sd {
		t.Errorf("%d hourly pages changed %d times over a skipped day, want %.0f +- %.0f", hourly, changes, want, 4*sd)
	}
}
