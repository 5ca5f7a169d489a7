package recrawlcli

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
)

func estimateCommand() *cli.Command {
	return &cli.Command{
		Name:      "estimate",
		Usage:     "change rates from fetch histories or fetch/change counts",
		UsageText: "recrawl estimate [--prior-rate R] [--prior-days D] [--min-history N] [FILE...]",
		Description: `Reads either fetch records (url, fetched_at, digest; several per URL, any
order), or page records with counts: "fetches", "changes" and the interval
between fetches ("interval" in seconds, or "first_fetch" and "last_fetch").
Writes one record per URL, in order of first appearance: the latest fetch
record with "change_rate" (per day), "fetches", "changes" and "last_fetch".

A change is a digest different from the previous fetch's. With regular
intervals the estimator of Cho and Garcia-Molina (2003),
r = -ln((n - X + 0.5)/(n + 0.5))/I, which stays unbiased where the naive X/(nI)
saturates; with irregular intervals maximum likelihood; with fewer than
--min-history intervals, or no change or a change at every fetch, the
posterior mode under a Gamma prior worth --prior-days days at --prior-rate.
Fetch records without a digest but with "error" (failed fetches) are skipped.

Example:
   $ cat fetches.ndjson
   {"url":"https://a.example/","fetched_at":"2026-11-01T00:00:00Z","digest":"sha1:AAA"}
   {"url":"https://a.example/","fetched_at":"2026-11-02T00:00:00Z","digest":"sha1:BBB"}
   ...
   $ recrawl estimate fetches.ndjson
   {"url":"https://a.example/","fetched_at":"2026-11-08T00:00:00Z","digest":"sha1:GGG","change_rate":0.74,"fetches":8,"changes":4,"last_fetch":"2026-11-08T00:00:00Z"}`,
		Flags: append(clikit.InputFlags(),
			&cli.Float64Flag{Name: "prior-rate", Value: 0.2, Usage: "prior change `RATE` per day for pages with little history"},
			&cli.Float64Flag{Name: "prior-days", Value: 7, Usage: "weight of the prior in days of observation"},
			&cli.IntFlag{Name: "min-history", Value: 5, Usage: "fetch intervals needed before the data alone decide"},
		),
		Action: estimate,
	}
}

type fetchObs struct {
	at     time.Time
	digest uint64
}

type estPage struct {
	rec    *record.Record // the latest fetch record, or the counts record
	latest time.Time
	hist   []fetchObs
	counts bool
	rate   float64
	n, x   int
}

func estimate(c *cli.Context) error {
	prior := recrawl.Prior{Rate: c.Float64("prior-rate"), Days: c.Float64("prior-days"), MinHistory: c.Int("min-history")}
	if !(prior.Rate > 0) || math.IsInf(prior.Rate, 0) || prior.Days < 0 || math.IsNaN(prior.Days) || prior.MinHistory < 1 {
		return clikit.Usagef("--prior-rate must be positive, --prior-days >= 0, --min-history >= 1")
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	var order []*estPage
	byURL := map[string]*estPage{}
	err = in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
		u := r.URL()
		if r.Has("fetched_at") {
			obs, skip, err := parseFetch(r)
			if err != nil {
				return r.Errorf("%v", err)
			}
			if skip {
				return nil
			}
			p := byURL[u]
			if p == nil {
				p = &estPage{}
				byURL[u] = p
				order = append(order, p)
			} else if p.counts {
				return r.Errorf("fetch record for %s, which also has a counts record", clip(u))
			}
			p.hist = append(p.hist, obs)
			if p.rec == nil || !obs.at.Before(p.latest) {
				p.rec, p.latest = r, obs.at
			}
			return nil
		}
		p, err := parseCounts(r, prior)
		if err != nil {
			return r.Errorf("%v", err)
		}
		if _, dup := byURL[u]; dup {
			return r.Errorf("%s appears again", clip(u))
		}
		byURL[u] = p
		order = append(order, p)
		return nil
	})
	if err != nil {
		return err
	}
	out := clikit.Output(c)
	for _, p := range order {
		if !p.counts {
			p.estimateHistory(prior)
			p.rec.SetTime("last_fetch", p.latest)
		}
		r := p.rec
		r.SetFloat("change_rate", roundSig(p.rate))
		r.SetInt("fetches", int64(p.n+1))
		r.SetInt("changes", int64(p.x))
		if err := out.Write(r); err != nil {
			return err
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

func parseFetch(r *record.Record) (fetchObs, bool, error) {
	t, _, err := r.Time("fetched_at")
	if err != nil {
		return fetchObs{}, false, err
	}
	d, ok := r.String("digest")
	if !ok || d == "" {
		if r.Has("error") {
			return fetchObs{}, true, nil // a failed fetch says nothing about change
		}
		return fetchObs{}, false, errors.New(`fetch record without "digest"`)
	}
	h := fnv.New64a()
	h.Write([]byte(d))
	return fetchObs{at: t, digest: h.Sum64()}, false, nil
}

// estimateHistory sorts the fetches by time and estimates from the gaps.
func (p *estPage) estimateHistory(prior recrawl.Prior) {
	slices.SortStableFunc(p.hist, func(a, b fetchObs) int { return a.at.Compare(b.at) })
	var o recrawl.Observations
	for i := 1; i < len(p.hist); i++ {
		gap := p.hist[i].at.Sub(p.hist[i-1].at).Hours() / 24
		if gap <= 0 {
			continue // the same fetch twice
		}
		o.Gaps = append(o.Gaps, gap)
		o.Changed = append(o.Changed, p.hist[i].digest != p.hist[i-1].digest)
	}
	p.n = len(o.Gaps)
	for _, ch := range o.Changed {
		if ch {
			p.x++
		}
	}
	p.rate, _ = recrawl.Estimate(o, prior)
}

func parseCounts(r *record.Record, prior recrawl.Prior) (*estPage, error) {
	f, ok, err := r.Float("fetches")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New(`neither "fetched_at" (a fetch record) nor "fetches" (counts)`)
	}
	x, _, err := r.Float("changes")
	if err != nil {
		return nil, err
	}
	if f < 1 || f != math.Trunc(f) || f > 1e9 {
		return nil, fmt.Errorf(`field "fetches": want a whole number >= 1, got %v`, f)
	}
	n := int(f) - 1 // intervals
	if x < 0 || x != math.Trunc(x) || x > float64(n) {
		return nil, fmt.Errorf(`field "changes": want a whole number between 0 and fetches-1 = %d, got %v`, n, x)
	}
	var interval float64
	if iv, ok, err := r.Float("interval"); err != nil {
		return nil, err
	} else if ok {
		if iv <= 0 {
			return nil, fmt.Errorf(`field "interval": want seconds > 0, got %v`, iv)
		}
		interval = iv / 86400
	} else if n > 0 {
		first, ok1, err1 := r.Time("first_fetch")
		last, ok2, err2 := r.Time("last_fetch")
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		if !ok1 || !ok2 || !last.After(first) {
			return nil, errors.New(`counts need "interval" (seconds) or "first_fetch" before "last_fetch"`)
		}
		interval = last.Sub(first).Hours() / 24 / float64(n)
	}
	p := &estPage{rec: r, counts: true, n: n, x: int(x)}
	p.rate, _ = recrawl.Estimate(recrawl.Observations{N: n, X: int(x), Interval: interval}, prior)
	return p, nil
}
