package recrawlcli

import (
	"fmt"
	"math"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
)

func explainCommand() *cli.Command {
	cmd := rankCommand()
	return &cli.Command{
		Name:      "explain",
		Usage:     "why a page is (or is not) due: its crawl value, the thresholds, its host's lambda",
		UsageText: "recrawl explain [rank flags] URL [FILE...]",
		Description: `Ranks the input exactly as rank would with the same flags (the state file is
read, not written) and explains the decision for URL: its own part (weight,
change rate, age, crawl value V(tau) and its ceiling w/delta) and its
host's part (lambda_0, the host's lambda_i in this slot and in the steady
state, how many of its pages compete for how many crawls).

Example:
   $ recrawl explain --now 2026-11-21T00:00:00Z --rate 24 https://a.example/old pages.ndjson
   url:          https://a.example/old
   decision:     never: its crawl value can not exceed w/delta = 100 ...

With --state naming a crawl state (recrawl update), explains each URL
from the state as recrawl next with the same flags (--n, --rate, --slot,
host limits, --lambda0, --now) would decide, new pages as old:
   $ recrawl explain --state crawl.recrawl --n 700 --now 2026-11-23T10:00:00Z https://b.example/new
   url:          https://b.example/new
   host:         b.example, limit none
   weight:       1 (the default: no importance yet)
   change rate:  0.2 a day (the prior (0 fetches, 0 changes: too little history))
   tau:          infinite (never fetched)
   crawl value:  V = 5 of at most 5 (w/delta)
   ...`,
		Flags: cmd.Flags,
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 {
				return clikit.Usagef("explain needs a URL")
			}
			if st := c.String("state"); st != "" && queue.IsState(st) {
				return explainState(c)
			}
			url := c.Args().First()
			rk, err := rankInput(c, c.Args().Slice()[1:], true)
			if err != nil {
				return err
			}
			defer rk.set.clean()
			j := -1
			for i, u := range rk.set.urls {
				if u == url {
					j = i
					break
				}
			}
			if j < 0 {
				return fmt.Errorf("%s: no such page in the input", url)
			}
			return rk.explain(c, j)
		},
	}
}

func (rk *ranked) explain(c *cli.Context, j int) error {
	set, res := rk.set, rk.res
	ps := set.ps
	h := ps.Host[j]
	w := clikit.EnvOf(c).Stdout
	p := func(k, format string, args ...any) {
		fmt.Fprintf(w, "%-13s "+format+"\n", append([]any{k + ":"}, args...)...)
	}
	p("url", "%s", set.urls[j])
	limit := "none"
	if k := ps.HostRate[h]; !math.IsInf(k, 1) {
		limit = fmt.Sprintf("%g crawls/day (%d this slot)", k, res.HostCap[h])
	}
	p("host", "%s, limit %s", ps.HostNames[h], limit)
	p("weight", "%g", ps.W[j])
	p("change rate", "%g/day", ps.Delta[j])
	if math.IsInf(ps.Tau[j], 1) {
		p("last fetch", "never")
	} else {
		p("last fetch", "%s (%s ago)", fmtTime(afterDays(set.now, -ps.Tau[j])), days(ps.Tau[j]))
	}
	maxV := set.obj.MaxValue(ps.W[j], ps.Delta[j])
	p("crawl value", "V(tau) = %.6g of at most %.6g (w/delta)", res.Value[j], maxV)
	p("lambda_0", "%.6g (global threshold; %s)", res.Lambda0, map[bool]string{true: "estimated from the pages", false: "given or kept"}[res.Estimated])
	p("lambda_i", "%.6g this slot, %.6g in the steady state", res.SlotLambda[h], res.StaticLambda[h])
	p("host", "%d pages, %d with V >= lambda_0, %d selected", countHost(ps.Host, h), res.HostCandidates[h], res.HostSelected[h])
	th := res.Threshold(h)
	if iv := set.obj.Interval(ps.W[j], ps.Delta[j], th); !math.IsInf(iv, 1) {
		p("optimum", "recrawl every %s (V reaches lambda_0 + lambda_i = %.6g)", days(iv), th)
	}
	rankOf := -1
	for i, s := range res.Selected {
		if int(s) == j {
			rankOf = i
		}
	}
	var d string
	switch {
	case rankOf >= 0:
		d = fmt.Sprintf("due: crawl now (%d of %d in this slot)", rankOf+1, len(res.Selected))
	case res.Value[j] >= maxV && maxV <= res.Lambda0:
		d = fmt.Sprintf("never: its crawl value can not exceed w/delta = %.6g, at or below lambda_0 = %.6g", maxV, res.Lambda0)
	case maxV <= th:
		d = fmt.Sprintf("never: w/delta = %.6g is at or below its host's threshold %.6g", maxV, th)
	case res.Value[j] < res.Lambda0:
		left := res.NextFetch(ps, set.obj, j)
		d = fmt.Sprintf("not due: V %.6g is below lambda_0 %.6g; it reaches its host's threshold %.6g in %s, at %s",
			res.Value[j], res.Lambda0, th, days(left), fmtTime(afterDays(set.now, left)))
	case res.HostSelected[h] >= res.HostCap[h] && res.Value[j] <= res.Lambda0+res.SlotLambda[h]:
		d = fmt.Sprintf("waiting: V %.6g >= lambda_0, but the host's limit took %d better pages this slot", res.Value[j], res.HostSelected[h])
	default:
		d = fmt.Sprintf("waiting: V %.6g >= lambda_0, but the global limit (%d this slot) took better pages", res.Value[j], res.GlobalCap)
	}
	p("decision", "%s", d)
	return nil
}

func countHost(hosts []int32, h int32) int {
	n := 0
	for _, x := range hosts {
		if x == h {
			n++
		}
	}
	return n
}

// days prints a duration given in days.
func days(d float64) string {
	if math.IsInf(d, 1) {
		return "never"
	}
	return time.Duration(math.Round(d*86400) * float64(time.Second)).String()
}
