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
// compares the state's estimated weighted freshness with the true one the
// web knows from its change times: after a warm-up in which the change
// rates are learnt, they must agree within 0.05 over every 4 turns in a
// row (the mean gap), and within 0.1 at every turn. The true freshness of
// 471 pages is itself a sample (its standard deviation about 0.02), and
// the fetch's real time, sped up 3600 times, jitters the turns: a single
// turn may stray past 0.05 by chance. The observed freshness of each
// turn's recrawls must be recorded too.
func TestFreshnessTracksTruth(t *testing.T) {
	const (
		turns   = 60
		warmup  = 30
		perTurn = 60
	)
	hosts := []changeweb.HostConfig{{Name: "a.test"}, {Name: "b.test"}, {Name: "c.test"}, {Name: "d.test"}}
	// One virtual hour a turn; a turn's fetches take a few virtual minutes.
	srv, err := changeweb.Start(changeweb.Config{Seed: 11, Hosts: hosts, Speed: 3600, Articles: 160, Wiki: 40,
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
		// The generated web's ?print=1 copies name their page as canonical;
		// the truth is over every page the generator serves, so the crawl
		// keeps them (a retired copy would stay in the estimate unfetched).
		Update: queue.UpdateOptions{Prior: recrawl.Prior{Rate: 1.5, Days: 0.5}, RecrawlCanonicalised: true}})
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
	var worst, worstMean float64
	var gaps []float64
	for turn := 0; turn < turns; turn++ {
		now := clock.Now()
		id := fmt.Sprintf("%06d-%s", turn, now.UTC().Format("20060102T150405Z"))
		var urls []string
		if turn > 0 {
			cands, _, err := q.Next(queue.NextOptions{Now: now, N: perTurn, Slot: 1.0 / 24, Rate: 4 * perTurn * 24})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cands {
				// Links reach spellings the web does not serve as pages
				// (?print=1); the truth knows only its pages.
				if _, ok := truthOf(srv, c.URL); ok {
					urls = append(urls, c.URL)
				}
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
			if !f.Failed() {
				tr, ok := truthOf(srv, f.URL)
				if !ok {
					t.Fatalf("%s: not a page of the web", f.URL)
				}
				copies[f.URL] = changeweb.Copy{Host: tr.Host, Path: tr.Path, Fetched: f.At, Weight: weight(f.URL)}
			}
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
		truth := srv.Freshness(cs, at)
		t.Logf("turn %2d: %3d fetched, %4d known; freshness estimated %.3f, true %.3f (%+.3f); observed this turn %.3f of weight %.0f; recorded estimate %.3f",
			turn, len(fetches), len(copies), est, truth, est-truth, st.Observed, st.RecrawledWeight, st.Freshness)
		if turn >= warmup && st.RecrawledWeight <= 0 {
			t.Errorf("turn %d: no recrawl observed", turn)
		}
		if turn >= warmup {
			gap := est - truth
			worst = math.Max(worst, math.Abs(gap))
			if math.Abs(gap) > 0.1 {
				t.Errorf("turn %d: estimated freshness %.3f, true %.3f: more than 0.1 apart", turn, est, truth)
			}
			if gaps = append(gaps, gap); len(gaps) >= 4 {
				mean := (gaps[len(gaps)-1] + gaps[len(gaps)-2] + gaps[len(gaps)-3] + gaps[len(gaps)-4]) / 4
				worstMean = math.Max(worstMean, math.Abs(mean))
				if math.Abs(mean) > 0.05 {
					t.Errorf("turns %d-%d: estimate and truth %.3f apart on average, more than 0.05", turn-3, turn, mean)
				}
			}
		}
		// Next turn an hour after this one began.
		if err := clock.Sleep(context.Background(), now.Add(time.Hour).Sub(clock.Now())); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("after warm-up: largest gap %.3f, largest mean gap over 4 turns %.3f", worst, worstMean)
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
