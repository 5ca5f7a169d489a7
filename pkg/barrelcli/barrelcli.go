// Package barrelcli is the command line of barrel: build, rebuild, search
// (one query or a batch), serve, get and stats over the index of package
// barrel.
package barrelcli

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/directives"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// Main runs barrel with args (args[0] is the program name) and returns the
// exit status.
func Main(args []string, env clikit.Env) int {
	return clikit.Run(App(), args, env)
}

var indexFlag = &cli.StringFlag{Name: "index", Aliases: []string{"i"}, Required: true, EnvVars: []string{"BARREL_INDEX"},
	Usage: "index `DIR`ectory"}

// App returns the barrel application.
func App() *cli.App {
	app := clikit.New("barrel", "the 1998 Google repository, barrels, lexicon, sorter and searcher",
		"barrel build --index DIR [--batch ID] [--pagerank-every N] [--warc FILE... | --html-dir DIR --base-url URL | RECORDS...]\n"+
			"   barrel search --index DIR [--n 10] [--offset 0] [--model FILE] [--explain] QUERY\n"+
			"   barrel search --index DIR [--n 10] [--queries FILE] < queries.txt\n"+
			"   barrel serve --index DIR [--addr 127.0.0.1:8080] [--model FILE]\n"+
			"   barrel get --index DIR URL|DOCID\n   barrel stats --index DIR [--segments]\n"+
			"   barrel eval --index DIR [--model FILE] [--genindex DIR | --judgments FILE]\n"+
			"   barrel train --index DIR (--genindex DIR | --judgments FILE) --out FILE\n"+
			"   barrel pagerank --index DIR\n   barrel merge --index DIR\n   barrel rebuild --index DIR")
	app.Description = `barrel stores crawled pages in a repository of compressed documents (S2, or
the paper's zlib) and indexes them as section 4 of "The Anatomy of a
Large-Scale Hypertextual Web Search Engine" (Brin and Page, 1998) describes: document index, lexicon,
forward barrels of 2-byte hits, anchors and PageRank, a sorter into short
and full inverted barrels, and a searcher ranking by type, proximity and
PageRank. Each build adds a batch to the index as a new segment; segments
of similar size are merged as batches come; see docs/barrel.md.

Example:
   $ barrel build --index idx fetched.ndjson     # fetch records + their WARC files
   barrel: batch 1: 530 added, 0 re-indexed, 0 unchanged, 0 skipped, 163187 anchors; 530 pages, 4707 docIDs, 26583 words, 1.3s
   $ barrel search --index idx --n 1 json encoder
   {"doc_id":307,"url":"http://docs.test/library/json.html","title":"json — JSON encoder and decoder — Python 3.11.2
    documentation","score":318.0599,"snippet":"Table of Contents <b>json</b> — <b>JSON</b> <b>encoder</b> and decoder ..."}`
	app.Commands = []*cli.Command{buildCommand(), rebuildCommand(), searchCommand(), serveCommand(), getCommand(), statsCommand(), evalCommand(),
		trainCommand(), pagerankCommand(), mergeCommand()}
	return app
}

func buildCommand() *cli.Command {
	return &cli.Command{
		Name:  "build",
		Usage: "add a batch of fetched pages to the index",
		UsageText: "barrel build --index DIR [--batch ID] [--pagerank-every N] [--importance FILE] [RECORDS...]\n" +
			"   barrel build --index DIR --warc FILE [--warc FILE...]\n" +
			"   barrel build --index DIR --html-dir DIR --base-url URL",
		Description: `Reads fetch records (NDJSON with url, status, content_type, warc_file,
warc_offset) from the files named or stdin and indexes each HTML page with
status 200 from its WARC record; or indexes every HTML response of the WARC
files given with --warc; or the .html files under --html-dir as served under
--base-url. A page already indexed with the same content is skipped; a
changed one is re-indexed under its docID. A revisit (a fetch record with
warc_type revisit, a WARC revisit record) is skipped: it has no payload,
and its page is the capture it refers to, indexed when that was. A damaged
WARC record is skipped with a warning naming its file and offset, and the
records after it are indexed. Relative warc_file names are
looked up under --warc-dir (default: the records file's directory, then
the current one); a warc_file outside those directories is refused. Ranks are PageRank over the links found, or, with
--importance, opic's importance field (records with url and importance).
The new batch is committed atomically: an interrupted build leaves the
previous index intact.

Each batch becomes a new segment of the index (its own inverted barrels;
pages it re-indexes are marked deleted in older segments), and one step
of the tiered merge policy runs (as Lucene's TieredMergePolicy): segments
of similar size are merged, up to --merge-factor at once, when there are
more than --merge-factor per tier (tiers of live documents growing by
powers of the factor from --floor-docs); while more than --deletes-pct
percent of the index's documents are deleted, merges favouring the
segments with the most deletions reclaim them; one build reads at most
--max-merge-docs documents in merges, and no merge makes a larger segment.
So a batch writes about its own size, and the number of segments stays
logarithmic up to the cap. PageRank is recomputed over all links every --pagerank-every
batches (and by the first build and "barrel pagerank"); in between,
searches use the last ranks and new pages get the rank of an unlinked page.
--batch ID records the batch's ID with it; the same ID again is a no-op
(a note, exit 0), so a step that died can be rerun.

Example:
   $ barrel build --index idx --batch 000042-20261123T100000Z fetched.ndjson
   barrel: batch 42: 512 added, 188 re-indexed, 0 unchanged, 3 skipped, 9120 anchors; ...
   $ barrel build --index idx --batch 000042-20261123T100000Z fetched.ndjson
   barrel: idx: batch 000042-20261123T100000Z already applied; nothing to do
   $ barrel build --index idx fetched.ndjson
   $ barrel build --index idx --warc crawl.warc.gz
   $ barrel build --index idx --warc crawl/             # every WARC file fetch --warc crawl/ wrote
   $ barrel build --index idx --warc 'crawl/*.warc.gz'  # a quoted glob
   $ barrel build --index idx --html-dir /usr/share/doc/python3.11/html \
       --base-url http://docs.python.test/
   $ opic < fetched.ndjson > imp.ndjson; barrel build --index idx --importance imp.ndjson fetched.ndjson`,
		Flags: append(clikit.InputFlags(), indexFlag,
			&cli.StringSliceFlag{Name: "warc", Usage: "index the HTML responses of WARC `FILE`, of the .warc(.gz) files of a directory (as fetch --warc names it), or of a quoted glob (repeatable)"},
			&cli.StringFlag{Name: "html-dir", Usage: "index the .html files under `DIR`"},
			&cli.StringFlag{Name: "base-url", Usage: "with --html-dir, the `URL` the directory is served under"},
			&cli.StringFlag{Name: "warc-dir", Usage: "`DIR` holding the WARC files named by relative warc_file fields"},
			&cli.StringFlag{Name: "importance", Usage: "rank by the importance field of the records in `FILE` instead of PageRank"},
			&cli.IntFlag{Name: "sort-memory", Value: 64, Usage: "memory bound of one sorter basket, in `MB`"},
			&cli.StringFlag{Name: "batch", Usage: "record the batch `ID`; an ID already applied is a no-op"},
			&cli.IntFlag{Name: "pagerank-every", Value: 24, Usage: "recompute PageRank every `N` batches (1: every batch)"},
			&cli.IntFlag{Name: "merge-factor", Value: barrel.DefaultMergeFactor, Usage: "merge up to `K` segments at once, when a tier holds more than K"},
			&cli.IntFlag{Name: "floor-docs", Value: barrel.DefaultFloorDocs, Usage: "count segments smaller than `N` documents as N in the merge policy"},
			&cli.Float64Flag{Name: "anchor-growth", Value: barrel.DefaultAnchorGrowth, Usage: "re-index a page for new anchors to it when their count passes a power of 1+`G` (0: at every new anchor)"},
			&cli.IntFlag{Name: "max-merge-docs", Value: barrel.DefaultMaxMergeDocs, Usage: "read at most `N` documents in one build's merges, and make no larger segment"},
			&cli.IntFlag{Name: "deletes-pct", Value: barrel.DefaultDeletesPct, Usage: "reclaim deleted documents when more than `P` percent of the index's are"},
			&cli.StringFlag{Name: "codec", Usage: "compress a new index's repository with `CODEC`: s2 (the default) or zlib (the paper's); an existing index keeps its own"},
			&cli.BoolFlag{Name: "check", Usage: "check the flags and exit, reading no input and leaving the index untouched (the crawl loop checks its INDEX_ARGS with it)"},
		),
		Action: build,
	}
}

func builderOptions(c *cli.Context) (barrel.Options, error) {
	opts := barrel.Options{SortMemory: int64(c.Int("sort-memory")) << 20}
	if c.Int("sort-memory") < 1 {
		return opts, clikit.Usagef("--sort-memory %d: want at least 1 (MB)", c.Int("sort-memory"))
	}
	if c.IsSet("pagerank-every") && c.Int("pagerank-every") < 1 {
		return opts, clikit.Usagef("--pagerank-every %d: want at least 1", c.Int("pagerank-every"))
	}
	if c.IsSet("merge-factor") && c.Int("merge-factor") < 2 {
		return opts, clikit.Usagef("--merge-factor %d: want at least 2", c.Int("merge-factor"))
	}
	if c.IsSet("max-merge-docs") && c.Int("max-merge-docs") < 2 {
		return opts, clikit.Usagef("--max-merge-docs %d: want at least 2", c.Int("max-merge-docs"))
	}
	if c.IsSet("floor-docs") && c.Int("floor-docs") < 1 {
		return opts, clikit.Usagef("--floor-docs %d: want at least 1", c.Int("floor-docs"))
	}
	if c.IsSet("deletes-pct") && (c.Int("deletes-pct") < 1 || c.Int("deletes-pct") > 100) {
		return opts, clikit.Usagef("--deletes-pct %d: want 1 to 100", c.Int("deletes-pct"))
	}
	if codec := c.String("codec"); codec != "" && codec != barrel.CodecS2 && codec != barrel.CodecZlib {
		return opts, clikit.Usagef("--codec %s: want %s or %s", codec, barrel.CodecS2, barrel.CodecZlib)
	}
	switch g := c.Float64("anchor-growth"); {
	case g < 0 || g > 10:
		return opts, clikit.Usagef("--anchor-growth %g: want 0 to 10", g)
	case g == 0:
		opts.AnchorGrowth = -1 // every new anchor, at once
	default:
		opts.AnchorGrowth = g
	}
	opts.Codec = c.String("codec")
	opts.PageRankEvery, opts.MergeFactor, opts.Batch = c.Int("pagerank-every"), c.Int("merge-factor"), c.String("batch")
	opts.MaxMergeDocs, opts.DeletesPct, opts.FloorDocs = c.Int("max-merge-docs"), c.Int("deletes-pct"), c.Int("floor-docs")
	if f := c.String("importance"); f != "" {
		imp, err := readImportance(c, f)
		if err != nil {
			return opts, err
		}
		opts.Importance = imp
	}
	return opts, nil
}

func readImportance(c *cli.Context, file string) (map[string]float64, error) {
	in, err := clikit.Input(c)
	if err != nil {
		return nil, err
	}
	in.Shard = record.Shard{}
	imp := map[string]float64{}
	err = in.Each(c.Context, []string{file}, func(r *record.Record) error {
		v, ok, err := r.Float("importance")
		if err != nil {
			return r.Errorf("importance: %v", err)
		}
		if !ok {
			return r.Errorf("no importance field")
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return r.Errorf("importance %v: want a finite number >= 0", v)
		}
		imp[r.URL()] = v
		return nil
	})
	return imp, err
}

// expandWARCs gives --warc fetch's meaning too: a directory stands for its
// .warc and .warc.gz files, and a glob (quoted, so the shell leaves it) for
// its matches, each in name order.
func expandWARCs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			var in []string
			for _, pat := range []string{"*.warc", "*.warc.gz"} {
				m, _ := filepath.Glob(filepath.Join(a, pat))
				in = append(in, m...)
			}
			if len(in) == 0 {
				return nil, fmt.Errorf("--warc %s: no .warc or .warc.gz files in the directory", a)
			}
			sort.Strings(in)
			out = append(out, in...)
			continue
		}
		if strings.ContainsAny(a, "*?[") {
			m, err := filepath.Glob(a)
			if err != nil {
				return nil, clikit.Usagef("--warc %s: %v", a, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("--warc %s: no file matches", a)
			}
			out = append(out, m...) // Glob sorts
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

func build(c *cli.Context) error {
	htmlDir, warcs := c.String("html-dir"), c.StringSlice("warc")
	files := c.Args().Slice()
	switch {
	case len(warcs) > 0 && len(files) > 0 && strings.Contains(files[0], ".warc"):
		return clikit.Usagef("--warc takes one FILE, DIR or quoted glob (%s is not a records file): --warc 'crawl/*.warc.gz' or --warc crawl", files[0])
	case htmlDir != "" && (len(warcs) > 0 || len(files) > 0), len(warcs) > 0 && len(files) > 0:
		return clikit.Usagef("give one input: RECORDS, --warc or --html-dir")
	case htmlDir != "" && c.String("base-url") == "":
		return clikit.Usagef("--html-dir needs --base-url")
	}
	warcs, err := expandWARCs(warcs)
	if err != nil {
		return err
	}
	opts, err := builderOptions(c)
	if err != nil || c.Bool("check") {
		return err
	}
	env := clikit.EnvOf(c)
	start := time.Now()
	b, err := barrel.NewBuilder(c.String("index"), opts)
	if errors.Is(err, barrel.ErrBatchApplied) {
		fmt.Fprintf(env.Stderr, "barrel: %s: batch %s already applied; nothing to do\n", c.String("index"), opts.Batch)
		return nil
	}
	if err != nil {
		return err
	}
	defer b.Close()
	skipped := 0
	switch {
	case htmlDir != "":
		hf, err := barrel.HTMLFiles(htmlDir, c.String("base-url"))
		if err != nil {
			return err
		}
		if err := b.AddHTMLFiles(c.Context, hf); err != nil {
			return err
		}
	case len(warcs) > 0:
		for _, w := range warcs {
			err := barrel.EachWARCPage(w, func(pg barrel.Page) error {
				if err := c.Context.Err(); err != nil {
					return err
				}
				if err := b.AddPage(pg); err != nil {
					fmt.Fprintf(env.Stderr, "barrel: %s: %v\n", w, err)
					skipped++
				}
				return nil
			}, func(off int64, err error) {
				skipped++
				// A damaged record is passed over, with the records after
				// it still indexed: say where it was.
				var se *warc.SkipError
				if errors.As(err, &se) {
					fmt.Fprintf(env.Stderr, "barrel: %s: offset %d: skipped: %v\n", w, off, err)
				}
			})
			if err != nil {
				return err
			}
		}
	default:
		if err := buildFromRecords(c, b, files, &skipped); err != nil {
			return err
		}
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	idx, err := barrel.Open(c.String("index"))
	if err != nil {
		return err
	}
	defer idx.Close()
	m := idx.Manifest()
	s := b.Stats
	waiting := ""
	if s.Waiting > 0 {
		waiting = fmt.Sprintf(" (%d pages wait for more anchors)", s.Waiting)
	}
	fmt.Fprintf(env.Stderr, "barrel: batch %d: %d added, %d re-indexed, %d unchanged, %d skipped, %d noindex, %d folded, %d anchors%s; "+
		"%d pages, %d docIDs, %d words, %d segments%s%s, %.1fs\n", m.Batches, s.Added, s.Reindexed, s.Unchanged, skipped, s.NoIndex, s.Folded, s.Anchors, waiting,
		m.Fetched, m.Docs, idx.Words(), s.Segments, map[bool]string{true: fmt.Sprintf(" (%d merged)", s.Merged)}[s.Merged > 0],
		map[bool]string{true: ", ranked"}[s.Ranked], time.Since(start).Seconds())
	return nil
}

func pagerankCommand() *cli.Command {
	return &cli.Command{
		Name:      "pagerank",
		Usage:     "recompute the ranks of every document now",
		UsageText: "barrel pagerank --index DIR [--importance FILE]",
		Description: `Recomputes PageRank over every live link of the index (or, with
--importance, takes opic's importance field) and commits the new ranks,
outside any batch: for a crawl loop that builds with a large
--pagerank-every and ranks on its own schedule.

Example:
   $ barrel pagerank --index idx
   barrel: ranked 4707 docIDs (pagerank)`,
		Flags: []cli.Flag{indexFlag,
			&cli.StringFlag{Name: "importance", Usage: "rank by the importance field of the records in `FILE` instead of PageRank"},
			&cli.IntFlag{Name: "sort-memory", Value: 64, Usage: "memory bound of one sorter basket, in `MB`"},
		},
		Action: func(c *cli.Context) error {
			opts, err := builderOptions(c)
			if err != nil {
				return err
			}
			if _, err := barrel.RankIndex(c.String("index"), opts); err != nil {
				return err
			}
			return reportIndex(c, "ranked %d docIDs (%s)", func(m barrel.Manifest) []any { return []any{m.Docs, m.RankSource} })
		},
	}
}

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge every segment into one",
		UsageText: "barrel merge --index DIR",
		Description: `Merges every segment of the index into one, dropping the postings of
deleted (re-indexed) documents, as a build's merge policy does for
segments of one size class. Searches answer the same before and after.

Example:
   $ barrel merge --index idx
   barrel: 1 segment, 4707 docIDs`,
		Flags: []cli.Flag{indexFlag,
			&cli.IntFlag{Name: "sort-memory", Value: 64, Usage: "memory bound of one sorter basket, in `MB`"},
		},
		Action: func(c *cli.Context) error {
			opts, err := builderOptions(c)
			if err != nil {
				return err
			}
			if _, err := barrel.ForceMerge(c.String("index"), opts); err != nil {
				return err
			}
			return reportIndex(c, "%d segment(s), %d docIDs", func(m barrel.Manifest) []any { return []any{len(m.Segments), m.Docs} })
		},
	}
}

// reportIndex prints a line about the committed index on stderr.
func reportIndex(c *cli.Context, format string, args func(barrel.Manifest) []any) error {
	idx, err := barrel.Open(c.String("index"))
	if err != nil {
		return err
	}
	defer idx.Close()
	fmt.Fprintf(clikit.EnvOf(c).Stderr, "barrel: "+format+"\n", args(idx.Manifest())...)
	return nil
}

// buildFromRecords indexes the pages named by fetch records.
func buildFromRecords(c *cli.Context, b *barrel.Builder, files []string, skipped *int) error {
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	warcDir := c.String("warc-dir")
	roots := warcRoots(warcDir, files)
	bar := clikit.Progress(c, clikit.InputSize(files), "barrel build", true)
	defer bar.Finish()
	clikit.TrackInput(in, bar)
	return in.Each(c.Context, files, func(r *record.Record) error {
		// No status: no response (a URL not fetched keeps the fields it
		// was given, recrawl next's capture among them).
		if st, ok, _ := r.Float("status"); !ok || st != 200 {
			*skipped++
			return nil
		}
		// A revisit has no payload: its page is the capture it refers
		// to, indexed when that was fetched.
		if t, _ := r.String("warc_type"); t == warc.TypeRevisit {
			*skipped++
			return nil
		}
		if ct, ok := r.String("content_type"); ok && ct != "" && !strings.Contains(strings.ToLower(ct), "html") {
			*skipped++
			return nil
		}
		wf, ok := r.String("warc_file")
		if !ok || wf == "" {
			*skipped++
			return nil
		}
		off, ok, err := r.Float("warc_offset")
		if err != nil || !ok || off < 0 || off != math.Trunc(off) {
			return r.Errorf("bad or missing warc_offset")
		}
		// A page fetch rendered is indexed as the browser built it: the
		// conversion record of its DOM (fetch --render).
		rendered := false
		if roff, ok, err := r.Float("render_warc_offset"); err == nil && ok && roff >= 0 && roff == math.Trunc(roff) {
			if rf, ok := r.String("render_warc_file"); ok && rf != "" {
				wf = rf
			}
			off, rendered = roff, true
		}
		path := resolveWARC(wf, warcDir, in, files)
		if !underAny(path, roots) {
			return r.Errorf("warc_file %q is outside the WARC directories (%s): refused; --warc-dir names the one to read", wf, strings.Join(roots, ", "))
		}
		pg, err := barrel.WARCPageAt(path, int64(off))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return r.Errorf("WARC file %s: %v", wf, err)
			}
			if errors.Is(err, warc.ErrFormat) {
				// The reader's message quotes the bytes it found: a
				// file's content is not echoed.
				return r.Errorf("%s@%d: not a readable WARC record (a damaged record, or not a WARC file)", wf, int64(off))
			}
			return r.Errorf("%s@%d: %v", wf, int64(off), err)
		}
		if fu, ok := r.String("final_url"); ok && fu != "" {
			pg.URL = fu
		} else if r.URL() != "" {
			pg.URL = r.URL()
		}
		// fetch's decisions win over what the page says of itself.
		pg.Charset, _ = r.String("charset")
		if rendered {
			pg.Charset = "utf-8" // the DOM as serialised
		}
		pg.Canonical, _ = r.String("canonical")
		if r.Has("robots") && !r.IsNull("robots") {
			pg.Robots = []string{}
			if _, err := r.Decode("robots", &pg.Robots); err != nil {
				return r.Errorf("robots: %v", err)
			}
		}
		if err := b.AddPage(pg); err != nil {
			return r.Errorf("%v", err)
		}
		return nil
	})
}

// warcRoots are the directories barrel build reads WARC files under:
// --warc-dir, or else the records files' directories and the current one,
// where resolveWARC looks.
func warcRoots(warcDir string, files []string) []string {
	dirs := []string{warcDir}
	if warcDir == "" {
		dirs = []string{"."}
		for _, f := range files {
			if f != "-" && !record.IsURLArg(f) {
				dirs = append(dirs, filepath.Dir(f))
			}
		}
	}
	var roots []string
	for _, d := range dirs {
		if r := realPath(d); !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return roots
}

// realPath is path made absolute, its symbolic links resolved as far as
// they exist.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// underAny reports whether path, its links resolved, lies under one of
// roots: a record's warc_file cannot make barrel read another file.
func underAny(path string, roots []string) bool {
	p := realPath(path)
	for _, root := range roots {
		rel, err := filepath.Rel(root, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

func resolveWARC(name, warcDir string, in *record.Input, files []string) string {
	if filepath.IsAbs(name) {
		return name
	}
	if warcDir != "" {
		return filepath.Join(warcDir, name)
	}
	if _, err := os.Stat(name); err == nil {
		return name
	}
	for _, f := range files {
		if f == "-" {
			continue
		}
		p := filepath.Join(filepath.Dir(f), name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return name
}

func rebuildCommand() *cli.Command {
	return &cli.Command{
		Name:      "rebuild",
		Usage:     "rebuild every index structure from the repository alone",
		UsageText: "barrel rebuild --index DIR [--importance FILE] [--codec s2|zlib]",
		Description: `Re-indexes the latest stored version of every page in the repository into a
new index beside DIR, which then replaces it: the document index, URL file,
lexicon, anchors, PageRank and barrels are all rebuilt, the repository is
compacted and docIDs are renumbered. Use it after changing barrel's
version, to recover from a damaged index file, or to change the
repository's codec (--codec; the rebuilt index is S2 unless given zlib).

Example:
   $ barrel rebuild --index idx
   barrel: rebuilt 530 pages from the repository`,
		Flags: []cli.Flag{indexFlag,
			&cli.StringFlag{Name: "importance", Usage: "rank by the importance field of the records in `FILE` instead of PageRank"},
			&cli.IntFlag{Name: "sort-memory", Value: 64, Usage: "memory bound of one sorter basket, in `MB`"},
			&cli.StringFlag{Name: "codec", Usage: "compress the rebuilt repository with `CODEC`: s2 (the default) or zlib (the paper's)"},
			clikit.StrictFlag,
		},
		Action: func(c *cli.Context) error {
			opts, err := builderOptions(c)
			if err != nil {
				return err
			}
			s, err := barrel.Rebuild(c.Context, filepath.Clean(c.String("index")), opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(clikit.EnvOf(c).Stderr, "barrel: rebuilt %d pages from the repository\n", s.Added)
			return nil
		},
	}
}

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:  "search",
		Usage: "rank the pages holding the words of a query, or of each query of a batch",
		UsageText: "barrel search --index DIR [--n 10] [--offset 0] [--model FILE] [--explain] QUERY...\n" +
			"   barrel search --index DIR [--n 10] [--queries FILE] [--strict] [--timing] < queries.txt",
		Description: `Analyses the query as the pages were analysed (case folding, ё as е,
Russian and English stemming, identifiers whole and split); every page
holding one of its words (stop words are optional) is a match, scored by
all its hits in the full barrels, stopping after 40,000 matches. Pages
holding more of the query's words rank first (coordination), then by
score: type-weights with BM25-style saturation and length normalisation,
the proximity of all the words (the smallest window holding them), a
title match, the title's lead and whether the page defines all the
query's words (the leading text of its <dt> entries); PageRank then lifts that text score by
at most a quarter (a prior: it orders pages of similar evidence, and
cannot carry a weak match over a strong one). --model ranks with weights
learnt by barrel train instead. Prints one NDJSON hit per result: doc_id, url,
title, score and a snippet with the query words marked <b>so</b>.
--explain adds the score's parts. A word not in the lexicon matches
nothing (reported on stderr); the other words still search. --offset N
skips the first N results (the ranking does not depend on it).

The query syntax: "exact phrase" (the words in a row, in the text, the
title, the URL or one page's anchors), -word or -"phrase" (pages holding
it are left out), site:host (pages of that host or its subdomains), and
a OR b (either word satisfies the query's coordination). A malformed
query (an unbalanced quote, an OR with no word on a side, only excluded
words) is an error, exit 2; in a batch, a note naming the line. Quote a
query holding -word, or end the flags with --, so that -word is not read
as a flag: barrel search --index idx -- json -pickle.

With no QUERY, runs a batch: one query per line of standard input (or of
--queries FILE), the index opened once. Each hit is one NDJSON line as
above, led by query_line (the query's line number), query (as searched) and
position (1 for the best hit), so the hits pipe into fetch as they are and
jq groups them by query_line. A query with no hits writes no line. A bad
line (empty, only punctuation, invalid UTF-8, more than 32 terms or 1024
bytes) is noted on stderr as "barrel: line N: what" and searched as far as
it can be (invalid bytes replaced, the query clipped); --strict stops at
the first. --timing prints the per-query latency (p50, p99, max; wall time and
the CPU time of the thread answering) on stderr at the end.

Example:
   $ barrel search --index idx --n 2 'json encoder'
   {"doc_id":307,"url":"http://docs.test/library/json.html","title":"json — JSON encoder and decoder — ...",...}
   {"doc_id":525,"url":"http://docs.test/whatsnew/3.6.html",...}
   $ barrel search --index idx --n 10 --offset 10 json          # the second page
   $ barrel search --index idx '"json encoder" -pickle site:docs.test'
   $ printf 'json encoder\n?!\nmarshal\n' > queries.txt
   $ barrel search --index idx --n 2 --timing < queries.txt
   {"query_line":1,"query":"json encoder","position":1,"doc_id":307,"url":"http://docs.test/library/json.html",...}
   {"query_line":1,"query":"json encoder","position":2,"doc_id":525,"url":"http://docs.test/whatsnew/3.6.html",...}
   barrel: line 2: no words, only punctuation or symbols
   {"query_line":3,"query":"marshal","position":1,"doc_id":319,"url":"http://docs.test/library/marshal.html",...}
   {"query_line":3,"query":"marshal","position":2,"doc_id":344,"url":"http://docs.test/library/pickle.html",...}
   barrel: 3 queries (1 bad), per query p50 469.084ms p99 2868.558ms max 2868.558ms; CPU time p50 18.418ms ...
   $ barrel search --index idx < queries.txt | jq -s 'group_by(.query_line)'  # one array per query
   $ barrel search --index idx --queries queries.txt | fetch --warc again/   # re-fetch every hit`,
		Flags: []cli.Flag{indexFlag,
			&cli.IntFlag{Name: "n", Value: 10, Usage: "number of results (per query)"},
			&cli.IntFlag{Name: "offset", Usage: "skip the first `N` results: --offset 10 --n 10 is the second page"},
			modelFlag,
			&cli.BoolFlag{Name: "explain", Usage: "add the parts of each score (hit counts by type, words matched, window, IR, PageRank)"},
			&cli.BoolFlag{Name: "no-snippets", Usage: "skip snippets (faster: no repository reads)"},
			&cli.StringFlag{Name: "queries", Usage: "with no QUERY, read the batch's queries from `FILE` instead of stdin"},
			&cli.BoolFlag{Name: "timing", Usage: "in a batch, print the per-query latency (p50, p99, max; wall and CPU time) on stderr at the end"},
			clikit.StrictFlag,
		},
		Action: search,
	}
}

func searchOptions(c *cli.Context) (barrel.SearchOptions, error) {
	if c.Int("n") < 1 {
		return barrel.SearchOptions{}, clikit.Usagef("--n %d: want at least 1", c.Int("n"))
	}
	if c.Int("offset") < 0 {
		return barrel.SearchOptions{}, clikit.Usagef("--offset %d: want 0 or more", c.Int("offset"))
	}
	model, err := readModel(c)
	if err != nil {
		return barrel.SearchOptions{}, err
	}
	return barrel.SearchOptions{N: c.Int("n"), Offset: c.Int("offset"), Model: model, Explain: c.Bool("explain"), NoSnippets: c.Bool("no-snippets")}, nil
}

func search(c *cli.Context) error {
	opt, err := searchOptions(c)
	if err != nil {
		return err
	}
	q := strings.Join(c.Args().Slice(), " ")
	if c.NArg() == 0 {
		return searchBatch(c, opt)
	}
	if c.IsSet("queries") {
		return clikit.Usagef("give a QUERY or --queries FILE, not both")
	}
	if strings.TrimSpace(q) == "" {
		return clikit.Usagef("search needs a QUERY")
	}
	idx, err := barrel.Open(c.String("index"))
	if err != nil {
		return err
	}
	defer idx.Close()
	resp, err := idx.Search(q, opt)
	var qe *barrel.QueryError
	if errors.As(err, &qe) {
		return clikit.Usagef("%v (the syntax: %s)", qe, barrel.QuerySyntaxHelp)
	}
	if err != nil {
		return err
	}
	env := clikit.EnvOf(c)
	if len(resp.Unknown) > 0 {
		fmt.Fprintf(env.Stderr, "barrel: not in the index: %s\n", strings.Join(resp.Unknown, ", "))
	}
	out := clikit.Output(c)
	for _, r := range resp.Results {
		if err := out.AppendLine(func(b []byte) []byte { return appendHit(append(b, '{'), r, opt) }); err != nil {
			return err
		}
	}
	if c.Bool("explain") {
		fmt.Fprintf(env.Stderr, "barrel: %d matches in the %s barrels%s\n", resp.Matches, resp.Barrels,
			map[bool]string{true: " (stopped at 40000)", false: ""}[resp.Stopped])
	}
	return nil
}

// appendHit appends a result's fields and the closing brace to b, which
// holds the record's opening and any fields before them.
func appendHit(b []byte, r barrel.Result, opt barrel.SearchOptions) []byte {
	b = append(b, `"doc_id":`...)
	b = fmt.Appendf(b, "%d", r.Doc)
	b = append(b, `,"url":`...)
	b = record.AppendString(b, r.URL)
	b = append(b, `,"title":`...)
	b = record.AppendString(b, r.Title)
	b = append(b, `,"score":`...)
	b = record.AppendFloat(b, math.Round(r.Score*1e4)/1e4)
	if !opt.NoSnippets {
		b = append(b, `,"snippet":`...)
		b = record.AppendString(b, r.Snippet)
	}
	if r.Explain != nil {
		ex, _ := json.Marshal(r.Explain)
		b = append(b, `,"explain":`...)
		b = append(b, ex...)
	}
	return append(b, '}')
}

func getCommand() *cli.Command {
	return &cli.Command{
		Name:      "get",
		Usage:     "print a stored page",
		UsageText: "barrel get --index DIR [--info|--text] [--archived] URL|DOCID",
		Description: `Prints the page stored in the repository for a URL or docID: its HTML as
indexed, decoded to UTF-8 whatever charset it was served in. --text prints
its title and visible text instead (one line each). --info prints its
document index entry as an NDJSON record: "stored" says whether the page is
in the repository (false: only seen as a link target), and a stored page
has "status":200, as in fetch records (barrel keeps only 200 responses),
and "robots", the directives beyond indexing it gave (noarchive, nosnippet).
A page that said noarchive is not shown (exit 1) unless --archived is given:
its copy is kept for the index, not for showing.

Example:
   $ barrel get --index idx http://docs.test/library/json.html | head -3
   $ barrel get --index idx --text http://news.test/ru/
   Новости дня
   Правительство утвердило бюджет на следующий год. ...
   $ barrel get --index idx --info 307
   {"url":"http://docs.test/library/json.html","doc_id":307,"title":"json — ...","stored":true,"status":200,...}`,
		Flags: []cli.Flag{indexFlag,
			&cli.BoolFlag{Name: "info", Usage: "print the document index entry as JSON"},
			&cli.BoolFlag{Name: "text", Usage: "print the title and visible text, in UTF-8"},
			&cli.BoolFlag{Name: "archived", Usage: "show the stored copy of a page that said noarchive"},
		},
		Action: get,
	}
}

func get(c *cli.Context) error {
	if c.NArg() != 1 {
		return clikit.Usagef("get needs one URL or DOCID")
	}
	arg := c.Args().First()
	idx, err := barrel.Open(c.String("index"))
	if err != nil {
		return err
	}
	defer idx.Close()
	doc, ok := barrel.ParseDocID(arg)
	if !ok {
		d, found, err := idx.Lookup(arg)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%s: not in the index", arg)
		}
		doc = d
	} else if int(doc) >= idx.Docs() {
		return fmt.Errorf("docID %d: not in the index (%d docIDs)", doc, idx.Docs())
	}
	env := clikit.EnvOf(c)
	if c.Bool("info") {
		e, _ := idx.Doc(doc)
		u, title, err := idx.Info(doc)
		if err != nil {
			return err
		}
		rec := record.New(u)
		rec.SetInt("doc_id", int64(doc))
		rec.SetString("title", title)
		// status is the HTTP status as in fetch records, so only a stored page has one.
		rec.SetBool("stored", e.Status == barrel.StatusFetched)
		if e.Status == barrel.StatusFetched {
			rec.SetInt("status", http.StatusOK)
		}
		if robots := entryRobots(e); len(robots) > 0 {
			rec.SetStrings("robots", robots)
		}
		rec.SetFloat("rank", float64(e.Rank))
		rec.SetInt("words", int64(e.Words))
		rec.SetString("checksum", fmt.Sprintf("crc32c:%08x", e.Checksum))
		return clikit.Output(c).Write(rec)
	}
	if e, _ := idx.Doc(doc); e.Flags&barrel.FlagNoArchive != 0 && !c.Bool("archived") {
		return fmt.Errorf("%s: the page said noarchive, so its stored copy is not shown (--archived shows it, --info its entry)", arg)
	}
	u, body, err := idx.Page(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", arg, err)
	}
	if c.Bool("text") {
		body = barrel.PageText(u, body)
	}
	_, err = env.Stdout.Write(body)
	return err
}

func statsCommand() *cli.Command {
	return &cli.Command{
		Name:      "stats",
		Usage:     "sizes, counts and barrels of an index",
		UsageText: "barrel stats --index DIR [--barrels] [--segments] [--verify]",
		Description: `Prints one JSON object: documents, words, batches, the last batch ID, the
number of segments, the size of each part of the index, and with --barrels
the words, postings and bytes of each of the 64 barrels, with --segments
each segment's documents, deleted documents and batches. --verify reads
every file and checks every checksum, record and posting list first
(exit 1 on damage).

Example:
   $ barrel stats --index idx
   {"anchors_bytes":6126449,"batches":1,"bytes":23787576,"doc_ids":4707,...,"pages":530,...,"words":26583}`,
		Flags: []cli.Flag{indexFlag,
			&cli.BoolFlag{Name: "barrels", Usage: "add per-barrel figures"},
			&cli.BoolFlag{Name: "verify", Usage: "check every file and list before printing"},
			&cli.BoolFlag{Name: "segments", Usage: "add each segment's figures"},
		},
		Action: stats,
	}
}

func stats(c *cli.Context) error {
	idx, err := barrel.Open(c.String("index"))
	if err != nil {
		return err
	}
	defer idx.Close()
	if c.Bool("verify") {
		if err := idx.Verify(); err != nil {
			return err
		}
	}
	m := idx.Manifest()
	var short, full, postings int64
	bs := idx.Barrels()
	for _, b := range bs {
		short += b.ShortBytes
		full += b.FullBytes
		postings += b.Postings
	}
	// The document index is the segments' document tables (and the ranks);
	// the URL map its runs; the lexicon the words file and its runs.
	var urlBytes int64
	docBytes, lexBytes := idx.DocIndexBytes(), m.Words
	for name, f := range m.Files {
		switch {
		case strings.HasPrefix(name, "lexicon-") || strings.HasPrefix(name, "df-"):
			lexBytes += f.Size
		case strings.HasPrefix(name, "urls-"):
			urlBytes += f.Size
		}
	}
	out := map[string]any{
		"generation": m.Generation, "batches": m.Batches, "pages": m.Fetched, "doc_ids": m.Docs,
		"words": idx.Words(), "postings": postings, "bytes": idx.Size(),
		"repository_codec": m.RepoCodec, "repository_bytes": m.RepositoryBytes(), "docinfo_bytes": m.DocInfoBytes(), "anchors_bytes": m.AnchorsBytes(), "text_bytes": m.TextBytes(),
		"short_barrel_bytes": short, "full_barrel_bytes": full,
		"lexicon_bytes": lexBytes, "docindex_bytes": docBytes,
		"urls_bytes": urlBytes, "segment_count": len(m.Segments), "last_batch": m.LastBatch,
		"rank_source": m.RankSource, "ranked_at_batch": m.RankedAt,
		"noindex_skipped": m.NoIndex, "canonical_folded": m.Folded, "charset_guessed": m.Guessed,
	}
	if c.Bool("segments") {
		out["segments"] = idx.Segments()
	}
	if c.Bool("verify") {
		out["verified"] = true
	}
	if c.Bool("barrels") {
		out["barrels"] = bs
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return clikit.Output(c).WriteLine(b)
}

// entryRobots lists the directives a document entry keeps.
func entryRobots(e barrel.DocEntry) []string {
	var out []string
	if e.Flags&barrel.FlagNoArchive != 0 {
		out = append(out, directives.NoArchive)
	}
	if e.Flags&barrel.FlagNoSnippet != 0 {
		out = append(out, directives.NoSnippet)
	}
	return out
}
