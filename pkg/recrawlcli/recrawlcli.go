// Package recrawlcli is the command line of recrawl: crawl-value ranking
// under host and global rate limits (rank), the exact static optimum
// (solve), change-rate estimation (estimate), per-page diagnosis (explain),
// the policy simulator (simulate), and the crawl state with its one queue
// (update, next, merge). The methods live in pkg/recrawl and
// pkg/recrawl/queue.
package recrawlcli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
)

// Main runs recrawl with args (args[0] is the program name) and returns the
// exit status.
func Main(args []string, env clikit.Env) int {
	// rank, solve, summary and explain map a regular input file (see
	// loadPages): one truncated under them is an error, not a SIGBUS.
	code := 0
	if err := record.GuardMapped(func() { code = clikit.Run(App(), args, env) }); err != nil {
		fmt.Fprintln(env.Stderr, "recrawl:", err)
		return 1
	}
	return code
}

// App returns the recrawl application.
func App() *cli.App {
	app := clikit.New("recrawl", "decide what to recrawl: crawl values under host and global rate limits",
		"recrawl rank|solve|estimate|explain|simulate|summary|lambda0|update|next|merge [flags] [FILE...]")
	app.Description = `Pages have a weight w, a Poisson change rate delta (per day) and a time tau
since their last fetch. recrawl ranks them by the crawl value
  V(tau) = (w/delta)(1 - e^(-delta tau)) - w tau e^(-delta tau)
and crawls those whose value reached lambda_i + lambda_0, the multipliers of
their host's rate limit and the global one ("Crawling the internet", Google,
2018). Input: NDJSON page records (url, weight, change_rate, last_fetch,
host_rate), or fetch records for estimate.

Example:
   $ recrawl estimate fetches.ndjson > pages.ndjson   # change_rate from digests
   $ recrawl rank --rate 50000 --slot 1h --host-rate 2000 --state st.json pages.ndjson
   {"url":"https://a.example/news","change_rate":4.1,...,"crawl_value":0.83,"due":true,"next_fetch":"..."}
   $ recrawl explain --rate 50000 https://b.example/x pages.ndjson
   $ recrawl solve --rate 5 five.ndjson               # the static optimum
   $ recrawl simulate --markdown                      # policies compared
   $ recrawl summary --shard 0/4 --rate 50000 pages.ndjson > sum0.json   # map ...
   $ recrawl lambda0 --rate 50000 sum*.json                               # ... and reduce lambda_0

The crawl loop keeps a state instead of re-reading history:
   $ recrawl update --state crawl.recrawl --batch 000042-20261123T100000Z --weights imp.ndjson fetched.ndjson
   $ recrawl next --state crawl.recrawl --n 700 --rate 16800 --host-rate 240 > candidates.ndjson`
	app.Commands = []*cli.Command{rankCommand(), solveCommand(), estimateCommand(), explainCommand(), simulateCommand(),
		summaryCommand(), lambda0Command(), updateCommand(), newSitesCommand(), nextCommand(), mergeCommand(), reportCommand()}
	return app
}

// pageFlags are the flags of the commands that read page records.
func pageFlags() []cli.Flag {
	return append(clikit.InputFlags(),
		&cli.StringFlag{Name: "now", Usage: "rank as of `TIME` (RFC 3339; default: the current time)"},
		&cli.Float64Flag{Name: "rate", Usage: "global crawl limit k_0 in `CRAWLS` per day (0: none)"},
		&cli.Float64Flag{Name: "host-rate", Usage: "default per-host limit k_i in `CRAWLS` per day (0: none)"},
		&cli.StringFlag{Name: "host-rates", Usage: "`FILE` of per-host limits: host<TAB>crawls per day, or NDJSON {\"host\",\"host_rate\"}"},
		&cli.StringFlag{Name: "weight-field", Value: "weight", Usage: "record field holding the page value (e.g. importance, from opic)"},
		&cli.Float64Flag{Name: "default-weight", Value: 1, Usage: "weight of a record without the weight field"},
		&cli.StringFlag{Name: "weights", Usage: "take the weight field of pages that lack it from the records of `FILE` (e.g. opic show), scaled to mean 1"},
		&cli.Float64Flag{Name: "default-change-rate", Value: 0.2, Usage: "change `RATE` per day of records without change_rate: recrawl estimate's prior, so that 'opic show | recrawl rank' needs no estimate (0: such a record is an error)"},
		&cli.StringFlag{Name: "objective", Value: "freshness", Usage: "freshness (binary, the article) or harmonic (Kolobov et al. 2019)"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print lambda_0 and each host's lambda_i on stderr"},
	)
}

// pageSet is the pages of the input, read in a first pass.
type pageSet struct {
	ps   *recrawl.Pages
	urls []string // only kept when a command needs them
	// inputs are the input files in memory, read by both passes.
	inputs []pageInput
	opt    recrawl.PageOptions
	obj    recrawl.Objective
	now    time.Time
	clean  func()
	good   bitset
	// at is each page's line as its offset in its input (pages of input i
	// from inputs[i].first on), so that rank parses the few lines it
	// writes without reading every line again; nil when not asked for or
	// an input is over 4 GiB (then eachPage falls back to each).
	at []uint32
	// weights are the page values joined from --weights, by URL.
	weights map[string]float64
}

// readWeights reads url and field from the records of a file (opic show's
// output, say) and scales the values to mean 1, so that --default-weight 1
// stands for an average page whatever the file's scale (opic's importance
// sums to 1 over all pages).
func readWeights(c *cli.Context, name, field string) (map[string]float64, error) {
	in, err := clikit.Input(c)
	if err != nil {
		return nil, err
	}
	in.Shard = record.Shard{}
	w := map[string]float64{}
	var sum float64
	err = in.Each(c.Context, []string{name}, func(r *record.Record) error {
		v, ok, err := r.Float(field)
		if err != nil {
			return r.Errorf("%v", err)
		}
		if !ok || v < 0 {
			return nil
		}
		w[r.URL()] = v
		sum += v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if sum > 0 {
		scale := float64(len(w)) / sum
		for u := range w {
			w[u] *= scale
		}
	}
	return w, nil
}

// applyWeight gives a record without the weight field its joined weight.
func (set *pageSet) applyWeight(r *record.Record) {
	if set.weights == nil || r.Has(set.opt.WeightField) {
		return
	}
	if v, ok := set.weights[r.URL()]; ok {
		r.SetFloat(set.opt.WeightField, v)
	}
}

// loadPages reads every page record. The input is held in memory (a
// regular file mapped, standard input or a pipe copied to a temporary
// file first) so that the output pass can read it again without copying:
// the pages are kept as numbers only (about 40 bytes each), not as records.
func loadPages(c *cli.Context, files []string, keepURLs, keepLines bool) (*pageSet, error) {
	now := time.Now().UTC()
	if s := c.String("now"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, clikit.Usagef("--now %q: want an RFC 3339 time", s)
		}
		now = t.UTC()
	}
	obj, err := recrawl.ParseObjective(c.String("objective"))
	if err != nil {
		return nil, clikit.Usagef("--objective: %v", err)
	}
	for _, f := range []string{"rate", "host-rate", "default-change-rate", "default-weight"} {
		if v := c.Float64(f); v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, clikit.Usagef("--%s %v: want a positive number", f, v)
		}
	}
	hostRates := map[string]float64{}
	if name := c.String("host-rates"); name != "" {
		if hostRates, err = readHostRates(name); err != nil {
			return nil, err
		}
	}
	def := c.Float64("host-rate")
	set := &pageSet{obj: obj, now: now, clean: func() {}}
	set.ps = &recrawl.Pages{HostRateOf: func(h string) float64 {
		if k, ok := hostRates[h]; ok {
			return k
		}
		return def
	}}
	set.opt = recrawl.PageOptions{Now: now, WeightField: c.String("weight-field"),
		DefaultWeight: c.Float64("default-weight"), DefaultChangeRate: c.Float64("default-change-rate")}
	if name := c.String("weights"); name != "" {
		if set.weights, err = readWeights(c, name, set.opt.WeightField); err != nil {
			return nil, err
		}
	}
	if set.inputs, set.clean, err = readInputs(files, clikit.EnvOf(c).Stdin); err != nil {
		return nil, err
	}
	in, err := clikit.Input(c)
	if err != nil {
		set.clean()
		return nil, err
	}
	var size int64
	lines := 0
	for _, pi := range set.inputs {
		size += int64(len(pi.data))
		lines += record.EstimateLines(pi.data)
	}
	if in.Shard.N <= 1 {
		set.ps.Grow(lines) // the columns are filled without growing
	}
	if keepLines && size < 1<<32 {
		set.at = make([]uint32, 0, lines)
	}
	bar := clikit.Progress(c, size, "recrawl: reading pages", true)
	clikit.TrackInput(in, bar)
	ordinal := 0
	r := new(record.Record) // reused: the pages keep numbers and own strings only
	// Without weights to join or a shard to keep, a page needs no record.
	var pr *recrawl.PageReader
	if set.weights == nil && in.Shard.N <= 1 {
		pr = recrawl.NewPageReader(&set.opt)
		pr.AddsTo(set.ps)
	}
	for i := range set.inputs {
		pi := &set.inputs[i]
		pi.first = set.ps.Len()
		err = in.EachLineIn(c.Context, pi.name, pi.data, func(_ string, line []byte, n int) error {
			ordinal++
			if pr != nil {
				p, err := pr.Read(line)
				if err != nil {
					return &record.DataError{Line: n, Err: err}
				}
				set.add(p, ordinal, keepURLs)
				set.keepLine(pi.data, line)
				return nil
			}
			if err := record.ParseView(r, line); err != nil {
				return &record.DataError{Line: n, Err: err}
			}
			r.Line = n
			if !in.Shard.Keeps(r) {
				return nil
			}
			set.applyWeight(r)
			p, err := recrawl.ParsePage(r, &set.opt)
			if err != nil {
				return r.Errorf("%v", err)
			}
			set.add(p, ordinal, keepURLs)
			set.keepLine(pi.data, line)
			return nil
		})
		if err != nil {
			break
		}
	}
	bar.Finish()
	if err != nil {
		set.clean()
		return nil, err
	}
	return set, nil
}

// add keeps the page of the ordinal-th line.
func (set *pageSet) add(p recrawl.PageInput, ordinal int, keepURL bool) {
	set.ps.Add(p)
	set.good.set(ordinal - 1)
	if keepURL {
		set.urls = append(set.urls, strings.Clone(p.URL))
	}
}

// keepLine notes where the line of the page just added starts in data.
// The line is a slice of data (EachLineIn's lines are), so its offset is
// the difference of their capacities; a line that is not (which would be
// a change in the record package) turns the offsets off.
func (set *pageSet) keepLine(data, line []byte) {
	if set.at == nil {
		return
	}
	off := cap(data) - cap(line)
	if off < 0 || off >= len(data) || len(line) == 0 || &data[off] != &line[0] {
		set.at = nil
		return
	}
	set.at = append(set.at, uint32(off))
}

// lineAt returns the line starting at data[off:], as EachLineIn gives it.
func lineAt(data []byte, off uint32) []byte {
	b := data[off:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return bytes.TrimSuffix(b, []byte("\r"))
}

// eachPage is each for the given pages only, with want: fn sees them in
// input order, each in a record of its own. With the line offsets it
// parses those lines alone; without, it reads every line again.
func (set *pageSet) eachPage(c *cli.Context, pages []int32, fn func(r *record.Record, j int) error) error {
	if set.at == nil || len(set.at) != set.ps.Len() {
		var want bitset
		for _, j := range pages {
			want.set(int(j))
		}
		return set.each(c, want.has, fn)
	}
	sorted := slices.Clone(pages)
	slices.Sort(sorted)
	in, last, line := 0, 0, 1 // the input, where line was counted to, its number
	for _, j := range sorted {
		for in+1 < len(set.inputs) && int(j) >= set.inputs[in+1].first {
			in, last, line = in+1, 0, 1
		}
		data, off := set.inputs[in].data, int(set.at[j])
		line += bytes.Count(data[last:off], []byte{'\n'})
		last = off
		r := new(record.Record)
		if err := record.ParseView(r, lineAt(data, set.at[j])); err != nil {
			return err // the first pass parsed this line
		}
		r.Line = line
		set.applyWeight(r)
		if err := fn(r, int(j)); err != nil {
			return err
		}
	}
	return nil
}

// bitset marks the input lines (by ordinal among non-blank lines) that
// gave a page, so that the second pass needs no validation.
type bitset []uint64

func (b *bitset) set(i int) {
	for len(*b) <= i/64 {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

func (b bitset) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

// each runs the second pass: fn sees the line of every page with its page
// index, parsed only if want(j) says so (rank skips the records it does
// not write). Bad lines were reported in the first pass. With want nil, fn
// sees one record reused from line to line and must not keep it; records
// given with want may be kept until set.clean, as they are views of the
// input in memory.
func (set *pageSet) each(c *cli.Context, want func(j int) bool, fn func(r *record.Record, j int) error) error {
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	in.Stderr, in.Strict = io.Discard, false
	ordinal, j := 0, 0
	var shared *record.Record
	if want == nil {
		shared = new(record.Record)
	}
	for _, pi := range set.inputs {
		err := in.EachLineIn(c.Context, pi.name, pi.data, func(_ string, line []byte, n int) error {
			ordinal++
			if !set.good.has(ordinal - 1) {
				return nil
			}
			page := j
			j++
			if want != nil && !want(page) {
				return nil
			}
			r := shared
			if r == nil {
				r = new(record.Record)
			}
			if err := record.ParseView(r, line); err != nil {
				return err // the first pass parsed this line
			}
			r.Line = n
			set.applyWeight(r)
			return fn(r, page)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// A pageInput is one input file held in memory.
type pageInput struct {
	name  string // as given; "-" for standard input
	data  []byte
	first int // the index of its first page
}

// readInputs holds the inputs in memory: regular files (standard input
// too, when redirected from one) are mapped; standard input and other
// files that can be read only once (pipes, <(...)) are copied to a
// temporary file first, which is mapped and removed at once, so that
// memory is the page cache's and nothing is left behind. clean releases
// them all.
func readInputs(files []string, stdin io.Reader) (inputs []pageInput, clean func(), err error) {
	if len(files) == 0 {
		files = []string{"-"}
	}
	var releases []func()
	clean = func() {
		for _, r := range releases {
			r()
		}
	}
	for _, name := range files {
		data, release, err := readInput(name, stdin)
		if err != nil {
			clean()
			return nil, nil, err
		}
		releases = append(releases, release)
		inputs = append(inputs, pageInput{name: name, data: data})
	}
	return inputs, clean, nil
}

func readInput(name string, stdin io.Reader) ([]byte, func(), error) {
	var src io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		src = f
	}
	if f, ok := src.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return record.ReadWhole(f)
		}
	}
	tmp, err := os.CreateTemp("", "recrawl-input-*")
	if err != nil {
		return nil, nil, err
	}
	defer tmp.Close()
	os.Remove(tmp.Name()) // still open: removed for good when unmapped
	if _, err := io.Copy(tmp, src); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %v", displayName(name), err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	return record.ReadWhole(tmp)
}

func displayName(f string) string {
	if f == "-" {
		return "stdin"
	}
	return f
}

// readHostRates reads host<TAB>rate lines or NDJSON {"host":..,"host_rate":..}.
func readHostRates(name string) (map[string]float64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]float64{}
	lr := record.NewLineReader(f)
	for {
		line, n, err := lr.Next()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, err
		}
		s := strings.TrimSpace(string(line))
		if s == "" || s[0] == '#' {
			continue
		}
		var host string
		var rate float64
		if s[0] == '{' {
			var v struct {
				Host     string   `json:"host"`
				HostRate *float64 `json:"host_rate"`
			}
			if err := json.Unmarshal(line, &v); err != nil || v.HostRate == nil {
				return nil, fmt.Errorf("%s: line %d: want {\"host\": ..., \"host_rate\": crawls per day}", name, n)
			}
			host, rate = v.Host, *v.HostRate
		} else {
			h, v, ok := strings.Cut(s, "\t")
			if !ok {
				h, v, ok = strings.Cut(s, " ")
			}
			r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if !ok || err != nil {
				return nil, fmt.Errorf("%s: line %d: want host<TAB>crawls per day", name, n)
			}
			host, rate = h, r
		}
		host = strings.ToLower(strings.TrimSpace(host))
		if host == "" || !(rate > 0) || math.IsInf(rate, 0) {
			return nil, fmt.Errorf("%s: line %d: want a host and a positive rate", name, n)
		}
		m[host] = rate
	}
}

// parseSlot reads a slot length: a Go duration (1h, 30m) or seconds.
func parseSlot(s string) (float64, error) {
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return float64(d) / float64(recrawl.Day), nil
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 && !math.IsInf(v, 0) {
		return v / 86400, nil
	}
	return 0, clikit.Usagef("--slot %q: want a duration such as 1h or 3600 (seconds)", s)
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// afterDays returns now plus d days, rounded to the second.
func afterDays(now time.Time, d float64) time.Time {
	return now.Add(time.Duration(math.Round(d*86400)) * time.Second)
}

func warnf(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(clikit.EnvOf(c).Stderr, "recrawl: "+format+"\n", args...)
}

func newStderr(c *cli.Context) *bufio.Writer { return bufio.NewWriter(clikit.EnvOf(c).Stderr) }
