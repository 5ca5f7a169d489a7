// Package urlfeatcli is the command line of urlfeat: per-URL sekitei
// features, feature counts, and the homework's sampled feature list.
package urlfeatcli

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/urlfeat"
)

// Main runs urlfeat with args (args[0] is the program name) and returns the
// exit status.
func Main(args []string, env clikit.Env) int {
	return clikit.Run(App(), args, env)
}

// App returns the urlfeat application.
func App() *cli.App {
	app := clikit.New("urlfeat", "the sekitei URL features of a stream of URLs",
		"urlfeat [--tsv] [FILE...]\nurlfeat count [--alpha A | --min-count K] [FILE...]\n"+
			"urlfeat sample --good FILE --general FILE [--n 1000] [--alpha 0.1] [--seed S]")
	app.Description = `Reads URL records (plain URL lines or NDJSON objects with "url") from the
files named or from stdin, and adds to each its "host" and "features": the
segment count, query parameter names and pairs, and per path segment its name,
digits / letters-digits-letters shape, extension and length.

Example:
   $ echo 'http://lenta.ru/news/2013/09/30/mid?x=1' | urlfeat
   {"url":"http://lenta.ru/news/2013/09/30/mid?x=1","host":"lenta.ru","features":["segments:5",
    "param_name:x","param:x=1","segment_name_0:news","segment_len_0:4",...]}
   $ urlfeat --tsv urls.txt | head -3        # url<TAB>feature rows
   $ urlfeat count --alpha 0.1 urls.txt      # feature<TAB>count, frequent first

--whole-url adds the lecture's features of the whole URL after the homework's
(off by default, so the homework's list stays exact): url_len:<bytes>,
params:<distinct parameter names>, param_names:<names, sorted, comma-joined>
(order-independent), and query_empty:1 for a URL without parameters:
   $ echo 'http://a.test/list?sort=new&cat=books' | urlfeat --whole-url --tsv | tail -3
   http://a.test/list?sort=new&cat=books	url_len:37
   http://a.test/list?sort=new&cat=books	params:2
   http://a.test/list?sort=new&cat=books	param_names:cat,sort`
	app.Flags = append(clikit.InputFlags(), clikit.TSVFlag, clikit.HeaderFlag, wholeURLFlag)
	app.Action = perURL
	app.Commands = []*cli.Command{countCommand(), sampleCommand()}
	return app
}

// wholeURLFlag turns on the whole-URL features (see pkg/urlfeat).
var wholeURLFlag = &cli.BoolFlag{Name: "whole-url",
	Usage: "add the whole-URL features url_len, params, param_names, query_empty"}

func perURL(c *cli.Context) error {
	if err := clikit.NoInput(c); err != nil {
		return err
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	files := c.Args().Slice()
	bar := clikit.Progress(c, clikit.InputSize(files), "urlfeat", true)
	defer bar.Finish()
	clikit.TrackInput(in, bar)
	out := clikit.Output(c)
	tsv := c.Bool("tsv")
	if tsv && c.Bool("header") {
		out.WriteLine([]byte("url\tfeature"))
	}
	// One record and one value buffer for every line: the per-URL command
	// is a stream, and allocation per line was a fifth of its time.
	in.Reuse = true
	if !tsv && in.Shard.N <= 1 {
		// The whole of a line's work is the Annotator's, which writes a
		// plain URL's record without building one.
		an := &urlfeat.Annotator{Extractor: urlfeat.Extractor{WholeURL: c.Bool("whole-url")}}
		return in.EachLine(c.Context, files, func(_ string, line []byte, n int) error {
			return out.TryAppendLine(func(b []byte) ([]byte, error) {
				b, err := an.AppendLine(b, line)
				if err != nil {
					return b, &record.DataError{Line: n, Err: err}
				}
				return b, nil
			})
		})
	}
	an := &urlfeat.Annotator{Extractor: urlfeat.Extractor{WholeURL: c.Bool("whole-url")}}
	return in.Each(c.Context, files, func(r *record.Record) error {
		if !tsv {
			if err := an.Annotate(r); err != nil {
				return r.Errorf("%v", err)
			}
			return out.Write(r)
		}
		u := r.URL()
		f, err := an.Extract(u)
		if err != nil {
			return r.Errorf("%s: %q", err, clipURL(u))
		}
		for i := 0; i < f.Len(); i++ {
			if err := out.AppendLine(func(b []byte) []byte {
				b = appendTSVField(b, u)
				b = append(b, '\t')
				return append(b, f.At(i)...)
			}); err != nil {
				return err
			}
		}
		return nil
	})
}

func clipURL(u string) string {
	if len(u) > 100 {
		return u[:100] + "..."
	}
	return u
}

// appendTSVField appends s with tabs and newlines replaced by spaces, since
// TSV has no quoting.
func appendTSVField(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\t' || c == '\n' || c == '\r' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}

func countCommand() *cli.Command {
	return &cli.Command{
		Name:      "count",
		Usage:     "count in how many URLs each feature occurs",
		UsageText: "urlfeat count [--alpha A | --min-count K] [--header] [FILE...]",
		Description: `Prints feature<TAB>count for the features of all input URLs, most frequent
first, ties broken by name. --alpha A keeps features seen in more than A*N of
the N URLs; --min-count K those seen in at least K. A feature counts once per
URL. Memory grows with the number of distinct features only.

Example:
   $ urlfeat count --alpha 0.1 testdata/sekitei/urls.lenta.general | head -3
   segment_[0-9]_2:1	19260
   segment_[0-9]_3:1	19214
   segment_len_3:2	19116`,
		Flags: append(clikit.InputFlags(),
			&cli.Float64Flag{Name: "alpha", Usage: "keep features seen in more than `A`*N of the N URLs"},
			&cli.Int64Flag{Name: "min-count", Value: 1, Usage: "keep features seen in at least `K` URLs"},
			clikit.HeaderFlag, wholeURLFlag,
		),
		Action: count,
	}
}

func count(c *cli.Context) error {
	if c.IsSet("alpha") && c.IsSet("min-count") {
		return clikit.Usagef("--alpha and --min-count exclude each other")
	}
	if a := c.Float64("alpha"); a < 0 || a > 1 {
		return clikit.Usagef("--alpha %v: want a fraction in [0, 1]", a)
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	files := c.Args().Slice()
	bar := clikit.Progress(c, clikit.InputSize(files), "urlfeat count", true)
	clikit.TrackInput(in, bar)
	ex := urlfeat.Extractor{WholeURL: c.Bool("whole-url")}
	counter := urlfeat.NewCounter()
	err = in.Each(c.Context, files, func(r *record.Record) error {
		f, err := ex.Extract(r.URL())
		if err != nil {
			return r.Errorf("%s: %q", err, clipURL(r.URL()))
		}
		counter.Add(f)
		return nil
	})
	bar.Finish()
	if err != nil {
		return err
	}
	var top []urlfeat.Count
	if c.IsSet("alpha") {
		top = counter.AboveAlpha(c.Float64("alpha"), counter.URLs())
	} else {
		top = counter.Top(c.Int64("min-count"))
	}
	return writeCounts(clikit.Output(c), top, c.Bool("header"))
}

func writeCounts(out *record.Writer, top []urlfeat.Count, header bool) error {
	if header {
		out.WriteLine([]byte("feature\tcount"))
	}
	for _, t := range top {
		if err := out.AppendLine(func(b []byte) []byte {
			b = append(b, t.Feature...)
			b = append(b, '\t')
			return strconv.AppendInt(b, t.N, 10)
		}); err != nil {
			return err
		}
	}
	return nil
}

func sampleCommand() *cli.Command {
	return &cli.Command{
		Name:      "sample",
		Usage:     "the homework's extract_features: frequent features of a random sample",
		UsageText: "urlfeat sample --good FILE --general FILE [--n 1000] [--alpha 0.1] [--seed S]",
		Description: `Draws N URLs at random from the file of good ("examined") URLs and N from the
file of general URLs, and prints feature<TAB>count for the features seen more
than alpha*N times, most frequent first: the output the course's checker
compares with its gold file. Without --seed every call draws a new sample.

Example:
   $ urlfeat sample --good testdata/sekitei/urls.wikipedia.examined \
       --general testdata/sekitei/urls.wikipedia.general --seed 1
   segment_len_0:4	1980
   segment_name_0:wiki	1980
   segments:2	1940
   segment_ext_1:jpg	146
   segment_substr[0-9]_1:1	106`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "good", Aliases: []string{"examined"}, Required: true, Usage: "`FILE` of good (examined) URLs, one per line"},
			&cli.StringFlag{Name: "general", Required: true, Usage: "`FILE` of general URLs, one per line"},
			&cli.IntFlag{Name: "n", Value: 1000, Usage: "URLs drawn from each file"},
			&cli.Float64Flag{Name: "alpha", Value: 0.1, Usage: "keep features seen more than `A`*N times"},
			&cli.Uint64Flag{Name: "seed", Usage: "random seed (default: a new sample each call)"},
			clikit.StrictFlag,
			clikit.HeaderFlag,
			clikit.MaxLineFlag,
		},
		Action: sample,
	}
}

func sample(c *cli.Context) error {
	n := c.Int("n")
	if n < 1 {
		return clikit.Usagef("--n %d: want at least 1", n)
	}
	if a := c.Float64("alpha"); a < 0 || a > 1 {
		return clikit.Usagef("--alpha %v: want a fraction in [0, 1]", a)
	}
	env := clikit.EnvOf(c)
	var strictErr error
	bad := func(e *urlfeat.LineError) {
		fmt.Fprintf(env.Stderr, "urlfeat: %v\n", e)
		if c.Bool("strict") && strictErr == nil {
			strictErr = record.ErrStrict
		}
	}
	var files []*urlfeat.LineFile
	for _, name := range []string{c.String("good"), c.String("general")} {
		lf, err := urlfeat.ReadLineFileMax(name, c.Int("max-line"), bad)
		if err != nil {
			return err
		}
		files = append(files, lf)
	}
	if strictErr != nil {
		return strictErr
	}
	seed := c.Uint64("seed")
	if !c.IsSet("seed") {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 0x5e417e1))
	counter, size := urlfeat.CountSample(files, n, rng, bad)
	if strictErr != nil {
		return strictErr
	}
	if size == 0 {
		return errors.New("no URLs in the input files")
	}
	return writeCounts(clikit.Output(c), counter.AboveAlpha(c.Float64("alpha"), int64(size)), c.Bool("header"))
}
