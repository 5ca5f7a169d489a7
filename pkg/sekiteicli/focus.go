package sekiteicli

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/internal/focuseval"
	"github.com/sekitei/crawlkit/internal/focusweb"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/crawlorder"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/sekitei"
)

func evaluateCommand() *cli.Command {
	return &cli.Command{
		Name:      "evaluate",
		Usage:     "the lecture's evaluation: QLinks in an index of fixed size, per crawl order and quota rule",
		UsageText: "sekitei evaluate [--index N] [--quota RULE,...] [--min-quota M] [--order NAME,...] [--topic TEXT] [--seed S]\n     [--hosts 8] [--articles 450]\n   sekitei evaluate --good FILE --general FILE [--index N] [--quota RULE,...] [--min-quota M] [--order NAME,...]",
		Description: `Crawls to a fixed index size under every crawl order (see 'sekitei order')
and quota rule (none, equal, greedy, visits, segments) and counts the QLinks
the index holds, against the baselines "only QLinks" (the visit log alone)
and "all URLs". The first two rows are the lecture's comparison: Sekitei's
quota by segments against the greedy index with a site quota by visits, both
in breadth-first order.

Without --good: a generated web of --hosts sites with text, topics, links
and visits (QLinks cluster by segment and topic; half of them are the
crawler's visit log); "pages on the topic" counts the pages on --topic.
With --good and --general: one site known by its URLs only; the first half
of the good URLs is the visit log, and only the orders that need no text
or links run (bfs, qlink-site, qlink-segment), without a quota and under
Sekitei's. --quota chooses the quota rules of the rows after the baselines
(equal: every site MIN_QUOTA; greedy: every site F(#Visits)*MIN_QUOTA;
visits: every segment F(#Visits)*MIN_QUOTA; segments: every segment
#PagesWithQLinks*MIN_QUOTA; none), --order their crawl orders. --min-quota 0
(the default) picks the MIN_QUOTA at which the quotas add up to the index
size, so that rules compare at the same size. Seeded and deterministic.

Example:
   $ sekitei evaluate --index 1500 | head -4
   | method | order | quota | MIN_QUOTA | index size | QLinks in index | share of QLinks | pages on the topic |
   |---|---|---|---|---|---|---|---|
   | Sekitei: quota by segments | bfs | segments | 3.8 | 1500 | 342 | 0.501 | 549 (0.375) |
   | greedy index, site quota by visits | bfs | greedy | 17.7 | 1498 | 184 | 0.269 | 270 (0.184) |
   $ sekitei evaluate --index 1500 --quota segments --min-quota 4 --order qlink-segment | tail -1
   | qlink-segment, segments | qlink-segment | segments | 4.0 | 1500 | 460 | 0.673 | 574 (0.392) |`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "good", Usage: "`FILE` of good (visited) URLs of one site, with --general"},
			&cli.StringFlag{Name: "general", Usage: "`FILE` of general URLs of the site"},
			&cli.IntFlag{Name: "index", Usage: "index size `N` (default: a fifth of the URLs)"},
			&cli.StringFlag{Name: "quota", Usage: "quota `RULES` of the rows after the baselines, comma-separated: " + strings.Join(crawlorder.QuotaRules, ", ") + " (default: all)"},
			&cli.Float64Flag{Name: "min-quota", Usage: "MIN_QUOTA `M` of the quota rules (0: quotas add up to the index size)"},
			&cli.StringFlag{Name: "order", Usage: "crawl `ORDERS` of the rows after the baselines, comma-separated (default: all)"},
			&cli.StringFlag{Name: "topic", Usage: "`TEXT` of the topic orders' topic (default: the generated web's first topic)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random `SEED`"},
			&cli.IntFlag{Name: "hosts", Value: 8, Usage: "sites of the generated web"},
			&cli.IntFlag{Name: "articles", Value: 450, Usage: "articles per generated site"},
		},
		Action: func(c *cli.Context) error {
			opt := focuseval.Options{IndexSize: c.Int("index"), MinQuota: c.Float64("min-quota"), Topic: c.String("topic"), Seed: c.Uint64("seed"),
				Orders: clikit.SplitList(c.String("order")), Quotas: clikit.SplitList(c.String("quota"))}
			switch {
			case opt.IndexSize < 0:
				return clikit.Usagef("--index %d: want a positive size", opt.IndexSize)
			case opt.MinQuota < 0 || math.IsNaN(opt.MinQuota) || math.IsInf(opt.MinQuota, 0):
				return clikit.Usagef("--min-quota %v: want a number of pages, 0 or more", opt.MinQuota)
			case c.IsSet("topic") && len(crawlorder.Terms(opt.Topic)) == 0:
				return clikit.Usagef("--topic %q: %v", opt.Topic, crawlorder.ErrEmptyTopic)
			case (c.String("good") == "") != (c.String("general") == ""):
				return clikit.Usagef("--good and --general go together")
			case c.Int("hosts") < 1 || c.Int("articles") < 3:
				return clikit.Usagef("--hosts wants at least 1 and --articles at least 3")
			}
			for _, o := range opt.Orders {
				if !slices.Contains(crawlorder.Names, o) {
					return clikit.Usagef("--order %q: want one of %s", o, strings.Join(crawlorder.Names, ", "))
				}
			}
			for _, q := range opt.Quotas {
				if !slices.Contains(crawlorder.QuotaRules, q) {
					return clikit.Usagef("--quota %q: want one of %s", q, strings.Join(crawlorder.QuotaRules, ", "))
				}
			}
			var rows []focuseval.Row
			var err error
			if c.String("good") != "" {
				good, err := readLines(c.String("good"))
				if err != nil {
					return err
				}
				general, err := readLines(c.String("general"))
				if err != nil {
					return err
				}
				rows, err = focuseval.URLs(good, general, opt)
				if err != nil {
					return err
				}
			} else {
				cfg := focusweb.DefaultConfig()
				cfg.Seed, cfg.Hosts, cfg.Articles = opt.Seed, c.Int("hosts"), c.Int("articles")
				if rows, err = focuseval.Web(focusweb.Generate(cfg), opt); err != nil {
					return err
				}
			}
			out := clikit.Output(c)
			var b strings.Builder
			if err := focuseval.WriteTable(&b, rows); err != nil {
				return err
			}
			for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
				if err := out.WriteLine([]byte(line)); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// readLines reads the non-empty lines of a file of URLs.
func readLines(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		if l := strings.TrimSpace(s.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out, s.Err()
}

// readVisits reads a visit log: a URL a line, optionally a tab and its
// visits (1 when absent).
func readVisits(name string) (map[string]float64, error) {
	lines, err := readLines(name)
	if err != nil {
		return nil, err
	}
	v := map[string]float64{}
	for i, l := range lines {
		u, n, tab := strings.Cut(l, "\t")
		x := 1.0
		if tab {
			x, err = strconv.ParseFloat(strings.TrimSpace(n), 64)
			if err != nil || !(x >= 0) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%s: line %d: visits %q: want a number, 0 or more", name, i+1, n)
			}
		}
		v[u] += x
	}
	return v, nil
}

func orderCommand() *cli.Command {
	return &cli.Command{
		Name:  "order",
		Usage: "crawl-queue priorities of a batch's links by a crawl order, for recrawl's weights",
		UsageText: "sekitei order --order NAME [--topic TEXT | --topic-pages FILE] [--good FILE] [--segments FILE]\n" +
			"     [--coef 0.5] [--depth 3] [--rebalance 100] [--state FILE] [--floor F] [--check] [FETCH_RECORDS...]",
		Description: `Reads fetch records ("url", "links"; the page's words from "terms", a list,
or "text", else "title"; "anchors", a list beside "links", their anchor
texts) and writes {"url","priority","order","why"} for every URL whose
priority the order sets or changes, in the order first scored: the crawl
loop passes them to 'recrawl update --weights FILE --weight-field priority'.
"why" says which rule gave the score; fish and shark add "depth" (the
budget left) and "dead": true (the fish died: do not crawl).

Orders (see docs/sekitei.md for the rules and the papers):
  bfs            breadth first: 1/(1+depth)
  fish           fish search: budget --depth kept under relevant pages, -1 otherwise
  shark          shark search: inherited and anchor relevance to --topic
  best-first     TF-IDF closeness of the parent page to --topic
  pagerank, hits over the graph of the records given, every --rebalance pages
  qlink-site, qlink-links, qlink-segment
                 the --good QLinks extrapolated per site, along links
                 (ql(B) = --coef * ql(A)) or per segment (--segments)

With --state FILE the order resumes from the scores it gave before (the
file is created, and rewritten with every score after the run), so a turn
reads only its batch. pagerank and hits need the whole graph: give them the
fetch history.

--floor F writes priorities below F as F (the state keeps them as they
are): recrawl takes a weight of 0 as none and gives such a page the mean
weight, so the crawl loop passes a small floor and a page the order ranks
last stays last. --check checks the order and its flags (the topic, the
visit log, the segments) and exits without reading records: 2 for a usage
error, 1 for a file that cannot be used; the loop runs it before a turn.

Example:
   $ sekitei order --order fish --topic "roses garden" --depth 2 --state order.ndjson fetched.ndjson
   {"url":"http://a.test/roses/","priority":2,"order":"fish","why":"parent relevant (closeness 0.7071): budget stays 2","depth":2}
   $ sekitei order --order qlink-segment --good good.txt --segments segs.ndjson fetched.ndjson`,
		Flags: append(clikit.InputFlags(),
			&cli.StringFlag{Name: "order", Required: true, Usage: "crawl order `NAME`: " + strings.Join(crawlorder.Names, ", ")},
			&cli.StringFlag{Name: "topic", Usage: "topic `TEXT` of fish, shark and best-first"},
			&cli.StringFlag{Name: "topic-pages", Usage: "`FILE` of example pages' text, the topic (instead of --topic)"},
			&cli.StringFlag{Name: "good", Usage: "visit log `FILE`: a QLink URL a line, optionally TAB and its visits"},
			&cli.StringFlag{Name: "segments", Usage: "segments `FILE` of 'sekitei segments' (qlink-segment)"},
			&cli.Float64Flag{Name: "coef", Value: 0.5, Usage: "qlink-links: ql(B) = `C` * ql(A)"},
			&cli.IntFlag{Name: "depth", Value: 3, Usage: "fish and shark: depth budget `D` of a seed"},
			&cli.IntFlag{Name: "rebalance", Value: 100, Usage: "pagerank and hits: recompute every `N` pages"},
			&cli.StringFlag{Name: "state", Usage: "`FILE` of the scores given before; rewritten after the run"},
			&cli.Float64Flag{Name: "floor", Usage: "write priorities below `F` as F (0: as they are)"},
			&cli.BoolFlag{Name: "check", Usage: "check the order and its flags, read no records, write nothing"},
		),
		Action: order,
	}
}

func order(c *cli.Context) error {
	name := c.String("order")
	floor := c.Float64("floor")
	if !(floor >= 0) || math.IsInf(floor, 0) {
		return clikit.Usagef("--floor %v: want a number, 0 or more", floor)
	}
	if !slices.Contains(crawlorder.Names, name) {
		return clikit.Usagef("order %q: want one of %s", name, strings.Join(crawlorder.Names, ", "))
	}
	cfg := crawlorder.Config{Depth: c.Int("depth"), Rebalance: c.Int("rebalance"), Coef: c.Float64("coef")}
	if crawlorder.NeedsTopic(name) {
		text := c.String("topic")
		if f := c.String("topic-pages"); f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			text = string(b)
		}
		t, err := crawlorder.NewTopic(text)
		if err != nil {
			return clikit.Usagef("order %s: %v", name, err)
		}
		cfg.Topic = t
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	var pages []*crawlorder.Page
	if !c.Bool("check") {
		if pages, err = readPages(c, in, c.Args().Slice()); err != nil {
			return err
		}
	}
	if crawlorder.NeedsQLinks(name) {
		if c.String("good") == "" {
			return clikit.Usagef("order %s needs --good, the visit log", name)
		}
		visits, err := readVisits(c.String("good"))
		if err != nil {
			return err
		}
		var seg crawlorder.Segmenter
		if f := c.String("segments"); f != "" {
			sites, err := loadSegments(c)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			seg = segmenterOf(sites)
		} else if name == "qlink-segment" {
			return clikit.Usagef("order qlink-segment needs --segments")
		}
		if cfg.Stats, err = crawlorder.NewQLinkStats(crawlorder.Known(pages), visits, seg); err != nil {
			return err
		}
	}
	o, err := crawlorder.New(name, cfg)
	if err != nil {
		return clikit.Usagef("%v", err)
	}
	if c.Bool("check") {
		return nil
	}
	// Scores of earlier turns: restored, and the pages without one are
	// seeds.
	prior := map[string]crawlorder.Score{}
	var priorOrder []string
	if f := c.String("state"); f != "" {
		if prior, priorOrder, err = readScores(f); err != nil {
			return err
		}
		if p, ok := o.(crawlorder.Prior); ok {
			for _, u := range priorOrder {
				p.Restore(prior[u])
			}
		}
	}
	changed, seq := crawlorder.Replay(o, pages, func(u string) bool {
		_, ok := prior[u]
		return ok
	})
	out := clikit.Output(c)
	for _, u := range seq {
		s := changed[u]
		s.Priority = max(finiteOr0(s.Priority), floor)
		if err := out.Write(scoreRecord(s, name)); err != nil {
			return err
		}
	}
	if f := c.String("state"); f != "" {
		for _, u := range seq {
			if _, ok := prior[u]; !ok {
				priorOrder = append(priorOrder, u)
			}
			prior[u] = changed[u]
		}
		return writeScores(f, prior, priorOrder, name)
	}
	return nil
}

func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func scoreRecord(s crawlorder.Score, name string) *record.Record {
	r := record.New(s.URL)
	p := s.Priority
	if math.IsNaN(p) || math.IsInf(p, 0) {
		p = 0
	}
	r.SetFloat("priority", p)
	r.SetString("order", name)
	r.SetString("why", s.Why)
	if s.Depth > 0 || s.Dead {
		r.SetInt("depth", int64(s.Depth))
	}
	if s.Dead {
		r.SetBool("dead", true)
	}
	return r
}

// pageOf reads a fetch record as the orders see a page.
// readPages reads the pages of the fetch records in files (stdin for none).
func readPages(c *cli.Context, in *record.Input, files []string) ([]*crawlorder.Page, error) {
	var pages []*crawlorder.Page
	err := in.Each(c.Context, files, func(r *record.Record) error {
		p, err := pageOf(r)
		if err != nil {
			return r.Errorf("%v", err)
		}
		pages = append(pages, p)
		return nil
	})
	return pages, err
}

func pageOf(r *record.Record) (*crawlorder.Page, error) {
	p := &crawlorder.Page{URL: r.URL()}
	var links, anchors, terms []string
	if _, err := r.Decode("links", &links); err != nil {
		return nil, err
	}
	if _, err := r.Decode("anchors", &anchors); err != nil {
		return nil, err
	}
	if ok, err := r.Decode("terms", &terms); err != nil {
		return nil, err
	} else if ok {
		for _, t := range terms {
			p.Terms = append(p.Terms, crawlorder.Terms(t)...)
		}
	} else if text, ok := r.String("text"); ok {
		p.Terms = crawlorder.Terms(text)
	} else if title, ok := r.String("title"); ok {
		p.Terms = crawlorder.Terms(title)
	}
	for i, l := range links {
		lk := crawlorder.Link{URL: l}
		if i < len(anchors) {
			lk.Anchor, lk.Context = anchors[i], anchors[i]
		}
		p.Links = append(p.Links, lk)
	}
	return p, nil
}

func segmenterOf(sites map[string]*sekitei.Site) crawlorder.Segmenter {
	return func(u string) (string, string) {
		seg, err := sekitei.SegmentOf(sites, u)
		if err != nil || seg == nil {
			return "no segment", "no segment"
		}
		k := seg.Host + " " + strconv.Itoa(seg.ID)
		return k, fmt.Sprintf("%d %s of %s", seg.ID, seg.Regex, seg.Host)
	}
}

func readScores(name string) (map[string]crawlorder.Score, []string, error) {
	m := map[string]crawlorder.Score{}
	var order []string
	f, err := os.Open(name)
	if os.IsNotExist(err) {
		return m, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	lr := record.NewLineReader(f)
	for {
		line, n, err := lr.Next()
		if err != nil {
			break
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		r, err := record.Parse(line)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: line %d: %v", name, n, err)
		}
		s := crawlorder.Score{URL: r.URL()}
		var perr error
		s.Priority, _, perr = r.Float("priority")
		d, _, derr := r.Float("depth")
		dead, _, berr := r.Bool("dead")
		if perr != nil || derr != nil || berr != nil {
			return nil, nil, fmt.Errorf("%s: line %d: not a score record of 'sekitei order'", name, n)
		}
		s.Depth, s.Dead = int(d), dead
		s.Why, _ = r.String("why")
		if _, ok := m[s.URL]; !ok {
			order = append(order, s.URL)
		}
		m[s.URL] = s
	}
	return m, order, nil
}

// writeScores replaces the state file whole (a temporary file renamed in),
// so a run killed half way leaves the old one.
func writeScores(name string, m map[string]crawlorder.Score, order []string, orderName string) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	w := record.NewWriter(tmp)
	for _, u := range order {
		if err := w.Write(scoreRecord(m[u], orderName)); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return err
		}
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// An explainer is what 'sekitei explain' explains with beyond the
// segments: the evidence extractor, and the along-links scores when it was
// given the link graph (nil otherwise).
type explainer struct {
	sekitei.Evidence
	along map[string]crawlorder.Score
}

// alongLinks reads explain's --links (fetch records, as 'sekitei order'
// reads them) and --good and returns the along-links scores of the URLs of
// the graph, nil without --links. A bad line of the link file is reported
// and skipped, or stops the run under --strict, as bad input lines are
// everywhere.
func alongLinks(c *cli.Context) (map[string]crawlorder.Score, error) {
	links, good := c.String("links"), c.String("good")
	switch {
	case links == "" && (good != "" || c.IsSet("coef")):
		return nil, clikit.Usagef("--good and --coef go with --links, the link graph")
	case links == "":
		return nil, nil
	case good == "":
		return nil, clikit.Usagef("--links needs --good, the visit log the QLinks come from")
	}
	coef := c.Float64("coef")
	if !(coef > 0 && coef < 1) {
		return nil, clikit.Usagef("--coef %v: want a number in (0, 1)", coef)
	}
	in, err := clikit.Input(c)
	if err != nil {
		return nil, err
	}
	in.Shard = record.Shard{} // the graph is whole whatever shard is explained
	pages, err := readPages(c, in, []string{links})
	if err != nil {
		return nil, err
	}
	visits, err := readVisits(good)
	if err != nil {
		return nil, err
	}
	along, err := crawlorder.AlongLinksScores(pages, visits, coef)
	if err != nil {
		return nil, fmt.Errorf("--links %s, --good %s: %w", links, good, err)
	}
	return along, nil
}

// qlinkExplain says what the QLink extrapolations give URL u of seg: the
// site's rate and the segment's rate, from the segments' own counts, and,
// when along is not nil, the along-links score and the parent that gave
// it; "why" names the highest. With site and seg nil only the along-links
// score is given.
func qlinkExplain(site *sekitei.Site, seg *sekitei.Segment, along map[string]crawlorder.Score, u string) []byte {
	var xs []crawlorder.Extrapolation
	var why []string
	b := []byte{'{'}
	if seg != nil {
		var good, urls int
		for _, s := range site.Segments {
			good += s.Good
			urls += s.URLs
		}
		siteRate := crawlorder.Rate(good, urls, crawlorder.Rate(0, 0, 0.5))
		segRate := crawlorder.Rate(seg.Good, seg.URLs, siteRate)
		xs = append(xs, crawlorder.Extrapolation{Mode: crawlorder.PerSegment, Score: segRate},
			crawlorder.Extrapolation{Mode: crawlorder.PerSite, Score: siteRate})
		b = append(b, `"site":`...)
		b = record.AppendFloat(b, roundTo(siteRate, 4))
		b = append(b, `,"segment":`...)
		b = record.AppendFloat(b, roundTo(segRate, 4))
		why = append(why, fmt.Sprintf("per site: %d QLinks of %d URLs; per segment %d: %d of %d", good, urls, seg.ID, seg.Good, seg.URLs))
	}
	if along != nil {
		s, ok := along[u]
		switch {
		case !ok:
			why = append(why, "along links: not in the link graph")
		default:
			p := s.Priority
			if math.IsNaN(p) || math.IsInf(p, 0) {
				p = 0
			}
			xs = append(xs, crawlorder.Extrapolation{Mode: crawlorder.AlongLinks, Score: p})
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(b, `"links":`...)
			b = record.AppendFloat(b, roundTo(p, 4))
			if s.From != "" {
				b = append(b, `,"from":`...)
				b = record.AppendString(b, s.From)
			}
			w := s.Why
			if !strings.HasPrefix(w, "along links: ") {
				w = "along links: " + w
			}
			why = append(why, w)
		}
	}
	if x, ok := crawlorder.Highest(xs...); ok {
		switch x.Mode {
		case crawlorder.AlongLinks:
			why = append(why, "the along-links score is higher")
		default:
			why = append(why, "the "+x.Mode+" rate is higher")
		}
	}
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, `"why":`...)
	b = record.AppendString(b, strings.Join(why, "; "))
	return append(b, '}')
}
