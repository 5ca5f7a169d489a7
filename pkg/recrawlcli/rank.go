package recrawlcli

import (
	"fmt"
	"math"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
)

func rankCommand() *cli.Command {
	return &cli.Command{
		Name:      "rank",
		Usage:     "the pages to crawl now, highest crawl value first, within host and global limits",
		UsageText: "recrawl rank [--now T] [--rate K0] [--n N | --slot 1h] [--host-rate K | --host-rates FILE] [--state FILE] [--all] [FILE...]",
		Description: `Reads page records (url, weight or --weight-field, change_rate per day,
last_fetch, optional host_rate) and writes the pages to crawl in this slot,
highest crawl value V(tau) first, each with "crawl_value", "due" and
"next_fetch". A page is a candidate once V reaches lambda_0; each host takes
its best candidates up to k_i*slot (its lambda_i is where that cut), the
crawler the best of those up to k_0*slot (or --n). lambda_0 is estimated from
the pages (constrained hosts count with their limit, the rest with their
optimal rates) unless --lambda0 is given. --state keeps lambda_0 (smoothed
from run to run), each host's lambda_i and the crawl fractions a slot leaves
over. --all writes every page in input order instead, with due true/false and
next_fetch (null: never worth crawling).

Example:
   $ cat pages.ndjson
   {"url":"https://a.example/","weight":3,"change_rate":2,"last_fetch":"2026-11-20T00:00:00Z"}
   {"url":"https://a.example/old","weight":1,"change_rate":0.01,"last_fetch":"2026-11-20T00:00:00Z"}
   $ recrawl rank --now 2026-11-21T00:00:00Z --rate 24 --slot 1h --verbose pages.ndjson
   {"url":"https://a.example/","weight":3,"change_rate":2,"last_fetch":"2026-11-20T00:00:00Z","crawl_value":0.89,"due":true,"next_fetch":"2026-11-21T00:00:00.000Z"}`,
		Flags: append(pageFlags(),
			&cli.IntFlag{Name: "n", Usage: "crawl at most `N` pages in this slot (instead of --rate times --slot)"},
			&cli.StringFlag{Name: "slot", Value: "1h", Usage: "slot length: a `DURATION` (1h, 30m) or seconds"},
			&cli.Float64Flag{Name: "lambda0", Value: -1, Usage: "use this global threshold instead of estimating it (e.g. reduced from shard summaries)"},
			&cli.StringFlag{Name: "state", Usage: "state `FILE` kept between runs (lambda_0, lambda_i, carried crawl fractions)"},
			&cli.Float64Flag{Name: "smooth", Value: 0.5, Usage: "weight of this run's lambda_0 estimate against the state's previous one"},
			&cli.BoolFlag{Name: "all", Usage: "write every page (input order) with due and next_fetch, not only those due"},
		),
		Action: rank,
	}
}

// ranked is a loaded and ranked input, shared by rank and explain.
type ranked struct {
	set   *pageSet
	res   *recrawl.RankResult
	state *recrawl.State
	slot  float64
}

func rankInput(c *cli.Context, files []string, keepURLs bool) (*ranked, error) {
	slot, err := parseSlot(c.String("slot"))
	if err != nil {
		return nil, err
	}
	if c.Int("n") < 0 {
		return nil, clikit.Usagef("--n %d: want a positive count", c.Int("n"))
	}
	if s := c.Float64("smooth"); !(s > 0 && s <= 1) {
		return nil, clikit.Usagef("--smooth %v: want a weight in (0, 1]", s)
	}
	state := &recrawl.State{Hosts: map[string]recrawl.HostState{}}
	if name := c.String("state"); name != "" {
		if state, err = recrawl.LoadState(name); err != nil {
			return nil, err
		}
	}
	// rank parses again only the lines it writes (not with --all).
	set, err := loadPages(c, files, keepURLs, !keepURLs && !c.Bool("all"))
	if err != nil {
		return nil, err
	}
	ps := set.ps
	opt := recrawl.RankOptions{Objective: set.obj, Rate: c.Float64("rate"), Slot: slot, N: c.Int("n"),
		HostCarry: make([]float64, len(ps.HostNames)), GlobalCarry: state.GlobalCarry,
		// The steady-state lambda_i are only needed to explain, report,
		// keep or predict (next_fetch of pages not due).
		Static: keepURLs || c.Bool("all") || c.Bool("verbose") || c.String("state") != "",
		// rank writes the values of the selected pages only.
		CandidateValues: !keepURLs && !c.Bool("all")}
	for h, name := range ps.HostNames {
		opt.HostCarry[h] = state.Hosts[name].Carry
	}
	if l := c.Float64("lambda0"); c.IsSet("lambda0") {
		if l < 0 || math.IsNaN(l) || math.IsInf(l, 0) {
			set.clean()
			return nil, clikit.Usagef("--lambda0 %v: want a number >= 0", l)
		}
		opt.Lambda0, opt.FixLambda0 = l, true
	} else if state.Lambda0 > 0 {
		prev, a := state.Lambda0, c.Float64("smooth")
		opt.Smooth = func(est float64) float64 { return a*est + (1-a)*prev }
		if !(opt.Rate > 0) && opt.N == 0 {
			// No global limit given this run: keep the last threshold.
			opt.Lambda0, opt.FixLambda0 = prev, true
		}
	}
	if !opt.FixLambda0 && !(opt.Rate > 0) && opt.N == 0 {
		for h, k := range ps.HostRate {
			if math.IsInf(k, 1) {
				warnf(c, "no --rate, --n or --lambda0 and host %s has no limit: lambda_0 is 0, so every page of it is due", ps.HostNames[h])
				break
			}
		}
	}
	res, err := recrawl.Rank(ps, opt)
	if err != nil {
		set.clean()
		return nil, err
	}
	if c.String("state") == "" {
		// Limits are rounded down per slot; only the state file carries the
		// fractions over, so without it a slow host would never be crawled.
		starved, example := 0, ""
		for h, k := range ps.HostRate {
			if k*slot < 1 && res.HostCandidates[h] > 0 {
				if starved == 0 {
					example = ps.HostNames[h]
				}
				starved++
			}
		}
		if starved > 0 {
			warnf(c, "%d hosts (e.g. %s) allow less than one crawl per slot: without --state they get none; give --state or a longer --slot", starved, example)
		}
	}
	return &ranked{set: set, res: res, state: state, slot: slot}, nil
}

func rank(c *cli.Context) error {
	rk, err := rankInput(c, c.Args().Slice(), false)
	if err != nil {
		return err
	}
	defer rk.set.clean()
	set, res := rk.set, rk.res
	if c.Bool("verbose") {
		rk.report(c)
	}
	out := clikit.Output(c)
	if c.Bool("all") {
		due := make([]bool, set.ps.Len())
		for _, j := range res.Selected {
			due[j] = true
		}
		err = set.each(c, nil, func(r *record.Record, j int) error {
			rk.annotate(r, j, due[j])
			return out.Write(r)
		})
	} else {
		// Keep only the selected records, then write them best first.
		pos := make(map[int32]int, len(res.Selected))
		for i, j := range res.Selected {
			pos[j] = i
		}
		recs := make([]*record.Record, len(res.Selected))
		err = set.eachPage(c, res.Selected, func(r *record.Record, j int) error {
			rk.annotate(r, j, true)
			recs[pos[int32(j)]] = r
			return nil
		})
		if err == nil {
			for _, r := range recs {
				if err := out.Write(r); err != nil {
					return err
				}
			}
		}
	}
	if err != nil {
		return err
	}
	if name := c.String("state"); name != "" {
		return rk.save(name)
	}
	return nil
}

func (rk *ranked) annotate(r *record.Record, j int, due bool) {
	set, res := rk.set, rk.res
	r.SetFloat("crawl_value", roundSig(res.Value[j]))
	r.SetBool("due", due)
	if due {
		r.SetTime("next_fetch", set.now)
		return
	}
	d := res.NextFetch(set.ps, set.obj, j)
	switch {
	case math.IsInf(d, 1):
		r.SetRaw("next_fetch", []byte("null"))
	case d == 0:
		// Over the threshold but left out by a limit: the next slot.
		r.SetTime("next_fetch", afterDays(set.now, rk.slot))
	default:
		r.SetTime("next_fetch", afterDays(set.now, d))
	}
}

// roundSig rounds to 6 significant digits: enough to rank by, short to read.
func roundSig(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	e := math.Pow(10, 5-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*e) / e
}

func (rk *ranked) report(c *cli.Context) {
	set, res := rk.set, rk.res
	w := newStderr(c)
	defer w.Flush()
	how := "given"
	if res.Estimated {
		how = "estimated from the pages"
	}
	gcap := "none"
	if res.GlobalCap >= 0 {
		gcap = fmt.Sprint(res.GlobalCap)
	}
	fmt.Fprintf(w, "recrawl: lambda_0 %.6g (%s); %d pages on %d hosts; slot cap %s; %d selected\n",
		res.Lambda0, how, set.ps.Len(), len(set.ps.HostNames), gcap, len(res.Selected))
	order := make([]int, len(set.ps.HostNames))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if set.ps.HostNames[a] < set.ps.HostNames[b] {
			return -1
		}
		return 1
	})
	for _, h := range order {
		k := "none"
		if kk := set.ps.HostRate[h]; !math.IsInf(kk, 1) {
			k = fmt.Sprintf("%g/day", kk)
		}
		capStr := "none"
		if res.HostCap[h] != math.MaxInt {
			capStr = fmt.Sprint(res.HostCap[h])
		}
		fmt.Fprintf(w, "recrawl: host %s: limit %s, lambda_i %.6g (static %.6g), candidates %d, cap %s, selected %d\n",
			set.ps.HostNames[h], k, res.SlotLambda[h], res.StaticLambda[h], res.HostCandidates[h], capStr, res.HostSelected[h])
	}
}

func (rk *ranked) save(name string) error {
	set, res, st := rk.set, rk.res, rk.state
	st.Updated = set.now
	st.Lambda0 = res.Lambda0
	st.GlobalCarry = res.GlobalCarry
	for h, host := range set.ps.HostNames {
		st.Hosts[host] = recrawl.HostState{Lambda: res.SlotLambda[h], Static: res.StaticLambda[h], Carry: res.HostCarry[h]}
	}
	return st.Save(name)
}
