package recrawlcli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
)

func summaryCommand() *cli.Command {
	return &cli.Command{
		Name:      "summary",
		Usage:     "a shard's part of lambda_0's equation, for recrawl lambda0 to reduce",
		UsageText: "recrawl summary --shard I/N --rate K0 [page flags] [FILE...]",
		Description: `lambda_0 solves sum over hosts of min(k_i, U_i(lambda_0)) = k_0, a sum that
splits by shard since no host is split. summary writes one JSON line: this
shard's sum evaluated at 49 thresholds around its own estimate (for its 1/N
share of --rate). recrawl lambda0 adds the shards' curves and solves for the
global rate; each shard then ranks with --lambda0.

Example:
   $ for i in 0 1 2 3; do recrawl summary --shard $i/4 --rate 200000 pages.ndjson > sum$i.json; done
   $ recrawl lambda0 --rate 200000 sum*.json
   {"lambda0":0.0123}
   $ recrawl rank --shard 0/4 --lambda0 0.0123 --host-rates limits.tsv pages.ndjson

With --state PATH the shard's crawl state (recrawl update) is summarised
instead of page records, from its per-cell aggregates:
   $ recrawl summary --state crawl.0.recrawl --shard 0/4 --rate 16800 > sum0.json`,
		Flags: append(pageFlags(), stateFlag()),
		Action: func(c *cli.Context) error {
			if !(c.Float64("rate") > 0) {
				return clikit.Usagef("summary needs --rate (the global rate)")
			}
			if c.String("state") != "" {
				return summaryState(c)
			}
			set, err := loadPages(c, c.Args().Slice(), false, false)
			if err != nil {
				return err
			}
			defer set.clean()
			share := c.Float64("rate")
			shard, _ := record.ParseShard(c.String("shard"))
			if shard.N > 1 {
				share /= float64(shard.N)
			}
			center := 1.0
			if sol, err := recrawl.Solve(set.ps.Problem(set.obj, share), recrawl.SolveOptions{SkipRates: true, SkipHosts: true}); err == nil && sol.Lambda0 > 0 {
				center = sol.Lambda0
			}
			s := recrawl.Summarize(set.ps, set.obj, center)
			s.Shard = c.String("shard")
			b, err := json.Marshal(s)
			if err != nil {
				return err
			}
			return clikit.Output(c).WriteLine(b)
		},
	}
}

func lambda0Command() *cli.Command {
	return &cli.Command{
		Name:      "lambda0",
		Usage:     "reduce shard summaries to the global lambda_0",
		UsageText: "recrawl lambda0 --rate K0 SUMMARY...",
		Description: `Adds the curves written by recrawl summary (one JSON line per shard, in
one or more files) and prints the lambda_0 at which the shards together use
the global rate, as {"lambda0": X}.

Example:
   $ recrawl lambda0 --rate 200000 sum0.json sum1.json sum2.json sum3.json
   {"lambda0":0.0123}`,
		Flags: []cli.Flag{
			&cli.Float64Flag{Name: "rate", Usage: "global crawl limit k_0 in `CRAWLS` per day"},
		},
		Action: func(c *cli.Context) error {
			rate := c.Float64("rate")
			if !(rate > 0) || math.IsInf(rate, 0) {
				return clikit.Usagef("lambda0 needs --rate > 0")
			}
			if c.NArg() == 0 {
				return clikit.Usagef("lambda0 needs summary files")
			}
			var sums []recrawl.Summary
			for _, name := range c.Args().Slice() {
				f, err := os.Open(name)
				if err != nil {
					return err
				}
				lr := record.NewLineReader(f)
				for {
					line, n, err := lr.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						f.Close()
						return fmt.Errorf("%s: %v", name, err)
					}
					if len(line) == 0 {
						continue
					}
					var s recrawl.Summary
					if err := json.Unmarshal(line, &s); err != nil || len(s.Points) == 0 {
						f.Close()
						return fmt.Errorf("%s: line %d: not a recrawl summary", name, n)
					}
					sums = append(sums, s)
				}
				f.Close()
			}
			l0, exact := queue.ReduceCells(sums, rate)
			if !exact {
				var err error
				if l0, err = recrawl.ReduceLambda0(sums, rate); err != nil {
					return err
				}
				l0 = roundSig(l0)
			}
			return clikit.Output(c).WriteLine([]byte(fmt.Sprintf(`{"lambda0":%s}`, record.AppendFloat(nil, l0))))
		},
	}
}
