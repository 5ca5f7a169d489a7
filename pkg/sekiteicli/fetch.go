package sekiteicli

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/sekitei"
)

func purityCommand() *cli.Command {
	return &cli.Command{
		Name:  "purity",
		Usage: "score a segmentation on labelled URLs (the 2014 homework's purity)",
		UsageText: "sekitei purity [--segments FILE] [--good FILE --general FILE] [segment flags] [--tsv [--header]] [FILE...]\n" +
			"   (without --segments the segments are built from the same URLs)",
		Description: `Prints per host the purity of its segments on labelled URLs: the sum over
segments of max(good hits, general hits) divided by all hits. 1 means every
segment holds only good or only general URLs; a single segment scores the
share of its majority class.

Example:
   $ sekitei purity --good $D/urls.lenta.examined --general $D/urls.lenta.general
   {"host":"lenta.ru","purity":0.925,"urls":22000,"good":2000,"segments":34}`,
		Flags: append(append(clikit.InputFlags(),
			&cli.StringFlag{Name: "segments", Usage: "score the segments of `FILE` instead of building them"}),
			append(segmentFlags(), clikit.TSVFlag, clikit.HeaderFlag)...),
		Action: func(c *cli.Context) error {
			opt, err := buildOptions(c)
			if err != nil {
				return err
			}
			var sites map[string]*sekitei.Site
			if c.String("segments") != "" {
				if sites, err = loadSegments(c); err != nil {
					return err
				}
			}
			byHost, err := readLabelled(c)
			if err != nil {
				return err
			}
			out := clikit.Output(c)
			tsv := c.Bool("tsv")
			if tsv && c.Bool("header") {
				out.WriteLine([]byte("host\tpurity\turls\tgood\tsegments"))
			}
			for _, h := range sortedHosts(byHost) {
				urls := byHost[h].urls
				var site *sekitei.Site
				if sites != nil {
					if site = sites[h]; site == nil {
						fmt.Fprintf(clikit.EnvOf(c).Stderr, "sekitei: %s: no segments for this host\n", h)
						continue
					}
					site.Count(urls)
				} else if site, err = sekitei.Build(h, urls, opt); err != nil {
					fmt.Fprintf(clikit.EnvOf(c).Stderr, "sekitei: %s: %v\n", h, err)
					continue
				}
				good, all := 0, 0
				for _, s := range site.Segments {
					good += s.Good
					all += s.URLs
				}
				p := roundTo(site.Purity(), 4)
				if tsv {
					out.WriteLine([]byte(fmt.Sprintf("%s\t%v\t%d\t%d\t%d", h, p, all, good, len(site.Segments))))
					continue
				}
				r := &record.Record{}
				r.SetString("host", h)
				r.SetFloat("purity", p)
				r.SetInt("urls", int64(all))
				r.SetInt("good", int64(good))
				r.SetInt("segments", int64(len(site.Segments)))
				b := r.AppendJSON(nil)
				if err := out.WriteLine(b); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func quotaCommand() *cli.Command {
	return &cli.Command{
		Name:      "quota",
		Usage:     "share a site quota between the segments of a segments file",
		UsageText: "sekitei quota --site-quota Q [--min-quota M] [--tsv [--header]] [FILE...]",
		Description: `Reads a segments file (NDJSON or TSV, from files or stdin) and writes it back
with each segment's "quota" set by the lecture's rule: every segment gets
the minimum quota M, and the rest of Q is shared in proportion to the
segment's pages with QLinks (its good URLs); a host without good URLs shares
in proportion to segment size. The quotas of a host add up to Q exactly.

Example:
   $ sekitei quota --site-quota 5000 --min-quota 50 segs.ndjson | head -1
   {"host":"lenta.ru","segment":0,"regex":"^/news/2012/...","urls":416,"good":0,"good_share":0,"quota":50,...}`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "site-quota", Required: true, Usage: "quota `Q` of each site"},
			&cli.IntFlag{Name: "min-quota", Value: 100, Usage: "minimum quota `M` of a segment"},
			clikit.TSVFlag, clikit.HeaderFlag, clikit.StrictFlag,
		},
		Action: func(c *cli.Context) error {
			q, mq := c.Int("site-quota"), c.Int("min-quota")
			if q < 0 || mq < 0 {
				return clikit.Usagef("quotas must not be negative")
			}
			var all bytes.Buffer
			files := c.Args().Slice()
			if len(files) == 0 {
				files = []string{"-"}
			}
			// The files are read as one; firstLine[i] is the line of all
			// where files[i] starts, so that errors name the file's own line.
			firstLine := make([]int, len(files))
			line := 1
			for i, name := range files {
				var data []byte
				var err error
				if name == "-" {
					var b bytes.Buffer
					_, err = b.ReadFrom(clikit.EnvOf(c).Stdin)
					data = b.Bytes()
				} else {
					data, err = os.ReadFile(name)
				}
				if err != nil {
					return err
				}
				firstLine[i] = line
				all.Write(data)
				all.WriteByte('\n')
				line += bytes.Count(data, []byte{'\n'}) + 1
			}
			strict := c.Bool("strict")
			bad := func(e *sekitei.SegmentsError) error {
				i := len(files) - 1
				for i > 0 && firstLine[i] > e.Line {
					i--
				}
				where := fmt.Sprintf("line %d", e.Line-firstLine[i]+1)
				if files[i] != "-" {
					where = files[i] + ": " + where
				}
				fmt.Fprintf(clikit.EnvOf(c).Stderr, "%s: %s: %v\n", c.App.Name, where, e.Err)
				if strict {
					return record.ErrStrict
				}
				return nil
			}
			sites, err := sekitei.ReadSegmentsFunc(&all, bad)
			if err != nil {
				return err
			}
			out := clikit.Output(c)
			tsv := c.Bool("tsv")
			if tsv && c.Bool("header") {
				out.WriteLine([]byte(sekitei.TSVHeader))
			}
			for _, h := range sortedHosts(sites) {
				sites[h].SetQuotas(q, mq)
				if err := writeSegments(out, sites[h], tsv); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "train the fetch model of a site on good and general URLs",
		UsageText: "sekitei train --good FILE --general FILE --quota Q [--stream N] [--seed S] > model.json\n   sekitei train --quota Q [--stream N] [FILE...]   (records with \"good\": true)",
		Description: `Fits the fetch filter's model: a logistic regression on the sekitei features
and their generalisations (segment shapes, namespaces, length buckets, URL
template), good URLs against general ones, and stores it with the quota. The
model is JSON, versioned; 'sekitei filter' refuses another version.

--stream N is how many URLs the filter will be offered, for pacing the quota;
without it the filter assumes twice the quota.

Example:
   $ sekitei train --good good500.txt --general general500.txt --quota 10000 --stream 21000 > model.json`,
		Flags: append(clikit.InputFlags(),
			&cli.StringFlag{Name: "good", Aliases: []string{"examined"}, Usage: "`FILE` of good (visited) URLs"},
			&cli.StringFlag{Name: "general", Usage: "`FILE` of general URLs"},
			&cli.IntFlag{Name: "quota", Required: true, Usage: "URLs the filter may fetch (`Q`)"},
			&cli.IntFlag{Name: "stream", Usage: "URLs the filter will be offered (`N`; default 2*quota)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random `SEED` of training"},
		),
		Action: func(c *cli.Context) error {
			if c.Int("quota") < 0 || c.Int("stream") < 0 {
				return clikit.Usagef("--quota and --stream must not be negative")
			}
			byHost, err := readLabelled(c)
			if err != nil {
				return err
			}
			var good, general []string
			for _, h := range sortedHosts(byHost) {
				for _, e := range byHost[h].urls {
					if e.Good {
						good = append(good, e.URL)
					} else {
						general = append(general, e.URL)
					}
				}
			}
			if len(byHost) > 1 {
				fmt.Fprintf(clikit.EnvOf(c).Stderr, "sekitei: training one model on %d hosts\n", len(byHost))
			}
			m, _, err := sekitei.Train(good, general, sekitei.TrainOptions{
				Quota: c.Int("quota"), Stream: c.Int("stream"), Seed: c.Uint64("seed")})
			if err != nil {
				return err
			}
			_, err = m.WriteTo(clikit.EnvOf(c).Stdout)
			return err
		},
	}
}

func loadModel(name string) (*sekitei.Model, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := sekitei.ReadModel(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

func filterCommand() *cli.Command {
	return &cli.Command{
		Name:      "filter",
		Usage:     "decide online, URL by URL, which URLs to fetch under the quota",
		UsageText: "sekitei filter --model FILE [--quota Q] [--stream N] [--mark] [--line-buffered] [FILE...]",
		Description: `Reads URL records and, for each in turn and seeing no later one, decides
whether to fetch it, until the quota is used: the default writes only the
records to fetch (unchanged); --mark writes every record with "fetch": true or
false. The quota is paced over the stream: a URL is fetched when its score is
in the top share of the stream's scores that the remaining quota can pay for,
so good URLs are fetched wherever they come and the quota is neither spent
early nor left over. --line-buffered answers each line before reading the
next (for a crawler talking to it through a pipe).

Example:
   $ sekitei train --good good.txt --general general.txt --quota 10000 > model.json
   $ tail -n +501 urls.lenta.general | sekitei filter --model model.json --mark | head -2
   {"url":"http://lenta.ru/news/2011/08/11/rover/","fetch":true}
   {"url":"http://lenta.ru/news/2012/06/15/fb/_Printed.htm","fetch":false}`,
		Flags: append(clikit.InputFlags(),
			&cli.StringFlag{Name: "model", Required: true, Usage: "model `FILE` from 'sekitei train'"},
			&cli.IntFlag{Name: "quota", Usage: "override the model's quota `Q`"},
			&cli.IntFlag{Name: "stream", Usage: "override the expected stream length `N`"},
			&cli.BoolFlag{Name: "mark", Usage: `write every record with "fetch": true|false`},
			&cli.BoolFlag{Name: "line-buffered", Usage: "write each answer before reading the next line"},
		),
		Action: func(c *cli.Context) error {
			if c.Int("quota") < 0 || c.Int("stream") < 0 {
				return clikit.Usagef("--quota and --stream must not be negative")
			}
			m, err := loadModel(c.String("model"))
			if err != nil {
				return err
			}
			in, err := clikit.Input(c)
			if err != nil {
				return err
			}
			f := sekitei.NewFilter(m, c.Int("quota"), c.Int("stream"))
			out := clikit.Output(c)
			out.LineBuffered = c.Bool("line-buffered")
			mark := c.Bool("mark")
			warned := false
			decide := func(r *record.Record, hs []uint64, host string) error {
				d := f.DecideHashes(r.URL(), hs)
				if m.Host != "" && host != m.Host && !warned {
					warned = true
					fmt.Fprintf(clikit.EnvOf(c).Stderr, "sekitei: line %d: host %q is not the model's (%q); its URLs are judged by their form alone\n", r.Line, host, m.Host)
				}
				if mark {
					r.SetBool("fetch", d.Fetch)
					return out.Write(r)
				}
				if d.Fetch {
					return out.Write(r)
				}
				return nil
			}
			// One goroutine, one line at a time: with --line-buffered each
			// answer is out before the next line is read. (A two-stage
			// pipeline, features on one goroutine and decisions on another,
			// cost 20-40% more CPU and ran no faster on the shared 2-core
			// machine; see docs/sekitei.md.)
			files := c.Args().Slice()
			bar := clikit.Progress(c, clikit.InputSize(files), "sekitei filter", true)
			defer bar.Finish()
			clikit.TrackInput(in, bar)
			var ev sekitei.Evidence
			return in.Each(c.Context, files, func(r *record.Record) error {
				hs, err := ev.Hashes(r.URL())
				if err != nil {
					return r.Errorf("%s: %q", err, clip(r.URL()))
				}
				return decide(r, hs, ev.Host())
			})
		},
	}
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "score the filter as the course's checker does",
		UsageText: "sekitei check --good FILE --general FILE [--train 500] [--quota 10000] [--runs 20] [--seed 1] [--tell-stream]",
		Description: `Trains on --train good and --train general URLs, mixes the remaining good URLs
with the remaining general ones, shuffles, asks the filter URL by URL until the
quota is used, and prints the F1 of (fetched / quota) and (good fetched / good
offered), per run and on average. --tell-stream gives the model the stream's
length; without it the filter assumes twice the quota.

Example:
   $ sekitei check --good $D/urls.lenta.examined --general $D/urls.lenta.general --runs 3
   run	fetched	good_fetched	good_offered	fetched_share	good_share	f1
   0	10000	1298	1500	1	0.8653	0.9278
   ...
   mean F1	0.93`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "good", Aliases: []string{"examined"}, Required: true, Usage: "`FILE` of good URLs"},
			&cli.StringFlag{Name: "general", Required: true, Usage: "`FILE` of general URLs"},
			&cli.IntFlag{Name: "train", Value: 500, Usage: "good and general URLs each to train on"},
			&cli.IntFlag{Name: "quota", Value: 10000, Usage: "quota"},
			&cli.IntFlag{Name: "runs", Value: 20, Usage: "shuffles to average over"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the first shuffle"},
			&cli.BoolFlag{Name: "tell-stream", Usage: "tell the model how many URLs it will be offered"},
			&cli.BoolFlag{Name: "segments", Usage: "score the lecture's quota by segments instead of the model"},
			&cli.Float64Flag{Name: "stream-scale", Value: 1, Usage: "with --tell-stream, tell `F` times the true number (to see what a wrong estimate costs)"},
		},
		Action: func(c *cli.Context) error {
			if c.Int("train") < 1 || c.Int("quota") < 1 || c.Int("runs") < 1 {
				return clikit.Usagef("--train, --quota and --runs must be at least 1")
			}
			if c.Float64("stream-scale") <= 0 {
				return clikit.Usagef("--stream-scale must be positive")
			}
			var lists [2][]string
			in := &record.Input{Tool: "sekitei", Stderr: clikit.EnvOf(c).Stderr}
			for i, name := range []string{c.String("good"), c.String("general")} {
				err := in.Each(c.Context, []string{name}, func(r *record.Record) error {
					lists[i] = append(lists[i], r.URL())
					return nil
				})
				if err != nil {
					return err
				}
			}
			res, err := sekitei.Check(lists[0], lists[1], sekitei.CheckOptions{
				Train: c.Int("train"), Quota: c.Int("quota"), Runs: c.Int("runs"),
				Seed: c.Uint64("seed"), Stream: c.Bool("tell-stream"), StreamScale: c.Float64("stream-scale"), Segments: c.Bool("segments")})
			if err != nil {
				return err
			}
			out := clikit.Output(c)
			out.WriteLine([]byte("run\tfetched\tgood_fetched\tgood_offered\tfetched_share\tgood_share\tf1"))
			for i, r := range res.Runs {
				out.WriteLine([]byte(fmt.Sprintf("%d\t%d\t%d\t%d\t%v\t%v\t%v", i, r.Fetched, r.GoodFetched, r.GoodOffered,
					roundTo(r.FetchedShare, 4), roundTo(r.GoodShare, 4), roundTo(r.F1, 4))))
			}
			return out.WriteLine([]byte("mean F1\t" + strconv.FormatFloat(roundTo(res.F1, 4), 'f', -1, 64)))
		},
	}
}
