package recrawlcli

import (
	"errors"
	"fmt"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
)

func solveCommand() *cli.Command {
	return &cli.Command{
		Name:      "solve",
		Usage:     "the exact static optimum: each page's optimal crawl rate and interval, lambda_0 and each lambda_i",
		UsageText: "recrawl solve [--rate K0] [--host-rate K | --host-rates FILE] [--objective freshness|harmonic] [FILE...]",
		Description: `Solves the static problem of the article: maximise the weighted freshness
sum of w (1 - e^(-delta/rho)) rho/delta over the crawl rates rho, with each host's
rates summing to at most k_i and all to at most k_0. Nested bisection on the
multipliers (Newton-accelerated), O(n log 1/eps). Writes every page with
"optimal_rate" (crawls per day), "optimal_interval" (seconds) and
"crawl_threshold" (lambda_0 + lambda_i). Pages never worth crawling (w/delta
at or below their threshold) get optimal_rate 0, optimal_interval null and
"never_crawl": true, and are counted on stderr. last_fetch is not needed.

Example (Cho and Garcia-Molina: pages changing 1..5 times a day, 5 crawls a day):
   $ for d in 1 2 3 4 5; do echo "{\"url\":\"http://p$d.example/\",\"change_rate\":$d}"; done |
       recrawl solve --rate 5
   {"url":"http://p1.example/","change_rate":1,"optimal_rate":1.15,...}
   ...
   {"url":"http://p5.example/","change_rate":5,"optimal_rate":0,"optimal_interval":null,...,"never_crawl":true}
   recrawl: 1 of 5 pages are never worth crawling (w/delta <= lambda_0 + lambda_i)`,
		Flags: pageFlags(),
		Action: func(c *cli.Context) error {
			set, err := loadPages(c, c.Args().Slice(), false, false)
			if err != nil {
				return err
			}
			defer set.clean()
			sol, err := recrawl.Solve(set.ps.Problem(set.obj, c.Float64("rate")), recrawl.SolveOptions{})
			if errors.Is(err, recrawl.ErrUnbounded) {
				return clikit.Usagef("%v (--rate, --host-rate or --host-rates)", err)
			}
			if err != nil {
				return err
			}
			if c.Bool("verbose") {
				w := newStderr(c)
				fmt.Fprintf(w, "recrawl: lambda_0 %.6g; %d pages on %d hosts; %d solver passes\n",
					sol.Lambda0, set.ps.Len(), len(set.ps.HostNames), sol.Passes)
				for h, name := range set.ps.HostNames {
					if sol.HostLambda[h] > 0 {
						fmt.Fprintf(w, "recrawl: host %s: limit %g/day binds, lambda_i %.6g\n", name, set.ps.HostRate[h], sol.HostLambda[h])
					}
				}
				w.Flush()
			}
			out := clikit.Output(c)
			err = set.each(c, nil, func(r *record.Record, j int) error {
				rate := sol.Rate[j]
				r.SetFloat("optimal_rate", roundSig(rate))
				if rate > 0 {
					r.SetFloat("optimal_interval", math.Round(86400/rate))
				} else {
					r.SetRaw("optimal_interval", []byte("null"))
				}
				r.SetFloat("crawl_threshold", roundSig(sol.Threshold(set.ps.Host[j])))
				if rate == 0 {
					r.SetBool("never_crawl", true)
				}
				return out.Write(r)
			})
			if err != nil {
				return err
			}
			if sol.Never > 0 {
				warnf(c, "%d of %d pages are never worth crawling (w/delta <= lambda_0 + lambda_i)", sol.Never, set.ps.Len())
			}
			return nil
		},
	}
}
