package sekiteicli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/sekitei"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

func updateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "apply a batch of fetch records to a crawl's segment state",
		UsageText: "sekitei update --state FILE --batch ID [--good FILE] [--quota-rule RULE] [--site-quota Q] [--min-quota M] [--regrow R]\n     [--shard I/N] [FETCH_RECORDS...]",
		Description: `Keeps, for a crawl that lives for months, each host's known URLs (every
fetched URL and its "links"), its segments with their quotas, and how many
fetch records of each segment there were and how many robots.txt refused
(an "error" starting with "robots:"). Only the batch is read: a host is
re-clustered when it has no segments yet or its known URLs have grown by
--regrow (a quarter) since its last clustering, and then only that host's
URLs are read from the state; otherwise the batch's URLs are matched to the
segments the host has. URLs of --good (a URL a line; the URLs users visit)
are marked good, now or when they become known; an unchanged file is not
read again.

--quota-rule chooses how the quotas are set (a good URL counts as one
visit; F(v) = 1 + log2(1 + v)):
  share     (default) --site-quota shared between the host's segments,
            --min-quota each, the rest by good URLs (see 'sekitei quota');
            --site-quota 0 gives segments no quota
  equal     every host MIN_QUOTA, all its segments drawing on it
  greedy    every host F(#Visits)*MIN_QUOTA, the lecture's baseline
  visits    every segment F(#Visits)*MIN_QUOTA
  segments  every segment #PagesWithQLinks*MIN_QUOTA, at least MIN_QUOTA
  none      no quota
The lecture's rules (all but share) use --min-quota, not --site-quota. The
state records its rule: an update under another rule sets every host's
quotas anew and says so; 'sekitei admit --quota-rule' refuses a state of
another rule.

The state is one bbolt file, created on the first update; the update and
--batch ID are one transaction, so a batch is applied exactly once: the same
ID again is a no-op (a note on stderr, exit 0) and an ID that sorts before
the last one applied is refused. A state of another version or shard, or a
corrupt one, is refused with its path (exit 1) and left as it is.

Example:
   $ sekitei update --state state/sekitei.state --batch 000042-20261123T100000Z \
       --good good.txt --site-quota 500 --min-quota 20 batches/000042-20261123T100000Z/fetched.ndjson
   sekitei update: batch 000042-20261123T100000Z: 712 records, 9530 new URLs of 180 hosts, 14 re-clustered
   $ sekitei update --state state/sekitei.state --batch 000042-20261123T100000Z fetched.ndjson
   sekitei update: batch 000042-20261123T100000Z already applied to state/sekitei.state; nothing done`,
		Flags: append(clikit.InputFlags(),
			stateFlag(false),
			&cli.StringFlag{Name: "batch", Required: true, Usage: "`ID` of the batch (the loop's turn name); applied once"},
			&cli.StringFlag{Name: "good", Usage: "`FILE` of good URLs (visited by users, the lecture's QLinks), a URL a line"},
			&cli.StringFlag{Name: "quota-rule", Value: sekitei.QuotaShare, Usage: "quota `RULE`: " + strings.Join(sekitei.QuotaRuleNames, ", ")},
			&cli.IntFlag{Name: "site-quota", Value: 10000, Usage: "quota `Q` of a host, shared between its segments (0: no quotas)"},
			&cli.IntFlag{Name: "min-quota", Value: 100, Usage: "minimum quota `M` of a segment"},
			&cli.BoolFlag{Name: "check", Usage: "check the flags and exit: open no state, read no records"},
			&cli.Float64Flag{Name: "regrow", Value: 0.25, Usage: "re-cluster a host when its known URLs have grown by this `SHARE`"},
		),
		Action: update,
	}
}

func stateFlag(many bool) cli.Flag {
	if many {
		return &cli.StringSliceFlag{Name: "state", Required: true,
			Usage: "state `FILE` written by 'sekitei update'; once per shard when sharded"}
	}
	return &cli.StringFlag{Name: "state", Required: true, Usage: "state `FILE` (bbolt; created when missing)"}
}

func update(c *cli.Context) error {
	opt := sekitei.StateOptions{SiteQuota: c.Int("site-quota"), MinQuota: c.Int("min-quota"), Regrow: c.Float64("regrow"), QuotaRule: c.String("quota-rule")}
	switch {
	case opt.SiteQuota < 0 || opt.MinQuota < 0:
		return clikit.Usagef("quotas must not be negative")
	case sekitei.CheckQuotaRule(opt.QuotaRule, opt.MinQuota) != nil:
		return clikit.Usagef("--quota-rule: %v", sekitei.CheckQuotaRule(opt.QuotaRule, opt.MinQuota))
	case opt.Regrow <= 0:
		return clikit.Usagef("--regrow %v: want a share above 0", opt.Regrow)
	case c.String("batch") == "":
		return clikit.Usagef("--batch: want a non-empty ID")
	case c.Bool("check"):
		return nil
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	opt.Shard = in.Shard
	var good *sekitei.GoodURLs
	if name := c.String("good"); name != "" {
		if good, err = readGood(name); err != nil {
			return err
		}
	}
	var recs []*record.Record
	err = in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
		if _, err := urlx.Split(r.URL()); err != nil {
			return r.Errorf("%v: %q", err, clip(r.URL()))
		}
		var links []string
		if _, err := r.Decode("links", &links); err != nil {
			return r.Errorf("%v", err)
		}
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return err
	}
	st, err := sekitei.OpenState(c.String("state"), opt)
	if err != nil {
		return err
	}
	batch := c.String("batch")
	stats, err := st.Apply(batch, recs, good)
	if err == nil && !stats.Skipped {
		cp, cerr := st.Compact()
		clikit.ReportCompaction(clikit.EnvOf(c).Stderr, "sekitei update", st.Path(), cp, cerr)
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	stderr := clikit.EnvOf(c).Stderr
	if stats.Skipped {
		fmt.Fprintf(stderr, "sekitei update: batch %s already applied to %s; nothing done\n", batch, st.Path())
		return nil
	}
	if stats.RuleChangedFrom != "" {
		fmt.Fprintf(stderr, "sekitei update: %s: quotas were set by rule %s; every host's quotas set anew by rule %s\n", st.Path(), stats.RuleChangedFrom, opt.QuotaRule)
	}
	fmt.Fprintf(stderr, "sekitei update: batch %s: %d records, %d new URLs of %d hosts, %d re-clustered", batch,
		stats.Records, stats.NewURLs, stats.Hosts, stats.Reclustered)
	if stats.GoodMarked > 0 {
		fmt.Fprintf(stderr, ", %d marked good", stats.GoodMarked)
	}
	if stats.BadURLs > 0 {
		fmt.Fprintf(stderr, ", %d links that are not absolute http(s) URLs skipped", stats.BadURLs)
	}
	fmt.Fprintln(stderr)
	return nil
}

// readGood reads a file of good URLs, a URL (or a record with "url") a
// line; its digest lets the state skip a list it has already marked.
func readGood(name string) (*sekitei.GoodURLs, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	lr := record.NewLineReader(io.TeeReader(f, h))
	good := &sekitei.GoodURLs{}
	for {
		line, _, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r, err := record.Parse(line)
		if err != nil || r.URL() == "" {
			continue // blank or bad lines mark nothing
		}
		good.URLs = append(good.URLs, r.URL())
	}
	good.Digest = hex.EncodeToString(h.Sum(nil))
	return good, nil
}

func admitCommand() *cli.Command {
	return &cli.Command{
		Name:      "admit",
		Usage:     "pass the candidates of a crawl turn that are within their segments' quotas",
		UsageText: "sekitei admit --state FILE [--state FILE...] [--quota-rule RULE] [--robots-block N] [--rejected FILE] [CANDIDATES...]",
		Description: `Decides, against the state 'sekitei update' keeps, which candidate URLs of
a turn to fetch, and writes them in input order, each with "host" (where it
has none) and "segment" (the id in its host's segments; absent for a host
without segments). A segment takes candidates while its fetch records plus
the candidates it took in this run stay under its quota (under the rules
equal and greedy, the host's fetch records and candidates under the host's
quota). The rule is the state's ('sekitei update --quota-rule'); with
--quota-rule a state of another rule is refused (exit 1). A segment tried
--robots-block times or more and refused by robots.txt every time gets none:
they would only take the places of pages that can be fetched. A candidate
of a host without segments passes, and so does every candidate when the
state does not exist yet. Nothing is written to the state; the next update
counts what was actually fetched.

Give one state, or one per shard (--state s.0 --state s.1 ...): a candidate
is decided by the state of its host's shard. --rejected writes the
candidates not admitted, with "rejected": "quota" or "robots". A one-line
summary goes to stderr.

Example:
   $ sekitei admit --state state/sekitei.state --robots-block 5 --rejected deferred.ndjson candidates.ndjson > todo.ndjson
   sekitei admit: 1130 of 1512 candidates within quota, 41 in segments robots.txt refused
   $ head -1 todo.ndjson
   {"url":"http://lenta.ru/news/2013/09/30/mid/","host":"lenta.ru","segment":19}`,
		Flags: append(clikit.InputFlags(),
			stateFlag(true),
			&cli.StringFlag{Name: "quota-rule", Usage: "refuse a state whose quotas another `RULE` set (default: any)"},
			&cli.IntFlag{Name: "robots-block", Value: 5, Usage: "drop the candidates of a segment tried `N` times or more, all refused by robots.txt (0: never)"},
			&cli.StringFlag{Name: "rejected", Usage: "write the candidates not admitted to `FILE`"},
		),
		Action: admit,
	}
}

func admit(c *cli.Context) (err error) {
	if c.Int("robots-block") < 0 {
		return clikit.Usagef("--robots-block %d: want 0 or more", c.Int("robots-block"))
	}
	rule := c.String("quota-rule")
	if rule != "" && !slices.Contains(sekitei.QuotaRuleNames, rule) {
		return clikit.Usagef("--quota-rule %q: want one of %s", rule, strings.Join(sekitei.QuotaRuleNames, ", "))
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	stderr := clikit.EnvOf(c).Stderr
	var states []*sekitei.State
	defer func() {
		for _, st := range states {
			st.Close()
		}
	}()
	for _, path := range c.StringSlice("state") {
		st, err := sekitei.OpenState(path, sekitei.StateOptions{ReadOnly: true, QuotaRule: rule})
		if errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(stderr, "sekitei admit: %s: no state yet; its shard's candidates pass\n", path)
			continue
		}
		if err != nil {
			return err
		}
		states = append(states, st)
	}
	adm, err := sekitei.NewAdmitter(states, c.Int("robots-block"))
	if err != nil {
		return err
	}
	defer adm.Close()
	var rejected *record.Writer
	if name := c.String("rejected"); name != "" {
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		defer func() {
			if ferr := rejected.Flush(); err == nil {
				err = ferr
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		rejected = record.NewWriter(f)
	}
	out := clikit.Output(c)
	var seen, passed, blocked int
	err = in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
		ad, err := adm.Admit(r)
		if err != nil {
			return err
		}
		seen++
		if !r.Has("host") {
			r.SetString("host", ad.Host)
		}
		if ad.Segment >= 0 {
			r.SetInt("segment", int64(ad.Segment))
		}
		switch ad.Verdict {
		case sekitei.Admitted:
			passed++
			return out.Write(r)
		case sekitei.RobotsBlocked:
			blocked++
		}
		if rejected != nil {
			r.SetString("rejected", ad.Verdict.String())
			return rejected.Write(r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "sekitei admit: %d of %d candidates within quota, %d in segments robots.txt refused\n", passed, seen, blocked)
	return nil
}

func stateCommand() *cli.Command {
	return &cli.Command{
		Name:      "state",
		Usage:     "show the segments of hosts in a crawl state",
		UsageText: "sekitei state --state FILE [HOST...]",
		Description: `Writes, for each HOST (every host of the state when none is given: a read
of all hosts, meant for inspection, not for a turn of the loop), one record
per segment: "host", "segment", "regex", "urls" and "good" (known URLs in it,
and good ones), "quota", "fetched" (fetch records) and "refused" (of them,
refused by robots.txt), and "known" (the host's known URLs).

Example:
   $ sekitei state --state state/sekitei.state lenta.ru | head -1
   {"host":"lenta.ru","segment":0,"regex":"^/news/[0-9]+/[0-9]+/[0-9]+/[^/?]+/$","urls":5210,"good":311,"quota":420,"fetched":388,"refused":0,"known":9112}`,
		Flags: []cli.Flag{stateFlag(false)},
		Action: func(c *cli.Context) error {
			st, err := sekitei.OpenState(c.String("state"), sekitei.StateOptions{ReadOnly: true})
			if err != nil {
				return err
			}
			defer st.Close()
			hosts := c.Args().Slice()
			if len(hosts) == 0 {
				if hosts, err = st.Hosts(); err != nil {
					return err
				}
			}
			out := clikit.Output(c)
			for _, h := range hosts {
				segs, known, err := st.HostSegments(h)
				if err != nil {
					return err
				}
				for i, sg := range segs {
					r := record.New("")
					r.Delete("url")
					r.SetString("host", h)
					r.SetInt("segment", int64(i))
					r.SetString("regex", sg.Regex)
					for _, f := range []struct {
						k string
						v int
					}{{"urls", sg.URLs}, {"good", sg.Good}, {"quota", sg.Quota}, {"fetched", sg.Fetched}, {"refused", sg.Refused}, {"known", known}} {
						r.SetInt(f.k, int64(f.v))
					}
					if err := out.Write(r); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
}
