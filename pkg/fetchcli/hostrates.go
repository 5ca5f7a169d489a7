package fetchcli

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/fetch"
	"github.com/sekitei/crawlkit/pkg/hostrate"
)

// hostRateFlags pace fetch by the per-host crawl-rate estimate (package
// hostrate) kept in a state file from run to run.
func hostRateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "host-rates", Usage: "pace each host by its crawl-rate estimate kept in state `FILE` (read, learnt from every answer, saved at the end; --delay is the pace of a host not yet in it)"},
		&cli.StringFlag{Name: "pins", Usage: "with --host-rates: host rates set by hand in `FILE` (host<TAB>rate per second, or 30/h, 2/m, 100/d; 0: do not crawl)"},
		&cli.DurationFlag{Name: "max-host-wait", Value: 2 * time.Minute, Usage: "a host that asks for a longer wait (Retry-After, Crawl-delay) has its URLs written with error \"resting\""},
		&cli.StringFlag{Name: "write-host-rates", Usage: "with --host-rates: write each host's rate limit in crawls per day to `FILE` at the end, for recrawl --host-rates"},
	}
}

// openHostRates loads the estimator named by --host-rates into cfg and
// returns what saves it; without the flag it does nothing.
func openHostRates(c *cli.Context, cfg *fetch.Config) (save func() error, err error) {
	state := c.String("host-rates")
	if state == "" {
		for _, f := range []string{"pins", "write-host-rates"} {
			if c.String(f) != "" {
				return nil, clikit.Usagef("--%s needs --host-rates", f)
			}
		}
		return func() error { return nil }, nil
	}
	est, err := loadEstimator(state, c.String("pins"), c.Duration("delay"))
	if err != nil {
		return nil, err
	}
	if c.Duration("max-host-wait") <= 0 {
		return nil, clikit.Usagef("--max-host-wait must be positive")
	}
	cfg.HostRates, cfg.MaxHostWait = est, c.Duration("max-host-wait")
	out := c.String("write-host-rates")
	return func() error {
		if err := est.Save(state); err != nil {
			return fmt.Errorf("saving --host-rates: %w", err)
		}
		if out != "" {
			if err := est.WriteHostRatesFile(out); err != nil {
				return fmt.Errorf("--write-host-rates: %w", err)
			}
		}
		return nil
	}, nil
}

// loadEstimator reads the state and the pins; a host not yet known starts
// at one request per delay.
func loadEstimator(state, pins string, delay time.Duration) (*hostrate.Estimator, error) {
	var hc hostrate.Config
	if delay > 0 {
		hc.Initial = 1 / delay.Seconds()
	}
	est, err := hostrate.Load(state, hc)
	if err != nil {
		return nil, err
	}
	if pins != "" {
		m, err := hostrate.ReadPinsFile(pins)
		if err != nil {
			return nil, clikit.Usagef("--pins: %v", err)
		}
		est.SetPins(m)
	}
	return est, nil
}

func hostRatesCommand() *cli.Command {
	return &cli.Command{
		Name:      "host-rates",
		Usage:     "write each host's crawl-rate limit in crawls per day, for recrawl --host-rates",
		UsageText: "fetch host-rates --host-rates STATE [--pins FILE] [--tsv]",
		Description: `Reads the state fetch --host-rates keeps and writes host<TAB>crawls per day,
one host a line (the smoothed estimate with the headroom of the next probe:
x1.5 while the host never showed distress, half way to its known limit
below it, 5% beyond it; or the pin; capped by the host's Crawl-delay), the
file recrawl next --host-rates reads; a host pinned to 0
is a comment line ("# host<TAB>0 do not crawl"). --tsv writes instead
host, rate now (per second), smoothed (per second), known limit, pinned,
crawl-delay (s), failures in a row and resting-until, for people.

Example:
   $ fetch host-rates --host-rates state/host-rates.json --pins pins.txt
   # private.example	0 do not crawl
   news.example	226800
   slow.example	720
   $ fetch host-rates --host-rates state/host-rates.json --tsv --header
   host	rate	smoothed	limit	pinned	crawl_delay	failures	resting_until
   dead.example	0.5	0.5	0	false	0	5	2026-11-23T12:10:00Z
   news.example	2.25	2	3	false	0	0	`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "host-rates", Required: true, Usage: "the state `FILE` of fetch --host-rates"},
			&cli.StringFlag{Name: "pins", Usage: "host rates set by hand in `FILE`"},
			&cli.BoolFlag{Name: "tsv", Usage: "a table of each host's state instead"},
			clikit.HeaderFlag,
		},
		Action: func(c *cli.Context) error {
			if _, err := os.Stat(c.String("host-rates")); err != nil {
				return fmt.Errorf("fetch host-rates: %w", err)
			}
			est, err := loadEstimator(c.String("host-rates"), c.String("pins"), 0)
			if err != nil {
				return err
			}
			w := clikit.EnvOf(c).Stdout
			if !c.Bool("tsv") {
				return est.WriteHostRates(w)
			}
			if c.Bool("header") {
				fmt.Fprintln(w, "host\trate\tsmoothed\tlimit\tpinned\tcrawl_delay\tfailures\tresting_until")
			}
			for _, h := range est.Hosts() {
				until := ""
				if !h.RestUntil.IsZero() {
					until = h.RestUntil.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(w, "%s\t%.4g\t%.4g\t%.4g\t%t\t%g\t%d\t%s\n", h.Host, h.Rate, h.Smoothed, h.Limit, h.Pinned, h.CrawlDelay.Seconds(), h.Failures, until)
			}
			return nil
		},
	}
}
