// Package report tells where a crawl stands, from its recrawl states (one
// or every shard's), its host-rate estimates and, for a crawl directory of
// scripts/crawl-cycle.sh, its turns' batches and log: pages known, fetched
// and failing, each host's crawl-rate limit k_i and the multiplier lambda_i
// it costs (the static optimum of "Crawling the internet: data science
// within a large engineering system", Bill Richoux, 2018), the change-rate
// histogram, the weighted freshness now and over the turns, the share of the
// good URLs (QLinks) the crawl knows and has fetched, and per turn the fetch
// outcomes by kind, the pages and bytes fetched, the candidates new and due,
// and each step's time. It writes the report as text for a terminal, as
// one JSON document for monitoring, and as one self-contained HTML page
// whose plots are SVG drawn inline, so that the page needs no network.
package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/record"
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
	// Hosts are the host-rate estimates (fetch --host-rates), one per
	// shard; none: no estimates.
	Hosts []*hostrate.Estimator
	// Good are the URLs users visit (good.txt), nil: no coverage.
	Good []string
	// GoodShard, when set, counts only the good URLs of that shard's
	// hosts: the report covers one shard of a sharded crawl.
	GoodShard record.Shard
}

// State is one recrawl state the report reads: its path, and the shard it
// holds.
type State struct {
	Path  string
	Queue *queue.Queue
}

// Host is one host's line.
type Host struct {
	Host    string `json:"host"`
	Shard   int    `json:"shard"`
	Pages   int    `json:"pages"`
	Fetched int    `json:"fetched"`
	Failing int    `json:"failing"`
	// RatePerSecond is the pace fetch allows now, LimitPerDay the k_i
	// given to recrawl (hostrate's Limits: smoothed with the next probe's
	// headroom, pinned, Crawl-delay applied); both 0 and
	// Known false without an estimate.
	RatePerSecond float64 `json:"rate_per_second"`
	LimitPerDay   float64 `json:"limit_per_day"`
	Known         bool    `json:"estimated"`
	Pinned        bool    `json:"pinned"`
	Resting       bool    `json:"resting"`
	// Lambda is lambda_i, the host's own multiplier at the optimum: 0 when
	// its limit does not bind.
	Lambda float64 `json:"lambda"`
	// Over the turns whose batches are kept: fetches tried, failed, and
	// the bytes of the pages fetched.
	Tries    int   `json:"tries"`
	Failures int   `json:"failures"`
	Bytes    int64 `json:"bytes"`
}

// Bin is one bar of the change-rate histogram: pages with Lo <= delta < Hi
// changes a day, of which Prior still have the prior's rate.
type Bin struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Pages int     `json:"pages"`
	Prior int     `json:"prior"`
}

// Shard is one state read.
type Shard struct {
	Path  string `json:"path"`
	Shard string `json:"shard"` // I/N, or "" for a state of all hosts
	Pages int    `json:"pages"`
}

// Report is the crawl's state.
type Report struct {
	Now time.Time `json:"now"`
	// Dir is the crawl directory read, "" for states alone.
	Dir     string  `json:"dir,omitempty"`
	Shards  []Shard `json:"shards"`
	Pages   int     `json:"pages"`
	Fetched int     `json:"fetched"`
	Failing int     `json:"failing"`
	// Estimated says whether host-rate estimates were read.
	Estimated bool    `json:"host_rates"`
	Hosts     []Host  `json:"hosts"`
	Histogram []Bin   `json:"change_rates"`
	Rate      float64 `json:"rate_per_day"` // k_0 used
	Lambda0   float64 `json:"lambda0"`
	// Freshness is the estimated weighted freshness now, over the fetched
	// pages' weight KnownWeight.
	Freshness   float64 `json:"freshness"`
	KnownWeight float64 `json:"known_weight"`
	// History is every batch's entry, the shards' summed, oldest first.
	History []Turn `json:"turns"`
	// Turns is how many of the last turns the text lists.
	Turns int `json:"-"`
	// Good URLs: how many, known to the crawl, fetched at least once.
	GoodGiven   bool `json:"good_given"`
	Good        int  `json:"good"`
	GoodKnown   int  `json:"good_known"`
	GoodFetched int  `json:"good_fetched"`
	// Problems are what could not be read (a missing or damaged state,
	// batch or log), each naming its path; the rest is reported.
	Problems []string `json:"problems"`
}

// Turn is one batch: the recrawl states' entry (summed over the shards)
// and, when the crawl directory keeps it, what its files say.
type Turn struct {
	queue.HistoryEntry
	// Recorded says whether the states have applied the batch (a turn
	// under way has not yet).
	Recorded bool `json:"recorded"`
	// Files is set when the turn's directory was read: fetch outcomes,
	// bytes, candidates.
	Files *BatchStats `json:"files,omitempty"`
	// Steps are the seconds each step took (the cycle log), in order;
	// Seconds the whole turn's, 0 when the log does not say.
	Steps   []Step  `json:"steps,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
}

// Step is one step of a turn and its time.
type Step struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// BatchStats are a turn's fetch records and candidates.
type BatchStats struct {
	Done       bool     `json:"done"`
	Records    int      `json:"records"`
	Outcomes   Outcomes `json:"outcomes"`
	Bytes      int64    `json:"bytes"`
	Candidates int      `json:"candidates"`
	New        int      `json:"new"` // candidates never fetched
	Due        int      `json:"due"` // candidates fetched before, due again
	Deferred   int      `json:"deferred"`
}

// Outcomes count a turn's fetch records by kind.
type Outcomes struct {
	OK          int `json:"2xx"`
	NotModified int `json:"304"`
	Redirect    int `json:"3xx"`
	Client      int `json:"4xx"`
	Server      int `json:"5xx"`
	Robots      int `json:"robots"`
	Resting     int `json:"resting"` // resting or pinned hosts: not tried
	Timeout     int `json:"timeout"`
	Other       int `json:"other_errors"`
}

// kinds names the outcomes in the order they are stacked and listed.
var kinds = []string{"2xx", "304", "3xx", "4xx", "5xx", "robots", "resting", "timeout", "other errors"}

func (o *Outcomes) counts() []int {
	return []int{o.OK, o.NotModified, o.Redirect, o.Client, o.Server, o.Robots, o.Resting, o.Timeout, o.Other}
}

// Fetched is the records that brought a page (2xx, 3xx, 304).
func (o *Outcomes) Fetched() int { return o.OK + o.NotModified + o.Redirect }

// Build reads one state.
func Build(q *queue.Queue, opt Options) (*Report, error) {
	r := New(opt)
	if err := r.AddStates([]State{{Queue: q}}, opt); err != nil {
		return nil, err
	}
	return r, nil
}

// New starts an empty report.
func New(opt Options) *Report {
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	if opt.Turns <= 0 {
		opt.Turns = 10
	}
	return &Report{Now: opt.Now.UTC(), Turns: opt.Turns, Hosts: []Host{}, Histogram: []Bin{}, History: []Turn{},
		Shards: []Shard{}, Problems: []string{}}
}

// problem records what could not be read.
func (r *Report) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// acc gathers one state's pages.
type acc struct {
	pages, fetched, failing int
	hosts                   map[string]*Host
	hostIndex               map[string]int32
	hostNames               []string
	prob                    recrawl.Problem
	bins                    map[int]*Bin
	good                    map[string]int
}

func newAcc() *acc {
	return &acc{hosts: map[string]*Host{}, hostIndex: map[string]int32{}, bins: map[int]*Bin{}, good: map[string]int{}}
}

// turnSum sums the shards' entries of one batch.
type turnSum struct {
	t                         Turn
	estSum, obsSum, obsWeight float64
}

// AddStates reads the states into the report: a state that cannot be read
// is a problem of the report, the others are reported. It fails only when
// the lambdas cannot be solved.
func (r *Report) AddStates(states []State, opt Options) error {
	var limits map[string]float64
	status := map[string]hostrate.HostStatus{}
	for _, e := range opt.Hosts {
		if e == nil {
			continue
		}
		r.Estimated = true
		if limits == nil {
			limits = map[string]float64{}
		}
		for h, l := range e.Limits() {
			limits[h] = l
		}
		for _, h := range e.Hosts() {
			status[h.Host] = h
		}
	}
	good := map[string]bool{}
	r.GoodGiven = opt.Good != nil
	for _, u := range opt.Good {
		if opt.GoodShard.N > 1 && !opt.GoodShard.Keeps(record.New(u)) {
			continue
		}
		good[u] = true
	}
	all := newAcc()
	all.prob.Objective = recrawl.Freshness
	byBatch := map[string]*turnSum{}
	var freshSum, weightSum float64
	for _, st := range states {
		a := newAcc()
		shard := st.Queue.Shard()
		err := st.Queue.Pages(func(p queue.PageInfo) error {
			a.pages++
			h := a.hosts[p.Host]
			if h == nil {
				h = &Host{Host: p.Host, Shard: shard.I}
				a.hosts[p.Host] = h
				a.hostIndex[p.Host] = int32(len(a.hostNames))
				a.hostNames = append(a.hostNames, p.Host)
			}
			h.Pages++
			if p.LastFetch > 0 {
				a.fetched++
				h.Fetched++
			}
			if p.Failures > 0 {
				a.failing++
				h.Failing++
			}
			if good[p.URL] {
				a.good[p.URL] = 1
				if p.LastFetch > 0 {
					a.good[p.URL] = 2
				}
			}
			// Octave bins of the change rate.
			b := int(math.Floor(math.Log2(p.Delta)))
			x := a.bins[b]
			if x == nil {
				x = &Bin{Lo: math.Exp2(float64(b)), Hi: math.Exp2(float64(b + 1))}
				a.bins[b] = x
			}
			x.Pages++
			if p.Prior {
				x.Prior++
			}
			if p.W > 0 && p.Delta > 0 {
				a.prob.W = append(a.prob.W, p.W)
				a.prob.Delta = append(a.prob.Delta, p.Delta)
				a.prob.Host = append(a.prob.Host, a.hostIndex[p.Host])
			}
			return nil
		})
		var hist []queue.HistoryEntry
		var fresh, weight float64
		if err == nil {
			hist, err = st.Queue.History()
		}
		if err == nil {
			fresh, weight, err = st.Queue.Freshness(opt.Now)
		}
		if err != nil {
			r.problem("%s", stateErr(st.Path, err))
			continue
		}
		r.Shards = append(r.Shards, Shard{Path: st.Path, Shard: shardName(shard), Pages: a.pages})
		freshSum += fresh * weight
		weightSum += weight
		all.merge(a)
		for _, e := range hist {
			s := byBatch[e.Batch]
			if s == nil {
				s = &turnSum{t: Turn{HistoryEntry: queue.HistoryEntry{Batch: e.Batch, Time: e.Time}, Recorded: true}}
				byBatch[e.Batch] = s
			}
			t := &s.t
			t.Pages += e.Pages
			t.Fetches += e.Fetches
			t.Failures += e.Failures
			t.Known += e.Known
			if e.Time.After(t.Time) {
				t.Time = e.Time
			}
			s.estSum += e.Estimated * e.Known
			if e.Observed >= 0 {
				s.obsSum += e.Observed * e.Recrawled
				s.obsWeight += e.Recrawled
			}
		}
	}
	// A batch's freshness over the shards: weighted by each one's weight.
	for _, s := range byBatch {
		t := s.t
		if t.Known > 0 {
			t.Estimated = s.estSum / t.Known
		}
		t.Recrawled, t.Observed = s.obsWeight, -1
		if s.obsWeight > 0 {
			t.Observed = s.obsSum / s.obsWeight
		}
		r.History = append(r.History, t)
	}
	sort.Slice(r.History, func(i, j int) bool { return r.History[i].Batch < r.History[j].Batch })
	if weightSum > 0 {
		r.Freshness, r.KnownWeight = freshSum/weightSum, weightSum
	}

	r.Pages, r.Fetched, r.Failing = all.pages, all.fetched, all.failing
	for _, b := range all.bins {
		r.Histogram = append(r.Histogram, *b)
	}
	sort.Slice(r.Histogram, func(i, j int) bool { return r.Histogram[i].Lo < r.Histogram[j].Lo })
	for u := range good {
		r.Good++
		if all.good[u] >= 1 {
			r.GoodKnown++
		}
		if all.good[u] == 2 {
			r.GoodFetched++
		}
	}
	r.Rate = opt.Rate
	if r.Rate <= 0 {
		r.Rate = pace(r.History)
	}
	all.prob.HostRate = make([]float64, len(all.hostNames))
	for i, name := range all.hostNames {
		all.prob.HostRate[i] = math.Inf(1)
		if l, ok := limits[strings.ToLower(name)]; ok && l > 0 {
			all.prob.HostRate[i] = l
		}
	}
	var sol *recrawl.Solution
	if len(all.prob.W) > 0 && r.Rate > 0 {
		all.prob.Rate = r.Rate
		var err error
		if sol, err = recrawl.Solve(&all.prob, recrawl.SolveOptions{SkipRates: true}); err != nil {
			return err
		}
		r.Lambda0 = sol.Lambda0
	}
	for name, h := range all.hosts {
		if st, ok := status[strings.ToLower(name)]; ok {
			h.Known, h.RatePerSecond, h.LimitPerDay, h.Pinned = true, st.Rate, limits[strings.ToLower(name)], st.Pinned
			h.Resting = st.RestUntil.After(opt.Now)
		}
		if sol != nil {
			h.Lambda = sol.HostLambda[all.hostIndex[name]]
		}
		r.Hosts = append(r.Hosts, *h)
	}
	sort.Slice(r.Hosts, func(i, j int) bool { return r.Hosts[i].Host < r.Hosts[j].Host })
	return nil
}

// merge adds a state's pages to the crawl's.
func (all *acc) merge(a *acc) {
	all.pages += a.pages
	all.fetched += a.fetched
	all.failing += a.failing
	remap := make([]int32, len(a.hostNames))
	for i, n := range a.hostNames {
		h := a.hosts[n]
		if x := all.hosts[n]; x != nil {
			x.Pages += h.Pages
			x.Fetched += h.Fetched
			x.Failing += h.Failing
		} else {
			all.hosts[n] = h
			all.hostIndex[n] = int32(len(all.hostNames))
			all.hostNames = append(all.hostNames, n)
		}
		remap[i] = all.hostIndex[n]
	}
	all.prob.W = append(all.prob.W, a.prob.W...)
	all.prob.Delta = append(all.prob.Delta, a.prob.Delta...)
	for _, h := range a.prob.Host {
		all.prob.Host = append(all.prob.Host, remap[h])
	}
	for b, x := range a.bins {
		y := all.bins[b]
		if y == nil {
			y = &Bin{Lo: x.Lo, Hi: x.Hi}
			all.bins[b] = y
		}
		y.Pages += x.Pages
		y.Prior += x.Prior
	}
	for u, v := range a.good {
		all.good[u] = max(all.good[u], v)
	}
}

// stateErr names the state's path in err, once.
func stateErr(path string, err error) string {
	var se *queue.StateError
	if errors.As(err, &se) || path == "" || strings.Contains(err.Error(), path) {
		return err.Error()
	}
	return fmt.Sprintf("state %s: %v", path, err)
}

func shardName(s record.Shard) string {
	if s.N <= 1 {
		return ""
	}
	return s.String()
}

// pace is the crawl's fetches per day over its history: the fetches after
// the first batch over the time from the first batch to the last.
func pace(h []Turn) float64 {
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
	out := []string{}
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
	fmt.Fprintf(bw, "crawl report at %s\n", r.Now.Format(time.RFC3339))
	if r.Dir != "" {
		fmt.Fprintf(bw, "crawl:     %s, %d turns", r.Dir, len(r.turnList()))
		if a := r.Age(); a > 0 {
			fmt.Fprintf(bw, " over %s", duration(a))
		}
		fmt.Fprintln(bw)
	}
	for _, s := range r.Shards {
		if s.Shard != "" {
			fmt.Fprintf(bw, "shard %-5s %s: %d pages\n", s.Shard, s.Path, s.Pages)
		}
	}
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "pages:     %d known, %d fetched (%.1f%%), %d never fetched, %d failing\n", r.Pages, r.Fetched, 100*share(r.Fetched, r.Pages),
		r.Pages-r.Fetched, r.Failing)
	fmt.Fprintf(bw, "freshness: %.3f estimated now (over weight %.6g of fetched pages)\n", r.Freshness, r.KnownWeight)
	if r.GoodGiven {
		fmt.Fprintf(bw, "QLinks:    %d good URLs: %d known (%.1f%%), %d fetched (%.1f%%)\n", r.Good, r.GoodKnown, 100*share(r.GoodKnown, r.Good),
			r.GoodFetched, 100*share(r.GoodFetched, r.Good))
	}
	fmt.Fprintf(bw, "budget:    k_0 %.6g crawls a day, lambda_0 %.6g\n", r.Rate, r.Lambda0)
	if t := r.lastBatch(); t != nil {
		b := t.Files
		fmt.Fprintf(bw, "last turn: %s: %d tried, %d fetched (%s), %d failed; %d candidates (%d new, %d due), %d deferred\n",
			t.HistoryEntry.Batch, b.Records, b.Outcomes.Fetched(), bytesText(b.Bytes), b.Records-b.Outcomes.Fetched(),
			b.Candidates, b.New, b.Due, b.Deferred)
	}

	turns := r.turnList()
	start := max(0, len(turns)-r.Turns)
	timed := false
	for _, e := range turns {
		timed = timed || e.Seconds > 0
	}
	fmt.Fprintf(bw, "\nlast turns:\n%-32s %7s %7s %7s %9s %9s", "batch", "pages", "fetches", "failed", "estimated", "observed")
	if timed {
		fmt.Fprintf(bw, " %8s", "seconds")
	}
	fmt.Fprintln(bw)
	for _, e := range turns[start:] {
		obs := "-"
		if e.Observed >= 0 {
			obs = fmt.Sprintf("%.3f", e.Observed)
		}
		secs := ""
		if timed {
			secs = fmt.Sprintf(" %8s", "-")
			if e.Seconds > 0 {
				secs = fmt.Sprintf(" %8.0f", e.Seconds)
			}
		}
		if !e.Recorded {
			fmt.Fprintf(bw, "%-32s %7s %7s %7s %9s %9s%s  under way\n", e.HistoryEntry.Batch, "-", "-", "-", "-", "-", secs)
			continue
		}
		fmt.Fprintf(bw, "%-32s %7d %7d %7d %9.3f %9s%s\n", e.HistoryEntry.Batch, e.Pages, e.Fetches, e.Failures, e.Estimated, obs, secs)
	}
	if r.hasBatches() {
		fmt.Fprintf(bw, "\nfetch outcomes by turn:\n%-32s", "batch")
		for _, k := range kinds {
			fmt.Fprintf(bw, " %7s", strings.ReplaceAll(k, "other errors", "other"))
		}
		fmt.Fprintf(bw, " %10s %6s %6s %6s %8s\n", "bytes", "cands", "new", "due", "deferred")
		for _, e := range turns[start:] {
			if e.Files == nil {
				continue
			}
			fmt.Fprintf(bw, "%-32s", e.HistoryEntry.Batch)
			for _, c := range e.Files.Outcomes.counts() {
				fmt.Fprintf(bw, " %7d", c)
			}
			fmt.Fprintf(bw, " %10s %6d %6d %6d %8d\n", bytesText(e.Files.Bytes), e.Files.Candidates, e.Files.New, e.Files.Due, e.Files.Deferred)
		}
	}
	if names := r.stepNames(); len(names) > 0 {
		fmt.Fprintf(bw, "\nseconds a step:\n%-32s", "batch")
		for _, n := range names {
			fmt.Fprintf(bw, " %8s", n)
		}
		fmt.Fprintln(bw)
		for _, e := range turns[start:] {
			if len(e.Steps) == 0 {
				continue
			}
			fmt.Fprintf(bw, "%-32s", e.HistoryEntry.Batch)
			for _, n := range names {
				fmt.Fprintf(bw, " %8s", stepText(e.Steps, n))
			}
			fmt.Fprintln(bw)
		}
	}

	sharded, kept := len(r.Shards) > 1, r.hasBatches()
	fmt.Fprintf(bw, "\nhosts:\n%-30s", "host")
	if sharded {
		fmt.Fprintf(bw, " %5s", "shard")
	}
	fmt.Fprintf(bw, " %7s %7s %7s %10s %12s %10s", "pages", "fetched", "failing", "rate/s", "k_i/day", "lambda_i")
	if kept {
		fmt.Fprintf(bw, " %7s %7s", "tries", "failed")
	}
	fmt.Fprintln(bw)
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
		fmt.Fprintf(bw, "%-30s", h.Host)
		if sharded {
			fmt.Fprintf(bw, " %5s", shardText(h.Shard))
		}
		fmt.Fprintf(bw, " %7d %7d %7d %10s %12s %10.4g", h.Pages, h.Fetched, h.Failing, rate, lim, h.Lambda)
		if kept {
			fmt.Fprintf(bw, " %7d %7d", h.Tries, h.Failures)
		}
		if note != "" {
			fmt.Fprintf(bw, "  %s", note)
		}
		fmt.Fprintln(bw)
	}
	if r.hasBatches() {
		kept := r.keptTurns()
		fmt.Fprintf(bw, "\nmost failing hosts (failed fetches over the %d turns kept):\n", kept)
		top := r.TopHosts(10, func(h Host) int { return h.Failures })
		if len(top) == 0 {
			fmt.Fprintf(bw, "  none\n")
		}
		for _, h := range top {
			fmt.Fprintf(bw, "  %-40s %7d of %d\n", h.Host, h.Failures, h.Tries)
		}
		fmt.Fprintf(bw, "busiest hosts (fetches over the %d turns kept):\n", kept)
		for _, h := range r.TopHosts(10, func(h Host) int { return h.Tries }) {
			fmt.Fprintf(bw, "  %-40s %7d, %s\n", h.Host, h.Tries, bytesText(h.Bytes))
		}
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
	if len(r.Problems) > 0 {
		fmt.Fprintf(bw, "\nproblems (the report leaves out what they hold):\n")
		for _, p := range r.Problems {
			fmt.Fprintf(bw, "  %s\n", p)
		}
	}
	return bw.Flush()
}

// turnList is the turns plotted and listed: every batch but the seeds'.
func (r *Report) turnList() []Turn {
	out := make([]Turn, 0, len(r.History))
	for _, t := range r.History {
		if strings.HasSuffix(t.HistoryEntry.Batch, "-seeds") && t.Fetches == 0 {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Age is the time from the first turn to the last.
func (r *Report) Age() time.Duration {
	ts := r.turnList()
	if len(ts) < 2 {
		return 0
	}
	first, last := ts[0].Time, ts[0].Time
	for _, t := range ts {
		if t.Time.Before(first) {
			first = t.Time
		}
		if t.Time.After(last) {
			last = t.Time
		}
	}
	return last.Sub(first)
}

func (r *Report) hasBatches() bool { return r.keptTurns() > 0 }

func (r *Report) keptTurns() int {
	n := 0
	for _, t := range r.History {
		if t.Files != nil {
			n++
		}
	}
	return n
}

// lastBatch is the newest turn done whose directory was read.
func (r *Report) lastBatch() *Turn {
	for i := len(r.History) - 1; i >= 0; i-- {
		if f := r.History[i].Files; f != nil && (f.Done || f.Records > 0) {
			return &r.History[i]
		}
	}
	return nil
}

// stepNames are the steps the log times, in the order of the loop.
func (r *Report) stepNames() []string {
	var names []string
	seen := map[string]bool{}
	for _, t := range r.History {
		for _, s := range t.Steps {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
	}
	return names
}

func stepText(steps []Step, name string) string {
	for _, s := range steps {
		if s.Name == name {
			return fmt.Sprintf("%.2f", s.Seconds)
		}
	}
	return "-"
}

// TopHosts are the n hosts of most by, those with none left out, ties by
// name.
func (r *Report) TopHosts(n int, by func(Host) int) []Host {
	var out []Host
	for _, h := range r.Hosts {
		if by(h) > 0 {
			out = append(out, h)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return by(out[i]) > by(out[j]) })
	return out[:min(n, len(out))]
}

func bytesText(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.3g %s", v, []string{"B", "kB", "MB", "GB", "TB"}[i])
}

func duration(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d < 3*time.Hour:
		return fmt.Sprintf("%.1f min", d.Minutes())
	case d < 72*time.Hour:
		return fmt.Sprintf("%.1f h", d.Hours())
	}
	return fmt.Sprintf("%.1f days", d.Hours()/24)
}
