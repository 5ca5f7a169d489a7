// Package sekiteicli is the command line of sekitei: a site's URLs cut into
// PCRE segments (the lecture's "rock garden"), segment purity and quotas,
// and the online fetch filter of the homework's second part.
package sekiteicli

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/sekitei"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// Main runs sekitei with args (args[0] is the program name) and returns the
// exit status.
func Main(args []string, env clikit.Env) int {
	return clikit.Run(App(), args, env)
}

// App returns the sekitei application.
func App() *cli.App {
	app := clikit.New("sekitei", "cut a site's URLs into PCRE segments; decide online which URLs to fetch under a quota",
		"sekitei [segments flags] [FILE...]     (the segments command, the default)\n"+
			"sekitei COMMAND [flags] [FILE...]")
	app.Description = `The "rock garden" of the Technosphere crawling course: URLs alike in form
have alike content, so each site is cut into segments, each described by an
anchored PCRE over path and query, and crawl effort follows the segments users
visit (URLs with "good": true, the lecture's QLinks).

With no command, sekitei runs 'segments' on its input: 'cat urls | urlfeat |
sekitei' prints each host's segments, taking the features urlfeat computed.

Example:
   $ cat urls.txt | urlfeat | sekitei --tsv | head -3
   $ sekitei segments --good urls.lenta.examined --general urls.lenta.general --tsv | head -3
   lenta.ru	0	^/news/[0-9]+/[0-9]+/[0-9]+/[^/?]+/_Printed\.htm$	1203	0	0	100
   ...
   $ sekitei train --good good.txt --general general.txt --quota 10000 > model.json
   $ cat new-urls.txt | sekitei filter --model model.json > to-fetch.txt`
	app.Commands = []*cli.Command{
		segmentsCommand(), assignCommand(), explainCommand(), purityCommand(), quotaCommand(),
		trainCommand(), filterCommand(), checkCommand(), updateCommand(), admitCommand(), stateCommand(),
		orderCommand(), evaluateCommand(),
	}
	app.Flags = segmentsFlags()
	app.Action = segments
	return app
}

// segmentFlags are the flags that tune segment building.
func segmentFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "good", Aliases: []string{"examined"}, Usage: "`FILE` of good (visited) URLs; with --general, instead of labelled records"},
		&cli.StringFlag{Name: "general", Usage: "`FILE` of general URLs (with --good)"},
		&cli.Float64Flag{Name: "alpha", Value: 0.1, Usage: "keep features seen in at least `A`*N of the N sampled URLs"},
		&cli.Float64Flag{Name: "max-distance", Value: 0.3, Usage: "largest Jaccard distance `D` at which a URL joins a cluster"},
		&cli.Float64Flag{Name: "min-share", Value: 0.01, Usage: "smallest cluster, as a `SHARE` of the sample, that gets a segment"},
		&cli.IntFlag{Name: "sample", Value: 2000, Usage: "build the clusters from at most `N` URLs per host (all URLs are assigned)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random `SEED` of the sample"},
		&cli.IntFlag{Name: "site-quota", Value: 10000, Usage: "quota `Q` of a site, shared between its segments"},
		&cli.IntFlag{Name: "min-quota", Value: 100, Usage: "minimum quota `M` of a segment"},
	}
}

func segmentsFlags() []cli.Flag {
	return append(append(clikit.InputFlags(), segmentFlags()...), clikit.TSVFlag, clikit.HeaderFlag)
}

func buildOptions(c *cli.Context) (sekitei.Options, error) {
	o := sekitei.Options{
		Alpha: c.Float64("alpha"), MaxDistance: c.Float64("max-distance"), MinShare: c.Float64("min-share"),
		Sample: c.Int("sample"), Seed: c.Uint64("seed"), SiteQuota: c.Int("site-quota"), MinQuota: c.Int("min-quota"),
	}
	switch {
	case o.Alpha <= 0 || o.Alpha > 1:
		return o, clikit.Usagef("--alpha %v: want a fraction in (0, 1]", o.Alpha)
	case o.MaxDistance <= 0 || o.MaxDistance > 1:
		return o, clikit.Usagef("--max-distance %v: want a Jaccard distance in (0, 1]", o.MaxDistance)
	case o.MinShare <= 0 || o.MinShare > 1:
		return o, clikit.Usagef("--min-share %v: want a fraction in (0, 1]", o.MinShare)
	case o.Sample < 1:
		return o, clikit.Usagef("--sample %d: want at least 1", o.Sample)
	case o.SiteQuota < 0 || o.MinQuota < 0:
		return o, clikit.Usagef("quotas must not be negative")
	}
	return o, nil
}

// hostURLs are the distinct URLs of one host with their labels.
type hostURLs struct {
	urls  []sekitei.Example
	index map[string]int
}

// readLabelled reads labelled URLs grouped by host: from --good/--general
// files, or from records whose "good" field is true for visited URLs. A URL
// seen twice counts once (good if any copy is good).
func readLabelled(c *cli.Context) (map[string]*hostURLs, error) {
	in, err := clikit.Input(c)
	if err != nil {
		return nil, err
	}
	byHost := map[string]*hostURLs{}
	add := func(r *record.Record, good bool) error {
		u := r.URL()
		h, err := urlx.Host(u)
		if err != nil {
			return r.Errorf("%s: %q", err, clip(u))
		}
		if g, ok, err := r.Bool("good"); err != nil {
			return r.Errorf("%v", err)
		} else if ok && g {
			good = true
		}
		feats, err := recordFeatures(r)
		if err != nil {
			return err
		}
		hu := byHost[h]
		if hu == nil {
			hu = &hostURLs{index: map[string]int{}}
			byHost[h] = hu
		}
		if i, dup := hu.index[u]; dup {
			hu.urls[i].Good = hu.urls[i].Good || good
			return nil
		}
		hu.index[u] = len(hu.urls)
		hu.urls = append(hu.urls, sekitei.Example{URL: u, Good: good, Features: feats})
		return nil
	}
	goodFile, generalFile := c.String("good"), c.String("general")
	if (goodFile == "") != (generalFile == "") {
		return nil, clikit.Usagef("--good and --general go together")
	}
	if goodFile != "" {
		if c.Args().Len() > 0 {
			return nil, clikit.Usagef("give either --good and --general or input files, not both")
		}
		for _, f := range []struct {
			name string
			good bool
		}{{goodFile, true}, {generalFile, false}} {
			if err := in.Each(c.Context, []string{f.name}, func(r *record.Record) error { return add(r, f.good) }); err != nil {
				return nil, err
			}
		}
	} else {
		files := c.Args().Slice()
		bar := clikit.Progress(c, clikit.InputSize(files), "sekitei", true)
		clikit.TrackInput(in, bar)
		err := in.Each(c.Context, files, func(r *record.Record) error { return add(r, false) })
		bar.Finish()
		if err != nil {
			return nil, err
		}
	}
	for _, hu := range byHost {
		hu.index = nil // free before building
	}
	return byHost, nil
}

// recordFeatures returns the record's "features" (urlfeat's), nil when it
// has none, and an error for the line when the field is not a list of
// strings: a record is never clustered on features it does not have.
func recordFeatures(r *record.Record) ([]string, error) {
	if r.IsNull("features") {
		return nil, nil
	}
	var fs []string
	if _, err := r.Decode("features", &fs); err != nil {
		raw, _ := r.Raw("features")
		if len(raw) > 60 {
			raw = append(raw[:60:60], "..."...)
		}
		return nil, r.Errorf(`"features" is not a list of strings (as urlfeat writes): %s`, raw)
	}
	if fs == nil {
		fs = []string{}
	}
	return fs, nil
}

func sortedHosts[T any](m map[string]T) []string {
	hosts := make([]string, 0, len(m))
	for h := range m {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	return hosts
}

func clip(u string) string {
	if len(u) > 100 {
		return u[:100] + "..."
	}
	return u
}

func segmentsCommand() *cli.Command {
	return &cli.Command{
		Name:  "segments",
		Usage: "cut each host's URLs into PCRE segments",
		UsageText: "sekitei segments [--good FILE --general FILE] [--alpha 0.1] [--max-distance 0.3]\n" +
			"     [--min-share 0.01] [--sample 2000] [--site-quota 10000] [--min-quota 100] [--tsv [--header]] [FILE...]",
		Description: `Reads URL records of one or many hosts ("good": true marks URLs users
visited), or a file of good and a file of general URLs, and writes each host's
segments in the order they are tried: a URL belongs to the first segment whose
regex matches its path and query; the last segment, ".*", is the rest.

Per host: the sekitei features of a sample (urlfeat), the features seen in at
least alpha*N URLs, clusters by Jaccard distance on those, and per cluster an
anchored PCRE built from what its members share. Every URL is then assigned
exactly; "urls" and "good" count them, "quota" shares --site-quota by the
lecture's rule (a minimum per segment, the rest in proportion to good URLs).

Example:
   $ sekitei segments --good $D/urls.lenta.examined --general $D/urls.lenta.general --tsv --header | head -3
   host	segment	regex	urls	good	good_share	quota
   lenta.ru	0	^/news/[0-9]+/[0-9]+/[0-9]+/[^/?]+/_Printed\.htm$	1203	0	0	100
   lenta.ru	1	^/[^/?]+/[0-9]+/[0-9]+/[0-9]+/[^/?]+/_Printed\.htm$	845	9	0.0107	136`,
		Flags:  segmentsFlags(),
		Action: segments,
	}
}

// segments is 'sekitei segments' and the default command, so that the
// design card's `cat urls | urlfeat | sekitei` prints each host's segments.
func segments(c *cli.Context) error {
	if err := clikit.NoInput(c); err != nil {
		return err
	}
	opt, err := buildOptions(c)
	if err != nil {
		return err
	}
	byHost, err := readLabelled(c)
	if err != nil {
		return err
	}
	out := clikit.Output(c)
	tsv := c.Bool("tsv")
	if tsv && c.Bool("header") {
		out.WriteLine([]byte(sekitei.TSVHeader))
	}
	for _, h := range sortedHosts(byHost) {
		site, err := sekitei.Build(h, byHost[h].urls, opt)
		if err != nil {
			fmt.Fprintf(clikit.EnvOf(c).Stderr, "sekitei: %s: %v\n", h, err)
			continue
		}
		if err := writeSegments(out, site, tsv); err != nil {
			return err
		}
	}
	return nil
}

func writeSegments(out *record.Writer, site *sekitei.Site, tsv bool) error {
	for i := range site.Segments {
		seg := &site.Segments[i]
		err := out.AppendLine(func(b []byte) []byte {
			if tsv {
				return seg.AppendTSV(b)
			}
			return seg.AppendJSON(b)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// loadSegments reads the --segments file.
func loadSegments(c *cli.Context) (map[string]*sekitei.Site, error) {
	name := c.String("segments")
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sites, err := sekitei.ReadSegments(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return sites, nil
}

var segmentsFileFlag = &cli.StringFlag{Name: "segments", Required: true,
	Usage: "`FILE` of segments written by 'sekitei segments' (NDJSON or TSV)"}

func assignCommand() *cli.Command {
	return &cli.Command{
		Name:      "assign",
		Usage:     "tag each URL record with its segment and regex",
		UsageText: "sekitei assign --segments FILE [FILE...]",
		Description: `Adds "segment" (the id) and "regex" to every record, from the first segment
of its host whose regex matches, and "host" (the normalised host the segments
are of) where the record has none, so that the segment's key, host and id,
is in the record. Records of a host the file has no segments for pass through
untouched (with one warning per host).

Example:
   $ sekitei segments --good good.txt --general general.txt > segs.ndjson
   $ echo http://lenta.ru/news/2013/09/30/mid/ | sekitei assign --segments segs.ndjson
   {"url":"http://lenta.ru/news/2013/09/30/mid/","segment":5,"regex":"^/news/2013/[0-9]+/[0-9]+/[^/?]+/$","host":"lenta.ru"}`,
		Flags: append(clikit.InputFlags(), segmentsFileFlag),
		Action: func(c *cli.Context) error {
			sites, err := loadSegments(c)
			if err != nil {
				return err
			}
			in, err := clikit.Input(c)
			if err != nil {
				return err
			}
			files := c.Args().Slice()
			bar := clikit.Progress(c, clikit.InputSize(files), "sekitei assign", true)
			defer bar.Finish()
			clikit.TrackInput(in, bar)
			out := clikit.Output(c)
			warned := map[string]bool{}
			return in.Each(c.Context, files, func(r *record.Record) error {
				u := r.URL()
				seg, err := sekitei.SegmentOf(sites, u)
				if err != nil {
					return r.Errorf("%s: %q", err, clip(u))
				}
				if seg == nil {
					if h, _ := urlx.Host(u); !warned[h] {
						warned[h] = true
						fmt.Fprintf(clikit.EnvOf(c).Stderr, "sekitei: line %d: no segments for host %q; its records pass untagged\n", r.Line, h)
					}
					return out.Write(r)
				}
				r.SetInt("segment", int64(seg.ID))
				r.SetString("regex", seg.Regex)
				if !r.Has("host") {
					h, _ := urlx.Host(u)
					r.SetString("host", h)
				}
				return out.Write(r)
			})
		},
	}
}

func explainCommand() *cli.Command {
	return &cli.Command{
		Name:  "explain",
		Usage: "show which segment a URL falls into, and why",
		UsageText: "sekitei explain --segments FILE [--model FILE] [--links FILE --good FILE [--coef 0.5]] URL...\n" +
			"   sekitei explain --segments FILE [--model FILE] [--links FILE --good FILE [--coef 0.5]] [FILE...]   (records, or stdin)",
		Description: `For each URL prints one JSON object: its segment and regex, the segment's
good share, its sekitei features, and which of the features shared by the
segment's cluster it has ("matched_features") or lacks ("missing_features").
"qlink" gives the QLink rate the segments extrapolate to the URL, per site
and per segment (see 'sekitei order --order qlink-segment'), and which
extrapolation gave the higher. Given the link graph (--links, fetch records
with "links", as 'sekitei order' reads them) and the visit log (--good), it
adds the third extrapolation, along links: "links", the score 'sekitei order
--order qlink-links --coef C' gives the URL on those records (ql(B) = C *
ql(A), the best over B's parents), and "from", the parent A whose link gave
it; "why" then names the highest of the three, the one that gives the URL
its score. A bad line of the link file is reported and skipped (with
--strict, it stops the run). With --model, also the model's score and the
weights behind it. Without URL arguments it reads records (from the files
named, or stdin) and adds the explanation to each, using the record's
"features" (urlfeat's) when it has them: 'urlfeat | sekitei explain'.

Example:
   $ sekitei explain --segments segs.ndjson http://lenta.ru/news/2013/09/30/mid/
   {"url":"http://lenta.ru/news/2013/09/30/mid/","host":"lenta.ru","segment":5,
    "regex":"^/news/2013/[0-9]+/[0-9]+/[^/?]+/$","good_share":0.5509,
    "matched_features":["segment_[0-9]_2:1",...,"segment_name_1:2013"],"missing_features":[],...}
   $ sekitei explain --segments segs.ndjson --links links.ndjson --good good.txt http://shop.test/item/8.html
   {"url":"http://shop.test/item/8.html",...,"qlink":{"site":0.1442,"segment":0.0047,"links":0.25,
    "from":"http://shop.test/item/7.html","why":"...; the along-links score is higher"},...}`,
		Flags: append(clikit.InputFlags(), segmentsFileFlag,
			&cli.StringFlag{Name: "model", Usage: "also explain the fetch model of `FILE`"},
			&cli.StringFlag{Name: "links", Usage: "link graph: `FILE` of fetch records with \"links\" (the along-links extrapolation)"},
			&cli.StringFlag{Name: "good", Usage: "with --links, the visit log `FILE`: a QLink URL a line, optionally TAB and its visits"},
			&cli.Float64Flag{Name: "coef", Value: 0.5, Usage: "with --links, ql(B) = `C` * ql(A)"}),
		Action: explain,
	}
}

func explain(c *cli.Context) error {
	if err := clikit.NoInput(c); err != nil {
		return err
	}
	sites, err := loadSegments(c)
	if err != nil {
		return err
	}
	var model *sekitei.Model
	if name := c.String("model"); name != "" {
		if model, err = loadModel(name); err != nil {
			return err
		}
	}
	along, err := alongLinks(c)
	if err != nil {
		return err
	}
	out := clikit.Output(c)
	ev := explainer{along: along}
	if urls := c.Args().Slice(); len(urls) > 0 && isURLArgs(urls) {
		bad := 0
		for _, u := range urls {
			r := record.New(u)
			if err := explainOne(&ev, sites, model, r); err != nil {
				fmt.Fprintf(clikit.EnvOf(c).Stderr, "sekitei: %q: %v\n", clip(u), err)
				bad++
				continue
			}
			if err := out.Write(r); err != nil {
				return err
			}
		}
		if bad > 0 {
			return cli.Exit("", clikit.ExitFailure)
		}
		return nil
	}
	// Records from files or stdin (`urlfeat | sekitei explain`): each goes
	// out with the explanation added and its other fields kept.
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	return in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
		if err := explainOne(&ev, sites, model, r); err != nil {
			var de *record.DataError
			if errors.As(err, &de) {
				return err
			}
			return r.Errorf("%v: %q", err, clip(r.URL()))
		}
		return out.Write(r)
	})
}

// isURLArgs tells URLs given as arguments from files of records: an
// argument that is neither "-" nor an existing file is a URL.
func isURLArgs(args []string) bool {
	for _, a := range args {
		if _, err := os.Stat(a); a != "-" && err != nil {
			return true
		}
	}
	return false
}

// explainOne adds the explanation of r's URL to r. The URL's sekitei
// features are the record's own "features" when it carries them (urlfeat's
// output), so that the explanation is of the features the segments were
// built from.
func explainOne(ev *explainer, sites map[string]*sekitei.Site, model *sekitei.Model, r *record.Record) error {
	u := r.URL()
	seg, err := sekitei.SegmentOf(sites, u)
	if err != nil {
		return err
	}
	given, err := recordFeatures(r)
	if err != nil {
		return err
	}
	feats, host, _ := ev.Extract(u)
	var sf []string // urlfeat's features
	if given != nil {
		sf = given
	} else {
		for _, f := range feats {
			if !isEvidenceOnly(f) {
				sf = append(sf, f)
			}
		}
	}
	if !r.Has("host") {
		r.SetString("host", host)
	}
	if seg == nil {
		r.SetRaw("segment", []byte("null"))
		r.SetString("why", "no segments for this host")
		if _, ok := ev.along[u]; ok {
			r.SetRaw("qlink", qlinkExplain(nil, nil, ev.along, u))
		}
	} else {
		r.SetInt("segment", int64(seg.ID))
		r.SetString("regex", seg.Regex)
		r.SetFloat("good_share", seg.GoodShare)
		have := map[string]bool{}
		for _, f := range sf {
			have[f] = true
		}
		matched, missing := []string{}, []string{}
		for _, f := range seg.Features {
			if have[f] {
				matched = append(matched, f)
			} else {
				missing = append(missing, f)
			}
		}
		r.SetStrings("matched_features", matched)
		r.SetStrings("missing_features", missing)
		r.SetRaw("qlink", qlinkExplain(sites[host], seg, ev.along, u))
	}
	if given == nil {
		r.SetStrings("features", sf)
	}
	if model != nil {
		r.SetFloat("score", roundTo(model.Score(feats), 4))
		contrib := model.Contributions(feats)
		keys := make([]string, 0, len(contrib))
		for k := range contrib {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(a, b int) bool {
			if abs(contrib[keys[a]]) != abs(contrib[keys[b]]) {
				return abs(contrib[keys[a]]) > abs(contrib[keys[b]])
			}
			return keys[a] < keys[b]
		})
		if len(keys) > 12 {
			keys = keys[:12]
		}
		b := []byte{'{'}
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = record.AppendString(b, k)
			b = append(b, ':')
			b = record.AppendFloat(b, roundTo(contrib[k], 4))
		}
		r.SetRaw("weights", append(b, '}'))
	}
	return nil
}

// isEvidenceOnly tells the classifier's own features from urlfeat's.
func isEvidenceOnly(f string) bool {
	for _, p := range []string{"shape_", "lenb_", "ns_", "word:", "last_", "template:", "trail:", "nparams:", "qlenb:"} {
		if len(f) >= len(p) && f[:len(p)] == p {
			return true
		}
	}
	return false
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func roundTo(v float64, digits int) float64 {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	r, _ := strconv.ParseFloat(s, 64)
	return r
}
