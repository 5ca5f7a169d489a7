// Package report tells where a crawl stands, from its recrawl state and
// its host-rate estimates: pages known, fetched and failing, each host's
// crawl-rate limit k_i and the multiplier lambda_i it costs (the static
// optimum of "Crawling the internet: data science within a large
// engineering system", Bill Richoux, 2018), the change-rate histogram, the
// weighted freshness now and over the last turns, and the share of the
// good URLs (QLinks) the crawl knows and has fetched. It writes the report
// as text for a terminal and as one self-contained HTML page whose plots
// are gonum/plot SVG drawn inline, so that the page needs no network.
package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/recrawl"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
)

// Options say what the report covers.
type Options struct {
	Now time.Time
	// Turns is how many of the last turns the text lists (the HTML plots
	// every turn).
	Turns int
	// Rate is the global limit k_0 in crawls per day, for lambda_0 and the
	// lambda_i; 0: the crawl's own pace (fetches per day over its history).
	Rate float64
	// Hosts are the host-rate estimates (fetch --host-rates), nil: none.
	Hosts *hostrate.Estimator
	// Good are the URLs users visit (good.txt), nil: no coverage.
	Good []string
}

// Host is one host's line.
type Host struct {
	Host                    string
	Pages, Fetched, Failing int
	// RatePerSecond is the pace fetch allows now, LimitPerDay the k_i
	// given to recrawl (hostrate's Limits: smoothed with the next probe's
	// headroom, pinned, Crawl-delay applied); both 0 and
	// Known false without an estimate.
	RatePerSecond, LimitPerDay float64
	Known, Pinned              bool
	Resting                    bool
	// Lambda is lambda_i, the host's own multiplier at the optimum: 0 when
	// its limit does not bind.
	Lambda float64
}

// Bin is one bar of the change-rate histogram: pages with Lo <= delta < Hi
// changes a day, of which Prior still have the prior's rate.
type Bin struct {
	Lo, Hi       float64
	Pages, Prior int
}

// Report is the crawl's state.
type Report struct {
	Now                     time.Time
	Pages, Fetched, Failing int
	Hosts                   []Host
	Histogram               []Bin
	Rate, Lambda0           float64 // k_0 used, per day, and lambda_0
	Freshness, KnownWeight  float64 // estimated weighted freshness now, over the fetched pages' weight
	History                 []queue.HistoryEntry
	Turns                   int
	// Good URLs: how many, known to the crawl, fetched at least once.
	Good, GoodKnown, GoodFetched int
}

// Build reads the state.
func Build(q *queue.Queue, opt Options) (*Report, error) {
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	if opt.Turns <= 0 {
		opt.Turns = 10
	}
	r := &Report{Now: opt.Now.UTC(), Turns: opt.Turns}
	var limits map[string]float64
	status := map[string]hostrate.HostStatus{}
	if opt.Hosts != nil {
		limits = opt.Hosts.Limits()
		for _, h := range opt.Hosts.Hosts() {
			status[h.Host] = h
		}
	}
	good := map[string]int{} // 1 known, 2 fetched
	for _, u := range opt.Good {
		good[u] = 0
	}
	hosts := map[string]*Host{}
	hostIndex := map[string]int32{}
	var prob recrawl.Problem
	prob.Objective = recrawl.Freshness
	bins := map[int]*Bin{}
	err := q.Pages(func(p queue.PageInfo) error {
		r.Pages++
		h := hosts[p.Host]
		if h == nil {
			h = &Host{Host: p.Host}
			hosts[p.Host] = h
			hostIndex[p.Host] = int32(len(prob.HostRate))
			lim := math.Inf(1)
			if l, ok := limits[strings.ToLower(p.Host)]; ok && l > 0 {
				lim = l
			}
			prob.HostRate = append(prob.HostRate, lim)
		}
		h.Pages++
		if p.LastFetch > 0 {
			r.Fetched++
			h.Fetched++
		}
		if p.Failures > 0 {
			r.Failing++
			h.Failing++
		}
		if _, ok := good[p.URL]; ok {
			good[p.URL] = 1
			if p.LastFetch > 0 {
				good[p.URL] = 2
			}
		}
		// Octave bins of the change rate.
		b := int(math.Floor(math.Log2(p.Delta)))
		x := bins[b]
		if x == nil {
			x = &Bin{Lo: math.Exp2(float64(b)), Hi: math.Exp2(float64(b + 1))}
			bins[b] = x
		}
		x.Pages++
		if p.Prior {
			x.Prior++
		}
		if p.W > 0 && p.Delta > 0 {
			prob.W = append(prob.W, p.W)
			prob.Delta = append(prob.Delta, p.Delta)
			prob.Host = append(prob.Host, hostIndex[p.Host])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, b := range bins {
		r.Histogram = append(r.Histogram, *b)
	}
	sort.Slice(r.Histogram, func(i, j int) bool { return r.Histogram[i].Lo < r.Histogram[j].Lo })
	for _, v := range good {
		r.Good++
		if v >= 1 {
			r.GoodKnown++
		}
		if v == 2 {
			r.GoodFetched++
		}
	}
	if r.History, err = q.History(); err != nil {
		return nil, err
	}
	if r.Freshness, r.KnownWeight, err = q.Freshness(opt.Now); err != nil {
		return nil, err
	}
	r.Rate = opt.Rate
	if r.Rate <= 0 {
		r.Rate = pace(r.History)
	}
	var sol *recrawl.Solution
	if len(prob.W) > 0 && r.Rate > 0 {
		prob.Rate = r.Rate
		if sol, err = recrawl.Solve(&prob, recrawl.SolveOptions{SkipRates: true}); err != nil {
			return nil, err
		}
		r.Lambda0 = sol.Lambda0
	}
	for name, h := range hosts {
		if st, ok := status[strings.ToLower(name)]; ok {
			h.Known, h.RatePerSecond, h.LimitPerDay, h.Pinned = true, st.Rate, limits[strings.ToLower(name)], st.Pinned
			h.Resting = st.RestUntil.After(opt.Now)
		}
		if sol != nil {
			h.Lambda = sol.HostLambda[hostIndex[name]]
		}
		r.Hosts = append(r.Hosts, *h)
	}
	sort.Slice(r.Hosts, func(i, j int) bool { return r.Hosts[i].Host < r.Hosts[j].Host })
	return r, nil
}

// pace is the crawl's fetches per day over its history: the fetches after
// the first batch over the time from the first batch to the last.
func pace(h []queue.HistoryEntry) float64 {
	if len(h) < 2 {
		return 0
	}
	n := 0
	for _, e := range h[1:] {
		n += e.Fetches
	}
	days := h[len(h)-1].Time.Sub(h[0].Time).Hours() / 24
	if days <= 0 {
		return 0
	}
	return float64(n) / days
}

// ReadGood reads a good.txt: one URL a line; blank lines and lines
// starting with # are skipped.
func ReadGood(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s != "" && !strings.HasPrefix(s, "#") {
			out = append(out, s)
		}
	}
	return out, sc.Err()
}

func share(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "crawl report at %s\n\n", r.Now.Format(time.RFC3339))
	fmt.Fprintf(bw, "pages:     %d known, %d fetched (%.1f%%), %d failing\n", r.Pages, r.Fetched, 100*share(r.Fetched, r.Pages), r.Failing)
	fmt.Fprintf(bw, "freshness: %.3f estimated now (over weight %.6g of fetched pages)\n", r.Freshness, r.KnownWeight)
	if r.Good > 0 {
		fmt.Fprintf(bw, "QLinks:    %d good URLs: %d known (%.1f%%), %d fetched (%.1f%%)\n", r.Good, r.GoodKnown, 100*share(r.GoodKnown, r.Good),
			r.GoodFetched, 100*share(r.GoodFetched, r.Good))
	}
	fmt.Fprintf(bw, "budget:    k_0 %.6g crawls a day, lambda_0 %.6g\n", r.Rate, r.Lambda0)

	fmt.Fprintf(bw, "\nlast turns:\n%-32s %7s %7s %7s %9s %9s\n", "batch", "pages", "fetches", "failed", "estimated", "observed")
	start := max(0, len(r.History)-r.Turns)
	for _, e := range r.History[start:] {
		obs := "-"
		if e.Observed >= 0 {
			obs = fmt.Sprintf("%.3f", e.Observed)
		}
		fmt.Fprintf(bw, "%-32s %7d %7d %7d %9.3f %9s\n", e.Batch, e.Pages, e.Fetches, e.Failures, e.Estimated, obs)
	}

	fmt.Fprintf(bw, "\nhosts:\n%-30s %7s %7s %7s %10s %12s %10s  %s\n", "host", "pages", "fetched", "failing", "rate/s", "k_i/day", "lambda_i", "")
	for _, h := range r.Hosts {
		rate, lim, note := "-", "-", ""
		if h.Known {
			rate = fmt.Sprintf("%.4g", h.RatePerSecond)
			lim = fmt.Sprintf("%.6g", h.LimitPerDay)
		}
		switch {
		case h.Pinned && h.LimitPerDay == 0:
			note = "pinned: not crawled"
		case h.Pinned:
			note = "pinned"
		case h.Resting:
			note = "resting"
		}
		fmt.Fprintf(bw, "%-30s %7d %7d %7d %10s %12s %10.4g  %s\n", h.Host, h.Pages, h.Fetched, h.Failing, rate, lim, h.Lambda, note)
	}

	fmt.Fprintf(bw, "\nchange rates (changes a day):\n")
	most := 0
	for _, b := range r.Histogram {
		most = max(most, b.Pages)
	}
	for _, b := range r.Histogram {
		bar := strings.Repeat("#", int(math.Ceil(40*float64(b.Pages)/float64(max(most, 1)))))
		fmt.Fprintf(bw, "%9.4g - %-9.4g %7d %-40s (%d at the prior)\n", b.Lo, b.Hi, b.Pages, bar, b.Prior)
	}
	return bw.Flush()
}
