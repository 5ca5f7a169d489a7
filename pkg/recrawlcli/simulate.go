package recrawlcli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/recrawl"
	"github.com/sekitei/crawlkit/pkg/recrawl/sim"
)

func simulateCommand() *cli.Command {
	return &cli.Command{
		Name:      "simulate",
		Usage:     "compare recrawl policies in a seeded discrete-event simulation",
		UsageText: "recrawl simulate [--scenario steady|newhost|halving] [--policies LIST] [--seed S] [--markdown | --header]",
		Description: `Draws a world (hosts x pages with log-normal weights, change rates 0.05..5 a
day, host limits 0.3x..3x their share of the global rate), then runs each
policy slot by slot under the same limits: threshold (crawl value >=
lambda_0, the article's), static (the static optimum's intervals), uniform,
proportional (rate ~ change rate), nutch (adaptive intervals x0.8 on change,
x1.4 otherwise) and estimated (threshold with change rates estimated from its
own fetches). Prints per policy the time-averaged weighted freshness (or, with
--objective harmonic, harmonic staleness: lower is better), the crawls, the
mean per-host CV of daily crawl counts, the pages never crawled, and the
scenario's host (the new one, the halved one, or host 0).

Scenarios: steady; newhost (a new host whose pages were all crawled the day
before, undifferentiated, limited: measured from its start); halving (host
0's limit halves half-way).

Example:
   $ recrawl simulate --markdown --seed 1
   | policy | freshness | vs optimum | crawls | host CV | never crawled | ...
   | threshold | 0.5633 | -0.48% | ...`,
		Flags: []cli.Flag{
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed"},
			&cli.IntFlag{Name: "hosts", Value: 20, Usage: "hosts"},
			&cli.IntFlag{Name: "pages-per-host", Value: 50, Usage: "pages per host"},
			&cli.Float64Flag{Name: "rate", Usage: "global crawls per day (default: a third of the pages' total change rate)"},
			&cli.Float64Flag{Name: "days", Value: 60, Usage: "horizon in days"},
			&cli.Float64Flag{Name: "warmup", Value: -1, Usage: "days not measured (default 10, at most a quarter of --days; 0 for newhost)"},
			&cli.StringFlag{Name: "slot", Value: "1h", Usage: "slot length"},
			&cli.StringFlag{Name: "scenario", Value: sim.Steady, Usage: "steady, newhost or halving"},
			&cli.StringFlag{Name: "policies", Value: strings.Join(sim.AllPolicies, ","), Usage: "comma-separated policies; also static-plan, the static schedule with host limits met only on average"},
			&cli.StringFlag{Name: "objective", Value: "freshness", Usage: "freshness or harmonic"},
			&cli.BoolFlag{Name: "markdown", Usage: "print a Markdown table"},
			&cli.BoolFlag{Name: "per-host", Usage: "print one row per policy and host: crawls/day, peak, CV, score, limit"},
			clikit.HeaderFlag,
		},
		Action: simulate,
	}
}

func simulate(c *cli.Context) error {
	obj, err := recrawl.ParseObjective(c.String("objective"))
	if err != nil {
		return clikit.Usagef("--objective: %v", err)
	}
	slot, err := parseSlot(c.String("slot"))
	if err != nil {
		return err
	}
	cfg := sim.Config{Seed: c.Uint64("seed"), Hosts: c.Int("hosts"), PagesPerHost: c.Int("pages-per-host"),
		Rate: c.Float64("rate"), Days: c.Float64("days"), Warmup: c.Float64("warmup"), Slot: slot,
		Objective: obj, Scenario: c.String("scenario")}
	if cfg.Hosts < 1 || cfg.PagesPerHost < 1 || cfg.Hosts*cfg.PagesPerHost > 1_000_000 || !(cfg.Days > 0) || cfg.Rate < 0 {
		return clikit.Usagef("want --hosts, --pages-per-host >= 1 (at most a million pages), --days > 0, --rate >= 0")
	}
	if cfg.Warmup < 0 {
		cfg.Warmup = math.Min(10, cfg.Days/4)
		if cfg.Scenario == sim.NewHost {
			cfg.Warmup = 0
		}
	}
	if cfg.Warmup >= cfg.Days {
		return clikit.Usagef("--warmup %v must be shorter than --days %v", cfg.Warmup, cfg.Days)
	}
	policies := strings.Split(c.String("policies"), ",")
	w, err := sim.NewWorld(cfg)
	if err != nil {
		return clikit.Usagef("%v", err)
	}
	res, err := w.Run(policies)
	if err != nil {
		return clikit.Usagef("%v", err)
	}
	out := clikit.Output(c)
	metric := "freshness"
	if obj == recrawl.Harmonic {
		metric = "harmonic_staleness"
	}
	header := []string{"policy", metric, "vs_optimum", "crawls", "host_cv", "never_crawled",
		"focus_host", "focus_" + metric, "focus_peak_per_day", "focus_cv"}
	var rows [][]string
	if c.Bool("per-host") {
		header = []string{"policy", "host", "limit_per_day", "crawls_per_day", "peak_per_day", "cv", metric}
		for _, r := range res {
			for _, h := range r.Hosts {
				rows = append(rows, []string{r.Policy, h.Name, fmt.Sprintf("%.2f", h.Limit), fmt.Sprintf("%.2f", h.Mean),
					fmt.Sprintf("%.1f", h.Peak), fmt.Sprintf("%.3f", h.CV), f4(h.Score)})
			}
		}
	} else {
		for _, r := range res {
			rows = append(rows, []string{r.Policy, f4(r.Score), fmt.Sprintf("%+.2f%%", 100*(r.Score-w.Optimum)/w.Optimum),
				strconv.Itoa(r.Crawls), fmt.Sprintf("%.3f", r.HostCV), strconv.Itoa(r.Starved),
				r.Focus.Name, f4(r.Focus.Score), fmt.Sprintf("%.1f", r.Focus.Peak), fmt.Sprintf("%.3f", r.Focus.CV)})
		}
	}
	if c.Bool("markdown") {
		out.WriteLine([]byte("| " + strings.Join(header, " | ") + " |"))
		out.WriteLine([]byte("|" + strings.Repeat("---|", len(header))))
	} else if c.Bool("header") {
		out.WriteLine([]byte(strings.Join(header, "\t")))
	}
	for _, row := range rows {
		if c.Bool("markdown") {
			out.WriteLine([]byte("| " + strings.Join(row, " | ") + " |"))
		} else {
			out.WriteLine([]byte(strings.Join(row, "\t")))
		}
	}
	if c.Bool("markdown") || c.Bool("header") {
		warnf(c, "%d pages on %d hosts, %g crawls/day, %s scenario, seed %d: static optimum %s %.4f, lambda_0 %.4g",
			w.Pages(), cfg.Hosts, roundSig(w.Rate), cfg.Scenario, cfg.Seed, metric, w.Optimum, w.Lambda0)
	}
	return nil
}

func f4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
