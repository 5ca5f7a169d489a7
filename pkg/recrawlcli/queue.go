package recrawlcli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
)

func stateFlag() cli.Flag {
	return &cli.StringFlag{Name: "state", Usage: "the crawl state `PATH` (a file; created by the first update)"}
}

func nowFlag() cli.Flag {
	return &cli.StringFlag{Name: "now", Usage: "the turn's `TIME` (RFC 3339; default: the batch ID's time, else the latest fetched_at, else the clock)"}
}

func updateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "fold one batch of fetch records into the crawl state",
		UsageText: "recrawl update --state S --batch ID [--weights FILE] [--deferred FILE] [--shard I/N] [FETCH_RECORDS...]",
		Description: `Folds one turn's fetch records into the per-page state: the change-rate
estimator's statistics (fetches, changes, interval sums; the same estimate as
recrawl estimate over the whole history), the last fetch, digest and SimHash.
A change is a digest different from the last one; when both fetches carry
"text_simhash", a Hamming distance above --simhash-threshold instead. A 304
is an observation "unchanged". A failed fetch (error, 4xx, 5xx) only sets
when the page may be tried again: robots.txt refusals 1 day, doubling up to
30; 410 30 days up to 180; 404 7 days up to 90; other 4xx 3 days up to 60;
5xx, 429 and network errors 1 hour up to 7 days.

--weights reads opic's records of the pages whose importance changed, and so
does a record of the input carrying the weight field ('opic update --changes -'
writes the batch and then its change records on stdout, so the loop's steps
pipe: fetch | opic update --changes - | recrawl update); a page
without one (or with 0) has --default-weight (default: the mean importance
in the state), with one warning per run. Every URL of the weights file or
of a fetch record's "links" that the state does not know becomes a page
never crawled. --deferred lists candidates the loop did not fetch: each is
not offered for --defer-for, twice as long when deferred again (up to
--defer-cap), its statistics untouched. A record with neither fetched_at,
status nor error is a URL to know (a seed, a sitemap entry): a page never
crawled, if the state does not know it yet. Its "changefreq" (fetch
sitemaps) is the page's prior change rate (hourly 24/day, daily 1, weekly
1/7, monthly 1/30, yearly 1/365, never 1/3650; always counts as hourly),
which decides its rate until --min-history fetches; its "lastmod", for a
page fetched before, is an observation: changed since the later of the last
fetch and the last such observation when lastmod is after it, unchanged
otherwise (the next fetch then does not count that change twice).

A fetch record whose "canonical" names another URL of its host retires the
page: it is not offered again and its canonical becomes a known page, so a
URL variant (?utm=..., /print/) is fetched once. --recrawl-canonicalised
keeps offering such pages; a later fetch naming no other canonical brings
the page back.

The state records the batch ID in the same transaction: a batch whose ID is
not after the last one applied changes nothing (a note, exit 0), so a turn
can be rerun after a crash. With --shard every fetch record is read (links
cross shards) and only this shard's hosts are kept.

Example:
   $ recrawl update --state crawl.recrawl --batch 000042-20261123T100000Z \
       --weights importance.ndjson --deferred dropped.ndjson fetched.ndjson
   $ fetch sitemaps sites.txt > sitemap.ndjson     # lastmod, changefreq
   $ recrawl update --state crawl.recrawl --batch 000043-20261123T110000Z -v fetched.ndjson sitemap.ndjson
   recrawl: batch 000043-20261123T110000Z: 700 fetches (41 changed, 612 unchanged, 47 failed, 0 stale), 0 weights,
   0 deferred, 1520 new pages, 12 canonicalised, 88 sitemap lastmods, 1540 changefreqs, 24310 pages
   $ recrawl update --state crawl.recrawl --batch 000042-20261123T100000Z fetched.ndjson
   recrawl: batch 000042-20261123T100000Z already applied (last 000042-20261123T100000Z); nothing to do`,
		Flags: append(clikit.InputFlags(), stateFlag(), nowFlag(),
			&cli.StringFlag{Name: "fetch-time", Value: "record", Usage: "when a page was fetched: `record` (its fetched_at) or batch (the batch's time, --now or the ID's: time in turns, so a turn's choices do not depend on how long its fetch took)"},
			&cli.StringFlag{Name: "batch", Usage: "the batch `ID` (the loop's turn name; IDs sort in time order)"},
			&cli.StringFlag{Name: "weights", Usage: "`FILE` of importance records {\"url\",\"importance\"} changed this batch"},
			&cli.StringFlag{Name: "weight-field", Value: "importance", Usage: "the weights file's `FIELD`"},
			&cli.Float64Flag{Name: "default-weight", Usage: "weight of a page without importance (0: the mean importance in the state)"},
			&cli.Float64Flag{Name: "default-change-rate", Value: 0.2, Usage: "prior change `RATE` per day (a page never or rarely fetched)"},
			&cli.Float64Flag{Name: "prior-days", Value: 7, Usage: "weight of the prior in days of observation"},
			&cli.IntFlag{Name: "min-history", Value: 5, Usage: "fetch intervals needed before the data alone decide"},
			&cli.IntFlag{Name: "simhash-threshold", Value: 3, Usage: "text_simhash Hamming distance above which a page changed"},
			&cli.StringFlag{Name: "deferred", Usage: "`FILE` of candidate records {\"url\"} not fetched this turn"},
			&cli.DurationFlag{Name: "defer-for", Value: 24 * time.Hour, Usage: "how long a deferred page is not offered"},
			&cli.DurationFlag{Name: "defer-cap", Value: 8 * 24 * time.Hour, Usage: "the longest deferral after repeated ones"},
			&cli.BoolFlag{Name: "recrawl-canonicalised", Usage: "keep offering a fetched page whose canonical is another URL of its host (default: retire it; the canonical is crawled)"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print what the batch did on stderr"},
		),
		Action: update,
	}
}

func openQueue(c *cli.Context, readOnly bool, up queue.UpdateOptions) (*queue.Queue, error) {
	path := c.String("state")
	if path == "" {
		return nil, clikit.Usagef("%s needs --state", c.Command.Name)
	}
	shard, err := record.ParseShard(c.String("shard"))
	if err != nil {
		return nil, clikit.Usagef("%v", err)
	}
	return queue.Open(path, queue.Options{Shard: shard, ReadOnly: readOnly, Update: up})
}

func update(c *cli.Context) error {
	id := c.String("batch")
	if id == "" {
		return clikit.Usagef("update needs --batch ID")
	}
	up := queue.UpdateOptions{
		Prior:            recrawl.Prior{Rate: c.Float64("default-change-rate"), Days: c.Float64("prior-days"), MinHistory: c.Int("min-history")},
		SimhashThreshold: c.Int("simhash-threshold"), DefaultWeight: c.Float64("default-weight"),
		DeferFor: c.Duration("defer-for"), DeferCap: c.Duration("defer-cap"),
		RecrawlCanonicalised: c.Bool("recrawl-canonicalised"),
	}
	if !(up.Prior.Rate > 0) || math.IsInf(up.Prior.Rate, 0) || up.Prior.Days < 0 || up.Prior.MinHistory < 1 ||
		up.SimhashThreshold < 1 || up.SimhashThreshold > 63 || up.DefaultWeight < 0 || up.DeferFor <= 0 || up.DeferCap < up.DeferFor {
		return clikit.Usagef("want --default-change-rate > 0, --prior-days >= 0, --min-history >= 1, --simhash-threshold 1..63, --default-weight >= 0, 0 < --defer-for <= --defer-cap")
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	in.Shard = record.Shard{} // links cross shards: Apply keeps this shard's hosts
	var b queue.Batch
	var latest time.Time
	field := c.String("weight-field")
	err = in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
		// A record carrying the weight field (opic update --changes - puts
		// its change records in the stream) weighs its page, as --weights
		// does: the join by URL needs no file.
		if r.Has(field) {
			v, _, err := r.Float(field)
			if err != nil {
				return r.Errorf("%v", err)
			}
			if h := record.RecordHost(r); h != "" {
				b.Weights = append(b.Weights, queue.Weight{URL: r.URL(), Host: h, Importance: v})
			}
			if !r.Has("fetched_at") && !r.Has("status") && !r.Has("error") {
				return nil
			}
		}
		if !r.Has("fetched_at") && !r.Has("status") && !r.Has("error") {
			// A URL to know, not a fetch: a seed, a sitemap entry.
			d := queue.Discovery{URL: strings.TrimSpace(r.URL()), Host: record.RecordHost(r)}
			if d.Host == "" {
				return r.Errorf("no host in url %q", clip(d.URL))
			}
			if lm, ok, err := r.Time("lastmod"); err != nil {
				return r.Errorf("lastmod: %v", err)
			} else if ok {
				d.Lastmod = lm
			}
			if cf, ok := r.String("changefreq"); ok {
				if _, known := recrawl.ChangefreqRate(cf); !known {
					return r.Errorf("changefreq %q: want always, hourly, daily, weekly, monthly, yearly or never", clip(cf))
				}
				d.Changefreq = cf
			}
			b.Discovered = append(b.Discovered, d)
			return nil
		}
		f, err := queue.ParseFetch(r)
		if err != nil {
			return r.Errorf("%v", err)
		}
		if f.At.After(latest) {
			latest = f.At
		}
		b.Fetches = append(b.Fetches, f)
		return nil
	})
	if err != nil {
		return err
	}
	if name := c.String("weights"); name != "" {
		err = in.Each(c.Context, []string{name}, func(r *record.Record) error {
			v, _, err := r.Float(field)
			if err != nil {
				return r.Errorf("%v", err)
			}
			w := queue.Weight{URL: r.URL(), Host: record.RecordHost(r), Importance: v}
			if w.URL == "" || w.Host == "" {
				return r.Errorf("no url with a host")
			}
			b.Weights = append(b.Weights, w)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if name := c.String("deferred"); name != "" {
		err = in.Each(c.Context, []string{name}, func(r *record.Record) error {
			if r.URL() == "" {
				return r.Errorf(`no "url"`)
			}
			b.Deferred = append(b.Deferred, r.URL())
			return nil
		})
		if err != nil {
			return err
		}
	}
	switch now, ok := queue.BatchTime(id); {
	case c.String("now") != "":
		if b.Now, err = parseNow(c); err != nil {
			return err
		}
	case ok:
		b.Now = now
	case !latest.IsZero():
		b.Now = latest
	default:
		b.Now = time.Now().UTC()
	}
	switch c.String("fetch-time") {
	case "record":
	case "batch":
		// Time in turns, as the article's slots: every page of the batch
		// counts as fetched at the batch's time.
		for i := range b.Fetches {
			b.Fetches[i].At = b.Now
		}
	default:
		return clikit.Usagef("--fetch-time %q: want record or batch", c.String("fetch-time"))
	}
	q, err := openQueue(c, false, up)
	if err != nil {
		return err
	}
	st, err := q.Apply(id, b)
	if err == nil && st.Applied {
		cp, cerr := q.Compact()
		clikit.ReportCompaction(clikit.EnvOf(c).Stderr, "recrawl update", q.Path(), cp, cerr)
	}
	if cerr := q.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if !st.Applied {
		warnf(c, "batch %s already applied (last %s); nothing to do", id, st.Last)
		return nil
	}
	if st.Unweighted > 0 {
		warnf(c, "%d pages have no importance (%d given as 0): they use the default weight %.6g", st.Unweighted, st.ZeroWeights, st.DefaultWeight)
	}
	if c.Bool("verbose") {
		warnf(c, "batch %s: %d fetches (%d changed, %d unchanged, %d failed, %d stale), %d weights, %d deferred, %d new pages, "+
			"%d canonicalised, %d sitemap lastmods, %d changefreqs, %d pages",
			id, st.Fetches, st.Changed, st.Unchanged, st.Failures, st.Stale, st.Weights, st.Deferred, st.NewPages,
			st.Canonicalised, st.Lastmods, st.Changefreqs, st.Pages)
		observed := "none recrawled"
		if st.Observed >= 0 {
			observed = fmt.Sprintf("%.3f of recrawled weight %.6g", st.Observed, st.RecrawledWeight)
		}
		warnf(c, "batch %s: weighted freshness estimated %.3f (over weight %.6g), observed %s", id, st.Freshness, st.KnownWeight, observed)
	}
	return nil
}

func parseNow(c *cli.Context) (time.Time, error) {
	s := c.String("now")
	if s == "" {
		return time.Now().UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, clikit.Usagef("--now %q: want an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

func nextFlags() []cli.Flag {
	return []cli.Flag{stateFlag(), clikit.ShardFlag, nowFlag(),
		&cli.IntFlag{Name: "n", Usage: "take at most `N` pages (default: --rate times --slot)"},
		&cli.Float64Flag{Name: "rate", Usage: "global crawl limit k_0 in `CRAWLS` per day (lambda_0 is solved for it; default N per slot)"},
		&cli.StringFlag{Name: "slot", Value: "1h", Usage: "the turn's `LENGTH` (a duration, or seconds)"},
		&cli.Float64Flag{Name: "host-rate", Usage: "default per-host limit k_i in `CRAWLS` per day (0: none)"},
		&cli.StringFlag{Name: "host-rates", Usage: "`FILE` of per-host limits: host<TAB>crawls per day, or NDJSON {\"host\",\"host_rate\"}"},
		&cli.Float64Flag{Name: "lambda0", Usage: "use this global threshold (e.g. from recrawl lambda0) instead of solving for it"},
		&cli.StringFlag{Name: "lambda0-from", Usage: "read the global threshold from `FILE`, the output of recrawl lambda0 (the shards' reduce)"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print lambda_0, the cut and the entries read on stderr"},
	}
}

func nextOptions(c *cli.Context) (queue.NextOptions, error) {
	var opt queue.NextOptions
	var err error
	if opt.Now, err = parseNow(c); err != nil {
		return opt, err
	}
	if opt.Slot, err = parseSlot(c.String("slot")); err != nil {
		return opt, err
	}
	opt.N, opt.Rate = c.Int("n"), c.Float64("rate")
	if opt.N < 0 || opt.Rate < 0 || math.IsInf(opt.Rate, 0) || math.IsNaN(opt.Rate) || (opt.N == 0 && !(opt.Rate > 0)) {
		return opt, clikit.Usagef("%s needs --n N or --rate K0 (positive)", c.Command.Name)
	}
	if name := c.String("lambda0-from"); name != "" {
		if c.IsSet("lambda0") {
			return opt, clikit.Usagef("give --lambda0 or --lambda0-from, not both")
		}
		if opt.Lambda0, err = readLambda0(name); err != nil {
			return opt, err
		}
		opt.FixLambda0 = true
	}
	if c.IsSet("lambda0") {
		opt.Lambda0, opt.FixLambda0 = c.Float64("lambda0"), true
	}
	if opt.FixLambda0 {
		if opt.Lambda0 < 0 || math.IsInf(opt.Lambda0, 0) || math.IsNaN(opt.Lambda0) {
			return opt, clikit.Usagef("--lambda0 must be >= 0")
		}
	}
	hostRates := map[string]float64{}
	if name := c.String("host-rates"); name != "" {
		if hostRates, err = readHostRates(name); err != nil {
			return opt, err
		}
	}
	def := c.Float64("host-rate")
	if def < 0 || math.IsInf(def, 0) || math.IsNaN(def) {
		return opt, clikit.Usagef("--host-rate must be >= 0")
	}
	opt.HostRate = func(h string) float64 {
		if k, ok := hostRates[h]; ok {
			return k
		}
		return def
	}
	return opt, nil
}

func nextCommand() *cli.Command {
	return &cli.Command{
		Name:      "next",
		Usage:     "the pages to fetch now from the crawl state, new and old in one ranking",
		UsageText: "recrawl next --state S --n N [--rate K0] [--slot 1h] [--host-rate K | --host-rates FILE] [--lambda0 L] [--now T]",
		Description: `Writes the pages to fetch now, best first, as records {"url","crawl_value",
"due":true,"weight","change_rate","last_fetch","host","etag","last_modified",
"digest","fetched_at","final_url","warc_file","warc_offset"} (no last_fetch for
a page never fetched; etag and last_modified are the validators of the page's
last successful fetch, when it sent any, which fetch turns into If-None-Match
and If-Modified-Since; digest to warc_offset name the archived response of
the page's last payload, when fetch archived one, in the fields of fetch's
record, so that fetch stores the same payload as a revisit of it). New and
old pages compete by one crawl value: V(tau)
for a page fetched tau days ago, w/delta for a page never fetched (its change
rate the prior until observed). A page is a candidate when V reaches
lambda_0, solved from the state's aggregates for --rate (or N per --slot), or
given by --lambda0; each host takes its best candidates up to its limit for
the slot (a limit below one crawl a slot allows one crawl once 1/k_i has
passed since the host's last fetch), and the best N of those are written.
Ties go by url. next reads the state only: run twice, it writes the same.

Example:
   $ recrawl next --state crawl.recrawl --n 700 --rate 16800 --host-rate 240 --now 2026-11-23T10:00:00Z
   {"url":"https://a.example/","crawl_value":4.1,"due":true,"weight":0.8,"change_rate":0.19,"host":"a.example"}
   {"url":"https://b.example/news","crawl_value":2.7,"due":true,"weight":1.3,"change_rate":2.4,"last_fetch":"2026-11-22T09:00:00Z","host":"b.example","etag":"\"5f3a\""}`,
		Flags: nextFlags(),
		Action: func(c *cli.Context) error {
			opt, err := nextOptions(c)
			if err != nil {
				return err
			}
			q, err := openQueue(c, true, queue.UpdateOptions{})
			if err != nil {
				return err
			}
			defer q.Close()
			cands, info, err := q.Next(opt)
			if err != nil {
				return err
			}
			if c.Bool("verbose") {
				src := "solved from the state's aggregates"
				if !info.Estimated {
					src = "given"
				}
				warnf(c, "lambda_0 %.6g (%s); %d pages taken of at most %d (cut %.6g); %d entries read in %d cells",
					info.Lambda0, src, len(cands), info.GlobalCap, info.Cut, info.Touched, info.Cells)
			}
			out := clikit.Output(c)
			for _, cd := range cands {
				r := record.New(cd.URL)
				r.SetFloat("crawl_value", cd.Value) // exact: recrawl merge of shards compares it
				r.SetBool("due", true)
				r.SetFloat("weight", roundSig(cd.W))
				r.SetFloat("change_rate", roundSig(cd.Delta))
				if cd.LastFetch != 0 {
					r.SetTime("last_fetch", time.Unix(cd.LastFetch, 0))
				}
				r.SetString("host", cd.Host)
				// fetch's own fields: it asks conditionally with them.
				if cd.ETag != "" {
					r.SetString("etag", cd.ETag)
				}
				if cd.LastModified != "" {
					r.SetString("last_modified", cd.LastModified)
				}
				// The capture of the last payload, as fetch's record named
				// it: fetch archives the same payload as a revisit of it.
				if cp := cd.Capture; cp.File != "" {
					r.SetString("digest", cp.Digest)
					r.SetTime("fetched_at", time.Unix(cp.Date, 0))
					r.SetString("final_url", cp.URI)
					r.SetString("warc_file", cp.File)
					r.SetInt("warc_offset", cp.Offset)
				}
				if err := out.Write(r); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge shards' next outputs into the best N",
		UsageText: "recrawl merge --n N FILE...",
		Description: `Reads the records written by recrawl next for each shard and writes the best
N by crawl_value (ties by url), unchanged: with every shard run with the same
--lambda0 (from recrawl summary and recrawl lambda0) and --n N, the merge is
what one unsharded state would select.

Example:
   $ for i in 0 1 2 3; do recrawl next --state s.$i --shard $i/4 --n 700 --lambda0 0.0123 > next.$i; done
   $ recrawl merge --n 700 next.0 next.1 next.2 next.3 > candidates.ndjson`,
		Flags: append(clikit.InputFlags(), &cli.IntFlag{Name: "n", Usage: "keep the best `N` records"}),
		Action: func(c *cli.Context) error {
			n := c.Int("n")
			if n <= 0 {
				return clikit.Usagef("merge needs --n N > 0")
			}
			in, err := clikit.Input(c)
			if err != nil {
				return err
			}
			type item struct {
				v float64
				r *record.Record
			}
			var all []item
			err = in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
				v, ok, err := r.Float("crawl_value")
				if err != nil {
					return r.Errorf("%v", err)
				}
				if !ok || r.URL() == "" {
					return r.Errorf(`want "url" and a numeric "crawl_value"`)
				}
				all = append(all, item{v, r})
				return nil
			})
			if err != nil {
				return err
			}
			slices.SortFunc(all, func(a, b item) int {
				switch {
				case queue.Better(a.v, a.r.URL(), b.v, b.r.URL()):
					return -1
				case queue.Better(b.v, b.r.URL(), a.v, a.r.URL()):
					return 1
				}
				return 0
			})
			out := clikit.Output(c)
			for i := 0; i < len(all) && i < n; i++ {
				if err := out.Write(all[i].r); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// explainState explains pages of a crawl state (explain --state S URL...).
func explainState(c *cli.Context) error {
	if c.NArg() < 1 {
		return clikit.Usagef("explain needs a URL")
	}
	opt, err := nextOptions(c)
	if err != nil {
		return err
	}
	q, err := openQueue(c, true, queue.UpdateOptions{})
	if err != nil {
		return err
	}
	defer q.Close()
	xs, err := q.Explain(c.Args().Slice(), opt)
	if err != nil {
		return err
	}
	var sb strings.Builder
	for i, x := range xs {
		if i > 0 {
			sb.WriteString("\n")
		}
		p := func(k, format string, args ...any) {
			fmt.Fprintf(&sb, "%-14s"+format+"\n", append([]any{k + ":"}, args...)...)
		}
		p("url", "%s", x.URL)
		if !x.Known {
			p("decision", "%s", x.Reason)
			continue
		}
		limit := "none"
		if x.HostCap >= 0 {
			limit = fmt.Sprintf("%d this slot", x.HostCap)
		}
		p("host", "%s, limit %s", x.Host, limit)
		wsrc := "importance"
		if !x.HasWeight {
			wsrc = "the default: no importance yet"
		}
		p("weight", "%.6g (%s)", x.W, wsrc)
		dsrc := fmt.Sprintf("estimated from %d fetches, %d changes", x.Fetches, x.Changes)
		if x.Prior {
			dsrc = fmt.Sprintf("the prior (%d fetches, %d changes: too little history)", x.Fetches, x.Changes)
		}
		p("change rate", "%.6g a day (%s)", x.Delta, dsrc)
		if math.IsInf(x.Tau, 1) {
			p("tau", "infinite (never fetched)")
		} else {
			p("tau", "%.6g days (last fetch %s)", x.Tau, x.LastFetch.Format(time.RFC3339))
		}
		if x.ETag != "" || x.LastModified != "" {
			var vs []string
			if x.ETag != "" {
				vs = append(vs, "ETag "+x.ETag)
			}
			if x.LastModified != "" {
				vs = append(vs, "Last-Modified "+x.LastModified)
			}
			p("validators", "%s (next asks conditionally)", strings.Join(vs, ", "))
		}
		if c := x.Capture; c.File != "" {
			p("last capture", "%s %s %s at %s@%d (an unchanged payload is archived as a revisit of it)",
				c.Digest, c.URI, time.Unix(c.Date, 0).UTC().Format(time.RFC3339), c.File, c.Offset)
		}
		p("crawl value", "V = %.6g of at most %.6g (w/delta)", x.Value, x.MaxValue)
		p("lambda_0", "%.6g", x.Lambda0)
		p("lambda_i", "%.6g this slot", x.LambdaI)
		p("decision", "%s", x.Reason)
	}
	_, err = fmt.Fprint(clikit.EnvOf(c).Stdout, sb.String())
	return err
}

// summaryState is summary --state: the state's aggregates, for lambda0.
func summaryState(c *cli.Context) error {
	rate := c.Float64("rate")
	q, err := openQueue(c, true, queue.UpdateOptions{})
	if err != nil {
		return err
	}
	defer q.Close()
	shard, _ := record.ParseShard(c.String("shard"))
	share := rate
	if shard.N > 1 {
		share /= float64(shard.N)
	}
	center, err := q.Lambda0(queue.NextOptions{Rate: share})
	if err != nil {
		return err
	}
	s, err := q.Summary(center)
	if err != nil {
		return err
	}
	if len(s.Points) == 0 {
		return errors.New("no summary")
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return clikit.Output(c).WriteLine(b)
}

// readLambda0 reads the {"lambda0": X} record recrawl lambda0 writes.
func readLambda0(name string) (float64, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	var v struct {
		Lambda0 *float64 `json:"lambda0"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &v); err != nil || v.Lambda0 == nil {
		return 0, fmt.Errorf("%s: no lambda0 number in %q (want the output of recrawl lambda0)", name, clip(string(data)))
	}
	return *v.Lambda0, nil
}

func newSitesCommand() *cli.Command {
	return &cli.Command{
		Name:      "new-sites",
		Usage:     "the sites of a batch of fetch records that the crawl state has never fetched from",
		UsageText: "recrawl new-sites --state S [--shard I/N] [FETCH_RECORDS...]",
		Description: `Reads fetch records and writes one URL record {"url":"SCHEME://HOST/"} for
each host that answered one of them (a record with a status) and that the
state has not fetched from before (in the order first seen; the scheme of
the host's first such record). Run
before the batch's recrawl update, it names the sites on their first visit:
the loop reads their robots.txt sitemaps with fetch sitemaps, and the
sitemap URLs enter the queue through recrawl update as pages to know. With
--shard only this shard's hosts are considered. A host that gave no answer
(a network error, a hang) is not named, so that a dead host costs the loop
no second timeout; its first answer in a later batch does not count as a
first visit either, since the state records every attempt.

Example:
   $ recrawl new-sites --state crawl.recrawl fetched.ndjson
   {"url":"https://news.example/"}
   $ recrawl new-sites --state crawl.recrawl fetched.ndjson | fetch sitemaps > sitemap.ndjson`,
		Flags:  append(clikit.InputFlags(), stateFlag()),
		Action: newSites,
	}
}

func newSites(c *cli.Context) error {
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	var hosts []string
	site := map[string]string{}
	err = in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
		if !r.Has("status") {
			return nil // not a fetch, or one that got no answer
		}
		h := record.RecordHost(r)
		if h == "" {
			return r.Errorf("no host in url %q", clip(r.URL()))
		}
		if _, ok := site[h]; ok {
			return nil
		}
		scheme := "http"
		if strings.HasPrefix(strings.ToLower(r.URL()), "https:") {
			scheme = "https"
		}
		site[h] = scheme + "://" + h + "/"
		hosts = append(hosts, h)
		return nil
	})
	if err != nil {
		return err
	}
	q, err := openQueue(c, true, queue.UpdateOptions{})
	if err != nil {
		return err
	}
	fresh, err := q.NewHosts(hosts)
	if cerr := q.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	out := clikit.Output(c)
	for _, h := range fresh {
		if err := out.Write(record.New(site[h])); err != nil {
			return err
		}
	}
	return out.Flush()
}
