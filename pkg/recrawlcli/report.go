package recrawlcli

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
	"github.com/sekitei/crawlkit/pkg/recrawl/report"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "where the crawl stands: pages, turns, fetch outcomes, hosts and their rates, change rates, freshness, QLink coverage",
		UsageText: "recrawl report DIR | --state S [--state S2...] [--host-rates STATE...] [--good good.txt] [--json] [--html FILE] [--turns N] [--rate K0] [--now T]",
		Description: `Writes where a crawl stands, for the terminal (or with --json as one JSON
document, for monitoring), and with --html also as one HTML page with plots.

DIR is a crawl directory of scripts/crawl-cycle.sh: the report reads every
shard's recrawl state (DIR/state/recrawl.db, or recrawl.I.db with SHARDS=N)
and host-rate estimates (host-rates[.I].json), DIR/good.txt when it is there,
the turns' directories kept in DIR/batches (fetch outcomes by kind, bytes,
candidates new and due, deferred) and DIR/logs/cycle.log (each step's time).
--state reads states instead (given more than once, the shards of one crawl;
a shard's state is read as the shard it holds, and good URLs are then
counted over its hosts only), with their host-rate states in --host-rates.

The report: pages known, fetched and failing; the estimated weighted
freshness now, sum w e^(-delta tau) / sum w over the fetched pages, and each
turn's estimate and observed freshness (the weighted share of the turn's
recrawls found unchanged) for the last --turns turns; each host's pages,
its crawl-rate limit k_i from fetch's host-rate state, and lambda_i, the
multiplier its limit costs at the optimum for the global rate --rate
(default: the crawl's own pace, fetches a day over its turns); the
histogram of change rates by octave (and how many pages still have the
prior's rate); with good URLs, the share of them (QLinks) the crawl knows
and has fetched. A state, batch or log that cannot be read is listed under
"problems" with its path, the rest is reported, and the exit status is 1.

Example:
   $ recrawl report out/demo/crawl
   crawl report at 2026-11-26T19:45:00Z
   crawl:     out/demo/crawl, 5 turns over 4.9 min
   shard 0/2   out/demo/crawl/state/recrawl.0.db: 3482 pages
   shard 1/2   out/demo/crawl/state/recrawl.1.db: 1731 pages

   pages:     5213 known, 2438 fetched (46.8%), 2775 never fetched, 423 failing
   freshness: 0.999 estimated now (over weight 1.0591 of fetched pages)
   QLinks:    1608 good URLs: 1608 known (100.0%), 1313 fetched (81.7%)
   budget:    k_0 837327 crawls a day, lambda_0 2.26389e-10
   last turn: 000005-20261126T193923Z: 921 tried, 723 fetched (2.45 MB), 198 failed; 1700 candidates (1700 new, 0 due), 779 deferred
   ...
   $ recrawl report --json out/demo/crawl > status.json
   $ recrawl report --html report.html out/demo/crawl`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "state", Usage: "a recrawl state `PATH` (repeat for every shard of a crawl)"},
			clikit.ShardFlag,
			&cli.StringFlag{Name: "now", Usage: "the report's `TIME` (RFC 3339; default: the clock)"},
			&cli.StringSliceFlag{Name: "host-rates", Usage: "fetch's host-rate state `FILE` (fetch --host-rates; repeat for every shard)"},
			&cli.StringFlag{Name: "pins", Usage: "with --host-rates: host rates set by hand in `FILE` (as fetch --pins)"},
			&cli.StringFlag{Name: "good", Usage: "`FILE` of good URLs (QLinks), one a line (default with DIR: DIR/good.txt when present)"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as one JSON document instead of text"},
			&cli.StringFlag{Name: "html", Usage: "also write the report as an HTML page to `FILE`"},
			&cli.IntFlag{Name: "turns", Value: 10, Usage: "list the last `N` turns"},
			&cli.Float64Flag{Name: "rate", Usage: "global crawl limit k_0 in `CRAWLS` per day for lambda_0 and lambda_i (default: the crawl's pace)"},
		},
		Action: runReport,
	}
}

func runReport(c *cli.Context) error {
	if c.Int("turns") < 1 || c.Float64("rate") < 0 {
		return clikit.Usagef("want --turns >= 1, --rate >= 0")
	}
	states := c.StringSlice("state")
	switch {
	case c.NArg() > 1:
		return clikit.Usagef("report reads one crawl directory, got %d", c.NArg())
	case c.NArg() == 1 && (len(states) > 0 || len(c.StringSlice("host-rates")) > 0 || c.String("shard") != ""):
		return clikit.Usagef("DIR reads the crawl's own states: give DIR or --state (with --host-rates, --shard), not both")
	case c.NArg() == 0 && len(states) == 0:
		return clikit.Usagef("report needs a crawl directory DIR or --state")
	}
	if c.String("pins") != "" && c.NArg() == 0 && len(c.StringSlice("host-rates")) == 0 {
		return clikit.Usagef("--pins needs --host-rates or DIR")
	}
	opt := report.Options{Turns: c.Int("turns"), Rate: c.Float64("rate")}
	var err error
	if c.String("now") != "" {
		if opt.Now, err = parseNow(c); err != nil {
			return err
		}
	}
	var pins map[string]float64
	if path := c.String("pins"); path != "" {
		if pins, err = hostrate.ReadPinsFile(path); err != nil {
			return clikit.Usagef("--pins: %v", err)
		}
	}
	if path := c.String("good"); path != "" {
		if opt.Good, err = report.ReadGood(path); err != nil {
			return fmt.Errorf("--good: %w", err)
		}
	}
	var r *report.Report
	if c.NArg() == 1 {
		if r, err = report.ReadCrawl(c.Args().First(), opt, pins); err != nil {
			return err
		}
	} else {
		if r, err = reportStates(c, states, opt, pins); err != nil {
			return err
		}
	}
	if path := c.String("html"); path != "" {
		if err := r.WriteHTMLFile(path); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	out := clikit.EnvOf(c).Stdout
	if c.Bool("json") {
		err = r.WriteJSON(out)
	} else {
		err = r.WriteText(out)
	}
	if err != nil {
		return err
	}
	if n := len(r.Problems); n > 0 {
		return fmt.Errorf("%d problems, the report leaves out what they hold: %s", n, strings.Join(r.Problems, "; "))
	}
	return nil
}

// reportStates reports on states named one by one: each is read as the
// shard it holds (--shard, when given, must be the one).
func reportStates(c *cli.Context, paths []string, opt report.Options, pins map[string]float64) (*report.Report, error) {
	want, err := record.ParseShard(c.String("shard"))
	if err != nil {
		return nil, clikit.Usagef("%v", err)
	}
	r := report.New(opt)
	for _, path := range c.StringSlice("host-rates") {
		if _, err := os.Stat(path); err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("host rates %v", err))
			continue
		}
		e, err := hostrate.Load(path, hostrate.Config{Clock: report.At(r.Now)})
		if err != nil {
			r.Problems = append(r.Problems, err.Error())
			continue
		}
		if pins != nil {
			e.SetPins(pins)
		}
		opt.Hosts = append(opt.Hosts, e)
	}
	var states []report.State
	seen := map[string]bool{}
	shards := map[int]bool{}
	for _, path := range paths {
		if seen[path] {
			return nil, clikit.Usagef("--state %s given twice", path)
		}
		seen[path] = true
		if _, err := os.Stat(path); err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("state %v", err))
			continue
		}
		q, err := queue.Open(path, queue.Options{ReadOnly: true, AnyShard: true})
		if err != nil {
			r.Problems = append(r.Problems, err.Error())
			continue
		}
		defer q.Close()
		got := q.Shard()
		if want.N > 0 && got != want {
			return nil, clikit.Usagef("--shard %s: %s holds shard %s", want, path, orAllHosts(got))
		}
		if got.N > 1 {
			if shards[got.I] {
				return nil, clikit.Usagef("--state: two states of shard %s", got)
			}
			shards[got.I] = true
			// One shard's good URLs: those of its hosts, unless every
			// shard is given.
			opt.GoodShard = got
		}
		states = append(states, report.State{Path: path, Queue: q})
	}
	if len(shards) > 1 {
		opt.GoodShard = record.Shard{}
	}
	if err := r.AddStates(states, opt); err != nil {
		return nil, err
	}
	return r, nil
}

func orAllHosts(s record.Shard) string {
	if s.N <= 1 {
		return "(all hosts)"
	}
	return s.String()
}
