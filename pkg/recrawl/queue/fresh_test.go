package queue_test

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/internal/changeweb"
	"github.com/sekitei/crawlkit/pkg/fetch"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
)

// TestFreshnessTracksTruth crawls a changing web turn by turn, as the loop
// does (recrawl next, fetch over loopback HTTP, recrawl update), and
// compares the state's estimated weighted freshness with the truth the web
// knows. After a warm-up in which the change rates are learnt, at every
// turn:
//
//   - the estimate is within 0.05 of the expected freshness of the crawl's
//     copies, sum w e^(-delta_i tau_i) / sum w with each page's true rate
//     delta_i: the quantity the estimate targets, free of the noise of one
//     realisation of the changes;
//   - the realised freshness (the weighted share of copies with no change
//     since their fetch) is within 4 of its standard deviations of that
//     expectation, and so within 0.05 + 4 sd of the estimate (sd about
//     0.017 over these 311 pages).
//
// The generated web's ?print=1 copies name their page as canonical: they
// are retired after their first fetch and leave both the estimate and the
// truth. The observed freshness of each turn's recrawls is recorded too.
// The clock skips the idle part of each hour, so the run takes seconds and
// a loaded machine does not stretch the turns; the estimate overshoots by
// up to 0.07 around turn 17 (pages still on the prior) and stays within
// 0.015 from turn 25 on.
func TestFreshnessTracksTruth(t *testing.T) {
	const (
		turns   = 80
		warmup  = 40
		perTurn = 60
		within  = 0.05
		sds     = 4
	)
	hosts := []changeweb.HostConfig{{Name: "a.test"}, {Name: "b.test"}, {Name: "c.test"}, {Name: "d.test"}}
	// One virtual hour a turn: a turn's fetches take a virtual minute or
	// so, and the clock skips the rest of the hour.
	srv, err := changeweb.Start(changeweb.Config{Seed: 11, Hosts: hosts, Speed: 600, Articles: 160, Wiki: 40,
		NoiseShare: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	clock := srv.Clock()
	q, err := queue.Open(t.TempDir()+"/crawl.recrawl", queue.Options{NoSync: true,
		// The prior at the web's scale (its rates are 0.1 to 24 a day,
		// 1.5 their geometric middle), worth half a day: the default
		// (0.2 a day, worth 7 days) suits a web that changes weekly and
		// would take weeks of virtual turns to be outweighed here.
		Update: queue.UpdateOptions{Prior: recrawl.Prior{Rate: 1.5, Days: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()

	weight := func(url string) float64 { return float64(1 + len(url)%4) } // uneven weights
	var seeds []queue.Discovery
	var weights []queue.Weight
	for _, p := range srv.Pages() {
		seeds = append(seeds, queue.Discovery{URL: p.URL, Host: p.Host})
		weights = append(weights, queue.Weight{URL: p.URL, Host: p.Host, Importance: weight(p.URL)})
	}
	copies := map[string]changeweb.Copy{}
	retired := 0
	var worst, worstRealised float64
	var start time.Time
	for turn := 0; turn < turns; turn++ {
		if turn > 0 { // each turn an hour after the one before began
			clock.Skip(start.Add(time.Hour).Sub(clock.Now()))
		}
		now := clock.Now()
		start = now
		id := fmt.Sprintf("%06d-%s", turn, now.UTC().Format("20060102T150405Z"))
		var urls []string
		if turn > 0 {
			cands, _, err := q.Next(queue.NextOptions{Now: now, N: perTurn, Slot: 1.0 / 24, Rate: 4 * perTurn * 24})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cands {
				if _, ok := truthOf(srv, c.URL); !ok {
					t.Fatalf("%s offered: not a page of the web", c.URL)
				}
				urls = append(urls, c.URL)
			}
		}
		fetches := fetchAt(t, srv, urls)
		b := queue.Batch{Now: now, Fetches: fetches}
		if turn == 0 {
			b.Discovered, b.Weights = seeds, weights
		}
		st, err := q.Apply(id, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fetches {
			if f.Failed() {
				continue
			}
			tr, ok := truthOf(srv, f.URL)
			if !ok {
				t.Fatalf("%s: not a page of the web", f.URL)
			}
			if _, known := copies[f.URL]; f.Canonical != "" {
				// Retired for its canonical: the crawl no longer keeps it.
				if known {
					t.Errorf("%s fetched again after its retirement", f.URL)
				}
				retired++
				continue
			}
			copies[f.URL] = changeweb.Copy{Host: tr.Host, Path: tr.Path, Fetched: f.At, Weight: weight(f.URL)}
		}
		at := clock.Now()
		est, _, err := q.Freshness(at)
		if err != nil {
			t.Fatal(err)
		}
		cs := make([]changeweb.Copy, 0, len(copies))
		for _, c := range copies {
			cs = append(cs, c)
		}
		expected, sd := srv.ExpectedFreshness(cs, at)
		realised := srv.Freshness(cs, at)
		t.Logf("turn %2d: %2d fetched, %3d kept, %2d retired; freshness estimated %.3f, expected %.3f (%+.3f), realised %.3f (sd %.3f); observed this turn %.3f of weight %.0f",
			turn, len(fetches), len(copies), retired, est, expected, est-expected, realised, sd, st.Observed, st.RecrawledWeight)
		if turn < warmup {
			continue
		}
		if st.RecrawledWeight <= 0 {
			t.Errorf("turn %d: no recrawl observed", turn)
		}
		worst = math.Max(worst, math.Abs(est-expected))
		if math.Abs(est-expected) > within {
			t.Errorf("turn %d: estimated freshness %.3f, expected %.3f: more than %g apart", turn, est, expected, within)
		}
		worstRealised = math.Max(worstRealised, math.Abs(realised-expected)/sd)
		if math.Abs(realised-expected) > sds*sd {
			t.Errorf("turn %d: realised freshness %.3f, expected %.3f: more than %d sd (%.3f) apart", turn, realised, expected, sds, sd)
		}
		if math.Abs(est-realised) > within+sds*sd {
			t.Errorf("turn %d: estimated freshness %.3f, realised %.3f: more than %g + %d sd (%.3f) apart", turn, est, realised, within, sds, sd)
		}
	}
	t.Logf("after warm-up: largest gap to the expectation %.3f; realised at most %.1f sd from it; %d copies retired", worst, worstRealised, retired)
	if retired == 0 {
		t.Error("no ?print=1 copy retired for its canonical")
	}
	h, err := q.History()
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != turns || h[turns-1].Estimated <= 0 || h[turns-1].Observed < 0 {
		t.Errorf("history: %d entries, last %+v", len(h), h[len(h)-1])
	}
}

// fetchAt fetches urls from srv with pkg/fetch and returns the fetches,
// each timed when its record came out, on the web's clock.
func fetchAt(t *testing.T, srv *changeweb.Server, urls []string) []queue.Fetch {
	t.Helper()
	if len(urls) == 0 {
		return nil
	}
	var mu sync.Mutex
	var out []queue.Fetch
	cfg := fetch.Config{AllowPrivate: true, Delay: fetch.NoDelay, Workers: 16, PerHost: 8, QueueBy: fetch.QueueByHost,
		IgnoreRobots: true, Retries: fetch.NoRetries,
		LookupIP: func(_ context.Context, host string) ([]netip.Addr, error) {
			ap, err := netip.ParseAddrPort(srv.Addr(host))
			return []netip.Addr{ap.Addr()}, err
		}}
	cfg.Emit = func(r *record.Record) error {
		at := srv.Clock().Now()
		f, err := queue.ParseFetch(r)
		if err != nil {
			return err
		}
		f.At = at
		f.Links = nil // the web's pages are its seeds; links add only other spellings of them
		// Changes are told by the digest: the SimHash's threshold misses
		// changeweb's small meaningful edits (see the report), and the
		// pages carry no noise here, so every new digest is a real change.
		f.HasSim = false
		mu.Lock()
		out = append(out, f)
		mu.Unlock()
		return nil
	}
	f, err := fetch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Run(context.Background(), func(add func(*record.Record) error) error {
		for i, u := range urls {
			r := record.New(u)
			r.Line = i + 1
			if err := add(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func truthOf(srv *changeweb.Server, raw string) (changeweb.PageTruth, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return changeweb.PageTruth{}, false
	}
	return srv.Truth(u.Hostname(), u.RequestURI())
}
