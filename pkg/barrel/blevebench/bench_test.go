package blevebench

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/blevesearch/bleve/v2/search/query"
	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

var (
	benchDocs     = flag.Int("barrel.docs", 2000, "synthetic pages in the bleve comparison")
	benchQueries  = flag.Int("barrel.queries", 2000, "queries timed in the bleve comparison")
	benchCodec    = flag.String("barrel.codec", "", "barrel's repository codec: s2 (the default) or zlib (the paper's)")
	benchBatches  = flag.Int("barrel.batches", 1, "batches barrel indexes the pages in, one after the other with the default merge policy (1: one segment)")
	benchMerge    = flag.Int("barrel.mergefactor", 0, "barrel's merge factor for -barrel.batches (0: the default); a factor above the batches keeps one segment per batch")
	benchDeletes  = flag.Int("barrel.deletespct", 0, "barrel's deleted share (percent) before merges reclaim it, for -barrel.batches (0: the default)")
	benchMaxDocs  = flag.Int("barrel.maxmergedocs", 0, "barrel's MaxMergeDocs for -barrel.batches (0: the default): the size cap scaled down to the pages, for the segment count of a larger index")
	benchPasses   = flag.Int("barrel.passes", 1, "passes of barrel over the queries on the open index: the first is timed as always (each query's first time, as a barrel search command meets it), the later ones are printed apart (as barrel serve and a batch of queries meet a query again)")
	benchOpened   = flag.Int("barrel.opened", 0, "then time the first N queries each on its index opened for it and closed after, for both engines, as one search command costs (process CPU time: opening starts goroutines)")
	benchCommands = flag.Int("barrel.commands", 0, "then time the first N queries each as its own command: this test binary run again, opening the index, running the query, closing the index and exiting, for both engines and for an empty command, whose CPU time is taken off")
	benchSlowest  = flag.Int("barrel.slowest", 0, "then print the N queries of the highest CPU time in barrel's first pass, each with its CPU time in barrel and in bleve: what the p99 is made of")
	benchProfile  = flag.String("barrel.cpuprofile", "", "write a CPU profile of barrel's queries to this file (run again after the timed runs, on the index opened afresh, until the profile holds 5 s)")
	buildProfile  = flag.String("barrel.buildcpuprofile", "", "write a CPU profile of barrel's build (the timed one) to this file")
	bleveBatch    = flag.Int("bleve.batchdocs", 1000, "pages in each of bleve's batches")
	bleveReindex  = flag.Bool("bleve.reindex", false, "with -barrel.batches: bleve indexes the pages in barrel's batches, and in each batch indexes again the earlier pages the batch's pages link to, as barrel re-indexes them for their new anchors (bleve replaces each: a deletion in its older segments), so that both indexes carry deleted documents")
	bleveForce    = flag.Bool("bleve.forcemerge", false, "merge bleve's index into one segment (scorch's ForceMerge) once it is built, as barrel's one batch is one segment")
	bleveFill     = flag.Bool("bleve.fill", false, "bleve fills its top 10 as barrel does: where its AND finds fewer than 10 pages, the pages holding all the words but one follow, then all but two (a disjunction of the words with its minimum), as barrel ranks the pages holding most of the words first; timed with the AND")
	bleveMaxDocs  = flag.Int64("bleve.maxsegmentdocs", 0, "bleve's MaxSegmentSize, the documents of a segment its merges make at most (0: bleve's default, 5,000,000): the size cap scaled down to the pages, as -barrel.maxmergedocs for barrel, for bleve's segment count of a larger index")
)

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 { // none timed (-barrel.snippetqueries=0)
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// threadCPU returns the CPU time of the calling OS thread
// (CLOCK_THREAD_CPUTIME_ID). Query latencies are reported both as wall time
// and as this CPU time: on a machine shared with other jobs the wall time
// also counts the time the thread waited for a core.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// timeQuery runs fn on a locked thread and returns its wall and CPU time.
func timeQuery(fn func()) (wall, cpu time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, t0 := threadCPU(), time.Now()
	fn()
	return time.Since(t0), threadCPU() - c0
}

// processCPU returns the CPU time of the whole process, all threads (user
// and system): the work an indexer did, whatever else the machine ran.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkVsBleve indexes the same synthetic pages with barrel and with
// bleve (v2, default mapping, batches of 1000) in one run, and times the
// same queries on both. bleve is given the pages' text already extracted
// (untimed); barrel parses and stores the HTML. Run with
// -benchtime=1x -barrel.docs=100000 (scripts/barrel-bench.sh).
func BenchmarkVsBleve(b *testing.B) {
	site := synth.New(*benchDocs, 50000, 1)
	pages := make([][]byte, site.N)
	var htmlBytes int64
	type bdoc struct{ Title, Body string }
	bdocs := make([]bdoc, site.N)
	links := make([][]int, site.N) // the pages each page links to
	byURL := make(map[string]int, site.N)
	for i := range site.N {
		byURL[site.URL(i)] = i
	}
	var d htmldoc.Doc
	for i := range pages {
		pages[i] = site.Page(i)
		htmlBytes += int64(len(pages[i]))
		u, _ := url.Parse(site.URL(i))
		d.Parse(pages[i], u)
		bdocs[i] = bdoc{Title: d.Title, Body: string(d.Text)}
		for _, l := range d.Links {
			if j, ok := byURL[l.URL]; ok {
				links[i] = append(links[i], j)
			}
		}
	}
	queries := site.Queries(*benchQueries)
	for range b.N {
		root := b.TempDir()
		// barrel
		bdir := filepath.Join(root, "barrel")
		runtime.GC()
		stopBuildProfile := func() {}
		if *buildProfile != "" {
			stopBuildProfile = startProfile(b, *buildProfile)
		}
		c0, t0 := processCPU(), time.Now()
		batches := max(1, min(*benchBatches, len(pages)))
		var segments, barrelDeleted int
		for k := range batches {
			bl, err := barrel.NewBuilder(bdir, barrel.Options{Codec: *benchCodec, MergeFactor: *benchMerge, DeletesPct: *benchDeletes, MaxMergeDocs: *benchMaxDocs})
			if err != nil {
				b.Fatal(err)
			}
			for i := k * len(pages) / batches; i < (k+1)*len(pages)/batches; i++ {
				if err := bl.Add(site.URL(i), pages[i]); err != nil {
					b.Fatal(err)
				}
			}
			if err := bl.Commit(); err != nil {
				b.Fatal(err)
			}
			bl.Close()
			st := bl.Stats
			segments = st.Segments
			barrelDeleted += st.Deleted
			if batches == 1 {
				b.Logf("barrel commit: wait %v anchors %v sort %v finish %v", st.WaitTime, st.AnchorTime, st.SortTime, st.FinishTime)
			}
		}
		barrelTime, barrelCPU := time.Since(t0), processCPU()-c0
		stopBuildProfile()
		barrelSize := dirSize(bdir)

		// bleve
		vdir := filepath.Join(root, "bleve")
		runtime.GC()
		c0, t0 = processCPU(), time.Now()
		vi, err := bleve.NewUsing(vdir, bleve.NewIndexMapping(), scorch.Name, scorch.Name, bleveConfig())
		if err != nil {
			b.Fatal(err)
		}
		batch := vi.NewBatch()
		bleveAgain := 0 // pages indexed again (-bleve.reindex)
		if *bleveReindex && batches > 1 {
			for k := range batches {
				lo, hi := k*len(pages)/batches, (k+1)*len(pages)/batches
				again := map[int]bool{}
				for i := lo; i < hi; i++ {
					if err := batch.Index(site.URL(i), bdocs[i]); err != nil {
						b.Fatal(err)
					}
					for _, j := range links[i] {
						if j < lo && !again[j] {
							again[j] = true
							if err := batch.Index(site.URL(j), bdocs[j]); err != nil {
								b.Fatal(err)
							}
						}
					}
				}
				bleveAgain += len(again)
				if err := vi.Batch(batch); err != nil {
					b.Fatal(err)
				}
				batch.Reset()
			}
		} else {
			for i := range bdocs {
				if err := batch.Index(site.URL(i), bdocs[i]); err != nil {
					b.Fatal(err)
				}
				if batch.Size() >= max(1, *bleveBatch) {
					if err := vi.Batch(batch); err != nil {
						b.Fatal(err)
					}
					batch.Reset()
				}
			}
		}
		if err := vi.Batch(batch); err != nil {
			b.Fatal(err)
		}
		if *bleveForce {
			adv, err := vi.Advanced()
			if err != nil {
				b.Fatal(err)
			}
			sc, ok := adv.(*scorch.Scorch)
			if !ok {
				b.Fatalf("bleve's index is a %T, not scorch", adv)
			}
			if err := sc.ForceMerge(context.Background(), nil); err != nil { // nil: into one segment
				b.Fatal(err)
			}
		}
		if err := vi.Close(); err != nil { // waits for merges: the index is complete on disk
			b.Fatal(err)
		}
		bleveTime, bleveCPU := time.Since(t0), processCPU()-c0
		bleveSize := dirSize(vdir)

		// queries
		idx, err := barrel.Open(bdir)
		if err != nil {
			b.Fatal(err)
		}
		inSegs, deletedNow := 0, 0 // the superseded versions the segments still hold
		for _, sg := range idx.Segments() {
			inSegs += sg.Docs
			deletedNow += sg.Deleted
		}
		lat := make([]time.Duration, len(queries))
		cpu := make([]time.Duration, len(queries))
		latSnip := make([]time.Duration, len(queries))
		found, full := 0, 0
		for i, q := range queries {
			var r *barrel.Response
			var err error
			lat[i], cpu[i] = timeQuery(func() { r, err = idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true, Literal: true}) })
			if err != nil {
				b.Fatal(err)
			}
			if len(r.Results) > 0 {
				found++
			}
			if len(r.Results) == 10 {
				full++
			}
			t := time.Now()
			if _, err := idx.Search(q, barrel.SearchOptions{N: 10, Literal: true}); err != nil {
				b.Fatal(err)
			}
			latSnip[i] = time.Since(t)
		}
		var passes strings.Builder
		for k := 2; k <= *benchPasses; k++ {
			pcpu := make([]time.Duration, len(queries))
			for i, q := range queries {
				var err error
				_, pcpu[i] = timeQuery(func() { _, err = idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true, Literal: true}) })
				if err != nil {
					b.Fatal(err)
				}
			}
			fmt.Fprintf(&passes, "barrel's pass %d on the open index, CPU time (thread): p50 %v p99 %v\n", k, percentile(pcpu, 0.5), percentile(pcpu, 0.99))
		}
		idx.Close()
		if *benchProfile != "" {
			pidx, err := barrel.Open(bdir) // opened afresh: its caches as cold as the timed run's
			if err != nil {
				b.Fatal(err)
			}
			profileQueries(b, *benchProfile, pidx, queries)
			pidx.Close()
		}
		vi, err = bleve.Open(vdir)
		if err != nil {
			b.Fatal(err)
		}
		bleveSegs := bleveSegments(b, vi) // searched: the files on disk may hold merged-away ones a while
		vlat := make([]time.Duration, len(queries))
		vcpu := make([]time.Duration, len(queries))
		vfound, vfull := 0, 0
		for i, q := range queries {
			var res *bleve.SearchResult
			var err error
			vlat[i], vcpu[i] = timeQuery(func() { res, err = bleveSearch(vi, q) })
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Hits) > 0 {
				vfound++
			}
			if len(res.Hits) == 10 {
				vfull++
			}
		}
		vi.Close()
		var opened string
		if *benchOpened > 0 {
			opened = openedQueries(b, bdir, vdir, queries[:min(len(queries), *benchOpened)])
		}
		if *benchCommands > 0 {
			opened += commandQueries(b, bdir, vdir, queries[:min(len(queries), *benchCommands)])
		}

		n := float64(len(pages))
		b.ReportMetric(n/barrelTime.Seconds(), "barrel-docs/s")
		b.ReportMetric(n/bleveTime.Seconds(), "bleve-docs/s")
		b.ReportMetric(bleveTime.Seconds()/barrelTime.Seconds(), "speedup")
		b.ReportMetric(bleveCPU.Seconds()/barrelCPU.Seconds(), "cpu-speedup")
		b.ReportMetric(float64(barrelSize)/float64(bleveSize), "size-ratio")
		b.ReportMetric(float64(percentile(lat, 0.5).Microseconds()), "p50-µs")
		b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
		b.ReportMetric(float64(percentile(cpu, 0.5).Microseconds()), "cpu-p50-µs")
		b.ReportMetric(float64(percentile(cpu, 0.99).Microseconds()), "cpu-p99-µs")
		b.ReportMetric(float64(percentile(vlat, 0.5).Microseconds()), "bleve-p50-µs")
		b.ReportMetric(float64(percentile(vlat, 0.99).Microseconds()), "bleve-p99-µs")
		b.ReportMetric(float64(percentile(vcpu, 0.5).Microseconds()), "bleve-cpu-p50-µs")
		b.ReportMetric(float64(percentile(vcpu, 0.99).Microseconds()), "bleve-cpu-p99-µs")
		var sb strings.Builder
		fmt.Fprintf(&sb, "\n%d pages, %.1f MB of HTML, %d queries (barrel: %d with results, %d with 10; bleve: %d with results, %d with 10)\n", len(pages), float64(htmlBytes)/1e6, len(queries), found, full, vfound, vfull)
		if batches > 1 {
			fmt.Fprintf(&sb, "barrel's segments: %d of their %d documents deleted (%.1f%%)\n", deletedNow, inSegs, 100*float64(deletedNow)/float64(max(1, inSegs)))
		}
		if *bleveReindex && batches > 1 {
			fmt.Fprintf(&sb, "barrel: %d batches, %d segments, %d documents deleted by re-indexing; bleve: barrel's batches, %d segments, %d pages indexed again\n", batches, segments, barrelDeleted, bleveSegs, bleveAgain)
		} else {
			fmt.Fprintf(&sb, "barrel: %d batches, %d segments, %d documents deleted by re-indexing; bleve: batches of %d pages, %d segments\n", batches, segments, barrelDeleted, max(1, *bleveBatch), bleveSegs)
		}
		fmt.Fprintf(&sb, "index:   barrel %.2fs (%.0f docs/s)  bleve %.2fs (%.0f docs/s)  speedup %.2fx\n",
			barrelTime.Seconds(), n/barrelTime.Seconds(), bleveTime.Seconds(), n/bleveTime.Seconds(), bleveTime.Seconds()/barrelTime.Seconds())
		fmt.Fprintf(&sb, "index CPU time (all threads): barrel %.2fs  bleve %.2fs  ratio %.2fx\n",
			barrelCPU.Seconds(), bleveCPU.Seconds(), bleveCPU.Seconds()/barrelCPU.Seconds())
		fmt.Fprintf(&sb, "size:    barrel %.1f MB  bleve %.1f MB  ratio %.2f\n", float64(barrelSize)/1e6, float64(bleveSize)/1e6, float64(barrelSize)/float64(bleveSize))
		fmt.Fprintf(&sb, "query:   barrel p50 %v p99 %v | with snippets p50 %v p99 %v | bleve p50 %v p99 %v\n",
			percentile(lat, 0.5), percentile(lat, 0.99), percentile(latSnip, 0.5), percentile(latSnip, 0.99),
			percentile(vlat, 0.5), percentile(vlat, 0.99))
		fmt.Fprintf(&sb, "query CPU time (thread): barrel p50 %v p99 %v | bleve p50 %v p99 %v (bleve searches on several goroutines)\n",
			percentile(cpu, 0.5), percentile(cpu, 0.99), percentile(vcpu, 0.5), percentile(vcpu, 0.99))
		sb.WriteString(passes.String())
		sb.WriteString(opened)
		sb.WriteString(slowest(queries, cpu, vcpu, *benchSlowest))
		b.Log(sb.String())
		fmt.Fprint(os.Stderr, sb.String())
	}
}

// openedQueries times each query on its index opened for it and closed
// after, barrel's and bleve's alternated, in the CPU time of the process:
// what one query a command costs beside starting the program.
func openedQueries(b *testing.B, bdir, vdir string, queries []string) string {
	bcpu := make([]time.Duration, len(queries))
	vcpu := make([]time.Duration, len(queries))
	runtime.GC()
	for i, q := range queries {
		c0 := processCPU()
		idx, err := barrel.Open(bdir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true, Literal: true}); err != nil {
			b.Fatal(err)
		}
		idx.Close()
		bcpu[i] = processCPU() - c0
		c0 = processCPU()
		vi, err := bleve.Open(vdir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bleveSearch(vi, q); err != nil {
			b.Fatal(err)
		}
		if err := vi.Close(); err != nil {
			b.Fatal(err)
		}
		vcpu[i] = processCPU() - c0
	}
	return fmt.Sprintf("one query on the index opened for it, %d queries, CPU time (process): barrel p50 %v p99 %v | bleve p50 %v p99 %v\n",
		len(queries), percentile(bcpu, 0.5), percentile(bcpu, 0.99), percentile(vcpu, 0.5), percentile(vcpu, 0.99))
}

// The environment of this test binary run again as one search command
// (commandQueries): the engine (barrel, bleve, or none for the empty
// command), its index and the query.
const (
	commandEngineEnv = "BLEVEBENCH_COMMAND"
	commandDirEnv    = "BLEVEBENCH_COMMAND_INDEX"
	commandQueryEnv  = "BLEVEBENCH_COMMAND_QUERY"
)

// TestMain runs one search command, when the environment names one,
// instead of the tests and benchmarks.
func TestMain(m *testing.M) {
	if engine := os.Getenv(commandEngineEnv); engine != "" {
		if err := searchCommand(engine, os.Getenv(commandDirEnv), os.Getenv(commandQueryEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// searchCommand opens the index of engine in dir, runs query q on it and
// closes it, as one search command does.
func searchCommand(engine, dir, q string) error {
	switch engine {
	case "barrel":
		idx, err := barrel.Open(dir)
		if err != nil {
			return err
		}
		if _, err := idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true, Literal: true}); err != nil {
			return err
		}
		return idx.Close()
	case "bleve":
		vi, err := bleve.Open(dir)
		if err != nil {
			return err
		}
		if _, err := bleveSearch(vi, q); err != nil {
			return err
		}
		return vi.Close()
	case "none":
		return nil
	}
	return fmt.Errorf("%s=%s: no such engine", commandEngineEnv, engine)
}

// commandQueries times each query as its own command, a process of this
// test binary run again (searchCommand), barrel's, bleve's and an empty
// command's alternated: the CPU time of the process (user and system,
// its exit included) less the empty command's median is what the query
// costs beside starting the program. Unlike openedQueries, each command
// starts with a heap of its own, as a real one does, and no collection
// of the other engine's garbage lands in its time.
func commandQueries(b *testing.B, bdir, vdir string, queries []string) string {
	run := func(engine, dir, q string) time.Duration {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), commandEngineEnv+"="+engine, commandDirEnv+"="+dir, commandQueryEnv+"="+q)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s command for %q: %v", engine, q, err)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	bcpu := make([]time.Duration, len(queries))
	vcpu := make([]time.Duration, len(queries))
	empty := make([]time.Duration, len(queries))
	for i, q := range queries {
		bcpu[i] = run("barrel", bdir, q)
		vcpu[i] = run("bleve", vdir, q)
		empty[i] = run("none", "", "")
	}
	base := percentile(empty, 0.5)
	return fmt.Sprintf("one query a command, %d queries, each its own process, CPU time less the empty command's %v: barrel p50 %v p99 %v | bleve p50 %v p99 %v\n",
		len(queries), base, percentile(bcpu, 0.5)-base, percentile(bcpu, 0.99)-base, percentile(vcpu, 0.5)-base, percentile(vcpu, 0.99)-base)
}

// bleveSearch runs query q on bleve for the top 10: a match query with
// operator AND; with -bleve.fill, where it finds fewer than 10 pages, the
// pages holding all the words but one, then all but two, fill the rest.
func bleveSearch(vi bleve.Index, q string) (*bleve.SearchResult, error) {
	mq := bleve.NewMatchQuery(q)
	mq.SetOperator(1) // AND, as barrel
	res, err := vi.Search(bleve.NewSearchRequestOptions(mq, 10, 0, false))
	if err != nil || !*bleveFill || len(res.Hits) >= 10 {
		return res, err
	}
	var words []string
	for _, w := range strings.Fields(q) {
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	seen := map[string]bool{}
	for _, h := range res.Hits {
		seen[h.ID] = true
	}
	for need := len(words) - 1; need >= 1 && len(res.Hits) < 10; need-- {
		var each []query.Query
		for _, w := range words {
			each = append(each, bleve.NewMatchQuery(w))
		}
		dq := bleve.NewDisjunctionQuery(each...)
		dq.SetMin(float64(need))
		more, err := vi.Search(bleve.NewSearchRequestOptions(dq, 10+len(seen), 0, false))
		if err != nil {
			return nil, err
		}
		for _, h := range more.Hits {
			if !seen[h.ID] && len(res.Hits) < 10 {
				seen[h.ID] = true
				res.Hits = append(res.Hits, h)
			}
		}
	}
	return res, nil
}

// slowest lists the n queries of the highest CPU time in barrel (cpu),
// each with bleve's (vcpu).
func slowest(queries []string, cpu, vcpu []time.Duration, n int) string {
	if n <= 0 {
		return ""
	}
	ord := make([]int, len(queries))
	for i := range ord {
		ord[i] = i
	}
	slices.SortStableFunc(ord, func(x, y int) int { return cmp.Compare(cpu[y], cpu[x]) })
	var sb strings.Builder
	fmt.Fprintf(&sb, "barrel's %d slowest queries, CPU time (thread): barrel, bleve, query\n", min(n, len(ord)))
	for _, i := range ord[:min(n, len(ord))] {
		fmt.Fprintf(&sb, "  %v\t%v\t%q\n", cpu[i], vcpu[i], queries[i])
	}
	return sb.String()
}

// bleveConfig is the configuration bleve's index is created with: its
// default merge plan, with MaxSegmentSize set by -bleve.maxsegmentdocs.
// The plan is given as a map because scorch reads it through JSON, which
// refuses the options' function fields.
func bleveConfig() map[string]interface{} {
	if *bleveMaxDocs <= 0 {
		return nil
	}
	o := mergeplan.DefaultMergePlanOptions
	return map[string]interface{}{"scorchMergePlanOptions": map[string]interface{}{
		"MaxSegmentsPerTier":   o.MaxSegmentsPerTier,
		"MaxSegmentSize":       *bleveMaxDocs,
		"MaxSegmentFileSize":   o.MaxSegmentFileSize,
		"TierGrowth":           o.TierGrowth,
		"SegmentsPerMergeTask": o.SegmentsPerMergeTask,
		"FloorSegmentSize":     o.FloorSegmentSize,
		"ReclaimDeletesWeight": o.ReclaimDeletesWeight,
	}}
}

// profileFor is how long the queries run for a profile, at least: a
// profile needs a few hundred samples of each function that matters.
const profileFor = 5 * time.Second

// profileQueries profiles barrel's ranking of the queries on idx into
// path, the queries run again until the profile holds profileFor.
func profileQueries(b *testing.B, path string, idx *barrel.Index, queries []string) {
	stop := startProfile(b, path)
	defer stop()
	for start := time.Now(); time.Since(start) < profileFor; {
		for _, q := range queries {
			if _, err := idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true, Literal: true}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// startProfile starts a CPU profile into path; the function it returns
// stops it and closes the file.
func startProfile(b *testing.B, path string) func() {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// bleveSegments is the number of segments an open bleve index searches.
func bleveSegments(b *testing.B, vi bleve.Index) int {
	adv, err := vi.Advanced()
	if err != nil {
		b.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		b.Fatalf("bleve's reader is a %T, not scorch's", r)
	}
	return len(snap.Segments())
}
