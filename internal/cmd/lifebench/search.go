package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/internal/benchenv"
	"github.com/sekitei/crawlkit/internal/benchqueries"
	"github.com/sekitei/crawlkit/internal/crawlsim"
	"github.com/sekitei/crawlkit/pkg/barrel"
	"golang.org/x/sys/unix"
)

// Search as the crawl ages (-search): the same queries on each age's index
// as the loop built it (its segments, its deleted postings) and on an
// index of the same final pages built in one batch, so that what the
// segments cost a query is apart from what the pages' number costs.

// searchPages is about how many pages the queries are sampled from.
const searchPages = 2000

// searchQueries samples n queries (internal/benchqueries, seed 1) from
// about searchPages pages fetched before age, spread evenly over its turns.
func searchQueries(cfg crawlsim.Config, age, n int) []string {
	turns := min(age, 200)
	per := (searchPages + turns - 1) / turns
	var pages []benchqueries.Page
	for k := range turns {
		fs := cfg.Turn(k * age / turns)
		for j := range per {
			f := fs[j*len(fs)/per]
			title, text, _ := bytes.Cut(barrel.PageText(f.URL, f.Body()), []byte("\n"))
			pages = append(pages, benchqueries.Page{Title: string(title), Text: string(text)})
		}
	}
	return benchqueries.Sample(pages, n, 1)
}

// searchIndexMark names, in a kept one-batch index, how it was built: one
// kept under another key is built again.
const searchIndexMark = "lifebench-onebatch"

// searchOneBatch returns the one-batch index of the pages of turns 0 to
// age-1 as last fetched, kept in snaps for the next run.
func searchOneBatch(snaps string, cfg crawlsim.Config, age int) (string, error) {
	dir := filepath.Join(snaps, fmt.Sprintf("onebatch-%d-index", age))
	b, err := os.ReadFile(filepath.Join(dir, searchIndexMark))
	mark := strings.TrimSpace(string(b))
	if err == nil && mark == oneBatchKey() {
		return dir, upgradeKept(dir) // one kept before the manifest counted its pages
	}
	for f := 1; err == nil && f < barrel.Format; f++ {
		if mark == oneBatchKeyOf(f) && barrel.CommitCompletes(f) {
			// A commit writes what the build of the current format
			// would add: the same index as built again, but for the
			// layout of its older files (barrel.CommitCompletes).
			if err := upgradeKept(dir); err != nil {
				return "", err
			}
			return dir, writeFileAtomic(filepath.Join(dir, searchIndexMark), []byte(oneBatchKey()+"\n"))
		}
	}
	t0 := time.Now()
	if err := buildOneBatch(dir, cfg, age); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "lifebench: the one-batch index at %d turns for search, built in %.0f s\n", age, time.Since(t0).Seconds())
	return dir, writeFileAtomic(filepath.Join(dir, searchIndexMark), []byte(oneBatchKey()+"\n"))
}

// upgradeKept brings a kept index of an older format, or without the
// manifest's page count, to what barrel writes by a commit without pages
// (barrel.Expunge), as the crawl's next turn would, so that the search
// measured is the current barrel's.
func upgradeKept(dir string) error {
	idx, err := barrel.Open(dir)
	if err != nil {
		return err
	}
	m := idx.Manifest()
	f := m.Format
	if err := idx.Close(); err != nil || f >= barrel.Format && m.PageWords != nil {
		return err
	}
	t0 := time.Now()
	st, err := barrel.Expunge(dir, barrel.Options{})
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	fmt.Fprintf(os.Stderr, "lifebench: %s, index format %d (page count kept: %v), brought to format %d and its page count by a commit without pages (as the crawl's next turn would): %d merges, %.1f s\n", dir, f, m.PageWords != nil, barrel.Format, st.Merged, time.Since(t0).Seconds())
	return nil
}

// searchRun is one pass of the queries over an index opened afresh: the
// CPU time of the searching thread per query (the machine's other work
// does not count), and the index's segments and documents.
type searchRun struct {
	p50, p99       float64 // milliseconds
	segments, docs int
}

func searchPass(dir string, queries []string) (searchRun, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	idx, err := barrel.Open(dir)
	if err != nil {
		return searchRun{}, err
	}
	defer idx.Close()
	r, err := timeQueries(queries, func(q string) error {
		_, err := idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true})
		return err
	})
	if err != nil {
		return searchRun{}, fmt.Errorf("%s: %w", dir, err)
	}
	r.segments, r.docs = len(idx.Segments()), idx.Docs()
	return r, nil
}

// timeQueries runs each query with search on the calling goroutine, which
// the caller locks to its OS thread, and returns the p50 and p99 of the
// thread's CPU time per query.
func timeQueries(queries []string, search func(q string) error) (searchRun, error) {
	cpu := make([]float64, len(queries))
	for i, q := range queries {
		c0 := threadCPU()
		if err := search(q); err != nil {
			return searchRun{}, fmt.Errorf("query %q: %w", q, err)
		}
		cpu[i] = float64(threadCPU()-c0) / 1e6
	}
	return searchRun{p50: benchenv.Percentile(cpu, 0.5), p99: benchenv.Percentile(cpu, 0.99)}, nil
}

// openedQueries is how many of the queries openedPass asks, each of an
// index opened for it: what one barrel search command costs.
const openedQueries = 100

// openedPass times the first openedQueries of queries, each on dir
// opened for it and closed after: the CPU time of the open, the query
// and the close.
func openedPass(dir string, queries []string) (searchRun, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := timeQueries(queries[:min(len(queries), openedQueries)], func(q string) error {
		idx, err := barrel.Open(dir)
		if err != nil {
			return err
		}
		_, err = idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true})
		if cerr := idx.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return searchRun{}, fmt.Errorf("%s: %w", dir, err)
	}
	return r, nil
}

// threadCPU is the CPU time of the calling OS thread.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// searchAges times n queries on each age's kept index and on the
// one-batch index of the same pages, reps passes of each alternated (and
// in each, the first openedQueries on each index opened for each query),
// and prints the medians and ranges to w. With profiles, one more pass of
// each is profiled into profiles/search-AGE-loop.pprof and
// search-AGE-onebatch.pprof, and one more opened for each query into
// search-AGE-loop-opened.pprof and search-AGE-onebatch-opened.pprof.
func searchAges(w io.Writer, snaps string, cfg crawlsim.Config, ages []int, n, reps int, profiles string) error {
	fmt.Fprintf(w, "lifebench: commit %s, load average %s; search: %d queries (internal/benchqueries, seed 1, from %d pages of the crawl), top 10 without snippets, CPU time of the searching thread per query; %d passes of each index opened afresh, alternated, then the first %d queries each on the index opened for it (open, query and close, as one barrel search command): median (range)\n\n", benchenv.Commit(), benchenv.LoadAverage(), n, searchPages, reps, min(n, openedQueries))
	fmt.Fprintln(w, "| turns | index | segments | documents | CPU p50 | CPU p99 |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|")
	for _, age := range ages {
		loop := filepath.Join(snapshotDir(snaps, age), "index")
		if _, err := os.Stat(filepath.Join(loop, "MANIFEST")); err != nil {
			return fmt.Errorf("no index kept at %d turns (%s): age the crawl first, with the same -keep", age, loop)
		}
		if err := upgradeKept(loop); err != nil {
			return err
		}
		one, err := searchOneBatch(snaps, cfg, age)
		if err != nil {
			return fmt.Errorf("the one-batch index at %d turns: %w", age, err)
		}
		queries := searchQueries(cfg, age, n)
		runs := [4][]searchRun{} // the loop's, the one batch's; then each opened for each query
		for range reps {
			for k, dir := range []string{loop, one} {
				r, err := searchPass(dir, queries)
				if err != nil {
					return err
				}
				runs[k] = append(runs[k], r)
			}
			for k, dir := range []string{loop, one} {
				r, err := openedPass(dir, queries)
				if err != nil {
					return err
				}
				r.segments, r.docs = runs[k][0].segments, runs[k][0].docs
				runs[2+k] = append(runs[2+k], r)
			}
		}
		if profiles != "" {
			for k, dir := range []string{loop, one} {
				name := []string{"loop", "onebatch"}[k]
				if err := profilePass(filepath.Join(profiles, fmt.Sprintf("search-%d-%s.pprof", age, name)), dir, queries, searchPass); err != nil {
					return err
				}
				if err := profilePass(filepath.Join(profiles, fmt.Sprintf("search-%d-%s-opened.pprof", age, name)), dir, queries, openedPass); err != nil {
					return err
				}
			}
		}
		var p50, p99 [4]float64
		for k, name := range []string{"as the loop built it", "one batch of the same pages",
			fmt.Sprintf("as the loop built it, opened for each of %d queries", min(n, openedQueries)),
			fmt.Sprintf("one batch, opened for each of %d queries", min(n, openedQueries))} {
			rs := runs[k]
			s50, s99 := make([]float64, len(rs)), make([]float64, len(rs))
			for i, r := range rs {
				s50[i], s99[i] = r.p50, r.p99
			}
			p50[k], p99[k] = benchenv.Percentile(s50, 0.5), benchenv.Percentile(s99, 0.5)
			fmt.Fprintf(w, "| %d | %s | %d | %d | %s | %s |\n", age, name, rs[0].segments, rs[0].docs, msSpread(s50), msSpread(s99))
			if k%2 == 1 {
				fmt.Fprintf(w, "| %d | the first against the second | | | %.2fx | %.2fx |\n", age, p50[k-1]/p50[k], p99[k-1]/p99[k])
			}
		}
	}
	return nil
}

// msSpread is the median and range of ms, milliseconds.
func msSpread(ms []float64) string {
	return fmt.Sprintf("%.2f ms (%.2f-%.2f)", benchenv.Percentile(ms, 0.5), slices.Min(ms), slices.Max(ms))
}

// profilePass writes the CPU profile of one more pass over dir to file.
func profilePass(file, dir string, queries []string, pass func(string, []string) (searchRun, error)) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	_, err = pass(dir, queries)
	pprof.StopCPUProfile()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
