// Command ratesbench compares recrawl policies on the changing web
// (internal/changeweb), through the Go APIs the crawl loop's tools use
// (pkg/recrawl/queue for recrawl update and next, pkg/fetch with
// pkg/hostrate for fetch --host-rates), for the same budget of fetches a
// turn:
//
//	fixed       every page recrawled at one fixed interval (the least
//	            recently fetched first), each host paced by one fixed delay
//	value       crawl value (recrawl next) without host limits, the same
//	            fixed delay
//	value+level crawl value with each host's estimated crawl rate (the
//	            smoothed level, hostrate's Rates) as its limit k_i, and
//	            fetch pacing each host by the estimate
//	value+rates the same with the limits fetch host-rates writes for
//	            recrawl (hostrate's Limits: the level with the headroom of
//	            the estimator's next probe)
//
// Each policy crawls its own copy of the same web (same seed), all at
// once on one virtual clock. It prints a Markdown table: the time-averaged
// true weighted freshness after a warm-up (from the web's change times),
// the 503s the hosts sent, the pages fetched per host per virtual hour, and
// the most requests a host received within one virtual second; with -runs
// (at least 3) runs of the same web, freshness and 503s as the median and
// range of the runs, pages per host per hour as the median, bursts as the
// worst run's, under the commit and the machine's load average.
//
//	go run ./internal/cmd/ratesbench [-turns 24] [-warmup 8] [-n 60] [-speed 5] [-runs 3]
package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sekitei/crawlkit/internal/benchenv"
	"github.com/sekitei/crawlkit/internal/changeweb"
	"github.com/sekitei/crawlkit/pkg/fetch"
	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// The web: four hosts of different capacities (requests a virtual second);
// fragile.test queues little and answers 503 soon.
var hosts = []changeweb.HostConfig{
	{Name: "big.test", Capacity: 20, MaxQueue: time.Second},
	{Name: "mid.test", Capacity: 4, MaxQueue: time.Second},
	{Name: "small.test", Capacity: 1, MaxQueue: time.Second},
	{Name: "fragile.test", Capacity: 2, MaxQueue: 200 * time.Millisecond},
}

type opts struct {
	turns, warmup, n int
	slot             time.Duration
	delay            time.Duration
	seed             uint64
	speed            float64
	verbose          bool
	runs             int
}

type result struct {
	name      string
	freshness float64
	rejected  int
	perHour   map[string]float64
	burst     map[string]int
}

func main() {
	var o opts
	flag.IntVar(&o.turns, "turns", 24, "turns a policy runs")
	flag.IntVar(&o.warmup, "warmup", 8, "turns before freshness is averaged")
	flag.IntVar(&o.n, "n", 60, "fetches a turn (the budget)")
	flag.DurationVar(&o.slot, "slot", time.Minute, "virtual time between turns")
	flag.DurationVar(&o.delay, "delay", 500*time.Millisecond, "the fixed policies' pause between requests to a host (virtual)")
	flag.Uint64Var(&o.seed, "seed", 1, "the web's seed")
	flag.Float64Var(&o.speed, "speed", 5, "virtual seconds per real second (real overheads are multiplied by it: keep it low)")
	flag.BoolVar(&o.verbose, "v", false, "print each turn and each failed fetch on stderr")
	flag.IntVar(&o.runs, "runs", 3, "runs of every policy on the same web (at least 3)")
	flag.Parse()
	if o.runs < 3 {
		fmt.Fprintln(os.Stderr, "ratesbench: -runs must be at least 3")
		os.Exit(2)
	}
	if o.turns <= o.warmup || o.n <= 0 {
		fmt.Fprintln(os.Stderr, "ratesbench: want -turns > -warmup and -n > 0")
		os.Exit(2)
	}
	policies := []string{"fixed", "value", "value+level", "value+rates"}
	runs := make([][]result, len(policies)) // per policy, per run
	for r := 0; r < o.runs; r++ {
		clock := changeweb.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), o.speed)
		results := make([]result, len(policies))
		var wg sync.WaitGroup
		errs := make([]error, len(policies))
		for i, p := range policies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = run(p, o, clock)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				fmt.Fprintf(os.Stderr, "ratesbench: %s: %v\n", policies[i], err)
				os.Exit(1)
			}
			runs[i] = append(runs[i], results[i])
			fmt.Fprintf(os.Stderr, "ratesbench: run %d, %s: freshness %.3f, %d 503s\n", r+1, policies[i], results[i].freshness, results[i].rejected)
		}
	}
	fmt.Printf("ratesbench: commit %s, load average %s (1, 5, 15 min), seed %d, %d runs: freshness and 503s as median (range), pages per host per hour as the median, bursts as the worst run's\n\n", benchenv.Commit(), benchenv.LoadAverage(), o.seed, o.runs)
	fmt.Printf("| policy | weighted freshness | 503s received | pages per host per hour (%s) | max burst per host (requests in 1 s) |\n", hostNames())
	fmt.Println("|---|---|---|---|---|")
	for i, rs := range runs {
		var fresh, rejected []float64
		for _, r := range rs {
			fresh, rejected = append(fresh, r.freshness), append(rejected, float64(r.rejected))
		}
		var ph, mb []string
		for _, h := range hosts {
			var per []float64
			burst := 0
			for _, r := range rs {
				per = append(per, r.perHour[h.Name])
				burst = max(burst, r.burst[h.Name])
			}
			ph = append(ph, fmt.Sprintf("%.0f", benchenv.Median(per)))
			mb = append(mb, fmt.Sprint(burst))
		}
		fmt.Printf("| %s | %.3f (%.3f-%.3f) | %.0f (%.0f-%.0f) | %s | %s |\n", policies[i], benchenv.Median(fresh), slices.Min(fresh), slices.Max(fresh),
			benchenv.Median(rejected), slices.Min(rejected), slices.Max(rejected), strings.Join(ph, " / "), strings.Join(mb, " / "))
	}
}

func hostNames() string {
	var s []string
	for _, h := range hosts {
		s = append(s, fmt.Sprintf("%s %g/s", strings.TrimSuffix(h.Name, ".test"), h.Capacity))
	}
	return strings.Join(s, " / ")
}

// run crawls one copy of the web with one policy.
func run(policy string, o opts, clock *changeweb.Clock) (result, error) {
	res := result{name: policy, perHour: map[string]float64{}, burst: map[string]int{}}
	// Rates from about an hour to a minute, the scale of the turns.
	srv, err := changeweb.Start(changeweb.Config{Seed: o.seed, Hosts: hosts, Clock: clock, Articles: 120, Wiki: 40,
		NoiseShare: 1e-9, MinRate: 30, MaxRate: 1440})
	if err != nil {
		return res, err
	}
	defer srv.Close()
	dir, err := os.MkdirTemp("", "ratesbench")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	q, err := queue.Open(dir+"/crawl.recrawl", queue.Options{NoSync: true,
		// The prior at the web's scale (see pkg/recrawl/queue's freshness test).
		Update: queue.UpdateOptions{Prior: recrawl.Prior{Rate: 200, Days: 1.0 / 96}}})
	if err != nil {
		return res, err
	}
	defer q.Close()
	var est *hostrate.Estimator
	if strings.HasPrefix(policy, "value+") {
		// A host never seen starts at the fixed policies' pace; the time
		// constants are scaled to one-minute turns, and a slow answer must
		// be 0.5 s over the baseline, above the real overheads (a loaded
		// machine's tens of milliseconds, times -speed).
		est = hostrate.New(hostrate.Config{Initial: 1 / o.delay.Seconds(), Ceiling: 100, ProbeEvery: 2 * time.Second,
			HealthyRun: 5, MaxRetryAfter: 5 * time.Second, Smoothing: time.Minute, BaselineWindow: time.Minute,
			MinSlow: 500 * time.Millisecond, Clock: clock})
	}
	var seeds []queue.Weight
	var found []queue.Discovery
	for _, p := range srv.Pages() {
		// Hosts as the loop's tools key them (host:port here), so that the
		// estimator's rates meet the pages' hosts in recrawl.
		host, err := urlx.Host(p.URL)
		if err != nil {
			return res, err
		}
		seeds = append(seeds, queue.Weight{URL: p.URL, Host: host, Importance: 1})
		found = append(found, queue.Discovery{URL: p.URL, Host: host})
	}
	start := clock.Now()
	if _, err := q.Apply("000000-seeds", queue.Batch{Now: start, Discovered: found, Weights: seeds}); err != nil {
		return res, err
	}
	copies := map[string]changeweb.Copy{}
	lastFetch := map[string]time.Time{} // the fixed policy's order
	all := srv.Pages()
	var freshSum float64
	var freshN int
	var measureFrom time.Time
	fetchedBy := map[string]int{}
	before := map[string]int{}
	for turn := 1; turn <= o.turns; turn++ {
		now := clock.Now()
		if turn == o.warmup+1 {
			measureFrom = now
			for _, h := range hosts {
				before[h.Name] = srv.Stats(h.Name).Rejected
			}
			clear(fetchedBy)
		}
		var urls []string
		switch policy {
		case "fixed":
			sort.SliceStable(all, func(i, j int) bool {
				a, b := lastFetch[all[i].URL], lastFetch[all[j].URL]
				if !a.Equal(b) {
					return a.Before(b)
				}
				return all[i].URL < all[j].URL
			})
			for _, p := range all[:min(o.n, len(all))] {
				urls = append(urls, p.URL)
			}
		default:
			nopt := queue.NextOptions{Now: now, N: o.n, Slot: o.slot.Hours() / 24}
			if est != nil {
				limits := est.Limits() // what fetch host-rates writes for recrawl
				if policy == "value+level" {
					limits = est.Rates()
				}
				nopt.HostRate = func(h string) float64 { return limits[strings.ToLower(h)] }
			}
			cands, info, err := q.Next(nopt)
			if err != nil {
				return res, err
			}
			if o.verbose && est != nil {
				for h, c := range info.HostCap {
					fmt.Fprintf(os.Stderr, "%s turn %d: %s cap %d taken %d full %v\n", policy, turn, h, c, info.HostTaken[h], info.HostFull[h])
				}
			}
			for _, c := range cands {
				if _, ok := truthOf(srv, c.URL); ok {
					urls = append(urls, c.URL)
				}
			}
		}
		fetches, err := fetchAll(srv, est, o.delay, urls)
		if err != nil {
			return res, err
		}
		for _, f := range fetches {
			lastFetch[f.URL] = f.At
			if f.Failed() {
				if o.verbose {
					fmt.Fprintln(os.Stderr, policy, f.URL, f.Status, f.Error)
				}
				continue
			}
			tr, _ := truthOf(srv, f.URL)
			copies[f.URL] = changeweb.Copy{Host: tr.Host, Path: tr.Path, Fetched: f.At}
			fetchedBy[tr.Host]++
		}
		if o.verbose {
			fmt.Fprintf(os.Stderr, "%s turn %d at %s: %d urls, %d fetches, took %s virtual\n", policy, turn, now.Format("15:04:05"), len(urls), len(fetches), clock.Now().Sub(now))
			if est != nil {
				for _, h := range est.Hosts() {
					fmt.Fprintf(os.Stderr, "  %s: %.3g/s (limit %.3g, failures %d)\n", h.Host, h.Rate, h.Limit, h.Failures)
				}
			}
		}
		if _, err := q.Apply(fmt.Sprintf("%06d", turn), queue.Batch{Now: now, Fetches: fetches}); err != nil {
			return res, err
		}
		// Freshness over every page of the web (a page never fetched is
		// stale), sampled through the rest of the slot.
		for {
			if turn > o.warmup {
				cs := make([]changeweb.Copy, 0, len(all))
				for _, p := range all {
					c, ok := copies[p.URL]
					if !ok {
						c = changeweb.Copy{Host: p.Host, Path: p.Path} // never fetched: stale
					}
					cs = append(cs, c)
				}
				freshSum += srv.Freshness(cs, clock.Now())
				freshN++
			}
			left := now.Add(o.slot).Sub(clock.Now())
			if left <= 0 {
				break
			}
			if err := clock.Sleep(context.Background(), min(left, o.slot/4)); err != nil {
				return res, err
			}
		}
	}
	hours := clock.Now().Sub(measureFrom).Hours()
	res.freshness = freshSum / float64(max(freshN, 1))
	for _, h := range hosts {
		st := srv.Stats(h.Name)
		res.rejected += st.Rejected - before[h.Name]
		res.perHour[h.Name] = float64(fetchedBy[h.Name]) / hours
		res.burst[h.Name] = st.MaxPerSecond
	}
	return res, nil
}

// fetchAll fetches urls as fetch does: per-host politeness by the fixed
// delay, or by the estimator when there is one; no robots.txt (the web's
// allows everything) and no retries, so that every policy spends its
// budget on its own choices.
func fetchAll(srv *changeweb.Server, est *hostrate.Estimator, delay time.Duration, urls []string) ([]queue.Fetch, error) {
	if len(urls) == 0 {
		return nil, nil
	}
	var mu sync.Mutex
	var out []queue.Fetch
	// The fixed delay is virtual: fetch waits it in real time.
	cfg := fetch.Config{AllowPrivate: true, Delay: srv.Clock().Real(delay), Workers: 16, PerHost: 2, QueueBy: fetch.QueueByHost,
		IgnoreRobots: true, Retries: fetch.NoRetries, Clock: srv.Clock(), HostRates: est, MaxHostWait: time.Minute,
		LookupIP: func(_ context.Context, host string) ([]netip.Addr, error) {
			ap, err := netip.ParseAddrPort(srv.Addr(host))
			return []netip.Addr{ap.Addr()}, err
		}}
	cfg.Emit = func(r *record.Record) error {
		f, err := queue.ParseFetch(r)
		if err != nil {
			return err
		}
		f.At = srv.Clock().Now()
		f.Links, f.HasSim = nil, false // the pages are the seeds; changes told by digest (no noise)
		mu.Lock()
		out = append(out, f)
		mu.Unlock()
		return nil
	}
	f, err := fetch.New(cfg)
	if err != nil {
		return nil, err
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
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out, err
}

func truthOf(srv *changeweb.Server, raw string) (changeweb.PageTruth, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return changeweb.PageTruth{}, false
	}
	return srv.Truth(u.Hostname(), u.RequestURI())
}
