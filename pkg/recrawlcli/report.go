package recrawlcli

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
	"github.com/sekitei/crawlkit/pkg/recrawl/report"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "where the crawl stands: pages, hosts and their rates, change rates, freshness over turns, QLink coverage",
		UsageText: "recrawl report --state S [--host-rates STATE] [--pins FILE] [--good good.txt] [--html FILE] [--turns N] [--rate K0] [--now T]",
		Description: `Writes a report of the crawl state for the terminal: pages known, fetched
and failing; the estimated weighted freshness now, sum w e^(-delta tau) / sum w
over the fetched pages, and each turn's estimate and observed freshness (the
weighted share of the turn's recrawls found unchanged) for the last --turns
turns; each host's pages, its crawl-rate limit k_i from fetch's host-rate
state (--host-rates, the file fetch --host-rates keeps), and lambda_i, the
multiplier its limit costs at the optimum for the global rate --rate (default:
the crawl's own pace, fetches a day over its turns); the histogram of change
rates by octave (and how many pages still have the prior's rate); with --good,
the share of the good URLs (QLinks, one a line) the crawl knows and has
fetched. --html also writes the report as one HTML page with plots
(freshness and pages over turns, per-host rates) drawn inline as SVG.

Example:
   $ recrawl report --state state/recrawl.db --host-rates state/host-rates.json --good good.txt --html report.html
   crawl report at 2026-11-23T12:00:00Z

   pages:     2751 known, 2310 fetched (84.0%), 12 failing
   freshness: 0.812 estimated now (over weight 5120 of fetched pages)
   QLinks:    400 good URLs: 391 known (97.8%), 350 fetched (87.5%)
   budget:    k_0 6000 crawls a day, lambda_0 0.0311
   ...`,
		Flags: []cli.Flag{stateFlag(), clikit.ShardFlag,
			&cli.StringFlag{Name: "now", Usage: "the report's `TIME` (RFC 3339; default: the clock)"},
			&cli.StringFlag{Name: "host-rates", Usage: "fetch's host-rate state `FILE` (fetch --host-rates)"},
			&cli.StringFlag{Name: "pins", Usage: "with --host-rates: host rates set by hand in `FILE` (as fetch --pins)"},
			&cli.StringFlag{Name: "good", Usage: "`FILE` of good URLs (QLinks), one a line"},
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
	if c.String("pins") != "" && c.String("host-rates") == "" {
		return clikit.Usagef("--pins needs --host-rates")
	}
	if _, err := os.Stat(c.String("state")); c.String("state") != "" && err != nil {
		return fmt.Errorf("--state: %w", err)
	}
	opt := report.Options{Turns: c.Int("turns"), Rate: c.Float64("rate")}
	var err error
	if c.String("now") != "" {
		if opt.Now, err = parseNow(c); err != nil {
			return err
		}
	}
	if path := c.String("host-rates"); path != "" {
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("--host-rates: %w", err)
		}
		if opt.Hosts, err = hostrate.Load(path, hostrate.Config{}); err != nil {
			return fmt.Errorf("--host-rates %s: %w", path, err)
		}
		if pins := c.String("pins"); pins != "" {
			m, err := hostrate.ReadPinsFile(pins)
			if err != nil {
				return clikit.Usagef("--pins: %v", err)
			}
			opt.Hosts.SetPins(m)
		}
	}
	if path := c.String("good"); path != "" {
		if opt.Good, err = report.ReadGood(path); err != nil {
			return fmt.Errorf("--good: %w", err)
		}
	}
	q, err := openQueue(c, true, queue.UpdateOptions{})
	if err != nil {
		return err
	}
	defer q.Close()
	r, err := report.Build(q, opt)
	if err != nil {
		return err
	}
	if path := c.String("html"); path != "" {
		if err := r.WriteHTMLFile(path); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	return r.WriteText(clikit.EnvOf(c).Stdout)
}
