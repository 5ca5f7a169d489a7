// Command lifebench measures the life of a crawl: how one turn of the crawl
// loop's non-fetch steps costs as the crawl ages. It ages one crawl
// directory through the tools' Go APIs (opic, recrawl, sekitei, barrel) with
// the synthetic batches of internal/crawlsim (700 fetch records a turn, 500
// of them new pages), and at each age given copies it (its index linked,
// see restoreIndex) and runs one more turn of scripts/crawl-cycle.sh on the
// copy, with the real tools and the fetch replayed (a stand-in fetch writes
// the turn's synthetic records and their WARC file). It prints, per step, the time (from the loop's log) and the
// peak memory (each tool under /usr/bin/time) at every age, and the growth
// exponent between the two oldest ages: time ~ age^k.
//
//	go run ./internal/cmd/lifebench [-ages 10,100,1000,8760] [-chunk 24] [-index-turns 1] [-reps 3] [-keep DIR]
//
// Ageing applies the turns to opic, recrawl and sekitei in chunks of -chunk
// turns, one batch a chunk, to keep a year's ageing within an hour or so;
// the measured turn is one ordinary turn. The index at each age is built
// as the loop builds it: from turn 0, batch after batch of -index-turns
// turns' fetches (default 1, one batch a turn as the loop; a larger
// multiple gives fewer, larger batches and so not the same merges), every
// version as fetched, with the default merge policy and PageRank every 24
// batches. Each batch's CPU and wall time, its merges and their time, and
// the segments after it are written to lifebench-index-turns.tsv in each
// age's copy; the table's index rows give the median, 95th percentile and
// worst of each age's last 24 batches (all of them for a younger age), and
// the merges over its life. The measured turn adds its pages as a new
// segment to that index, as every hourly turn does.
//
// A year's ageing takes an hour or more: with -keep, a run that is killed
// or stopped resumes where it was, in place (the crawl directory records
// the turns it has aged, and each tool applies a batch once), so it can
// span several runs; run it again with the same -ages and -chunk. The
// index build, hours for a year, resumes from its last checkpoint (every
// 240 batches and each age; see checkpointDir).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sekitei/crawlkit/internal/benchenv"
	"github.com/sekitei/crawlkit/internal/crawlsim"
	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"github.com/sekitei/crawlkit/pkg/boltstate"
	"github.com/sekitei/crawlkit/pkg/opic"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
	"github.com/sekitei/crawlkit/pkg/sekitei"
	"github.com/sekitei/crawlkit/pkg/warc"
	"golang.org/x/sys/unix"
)

// The loop's settings for the measured turn; ageing uses the same.
const (
	siteQuota = 10000
	minQuota  = 20
)

var steps = []string{"select", "filter", "fetch", "sitemaps", "opic", "recrawl", "sekitei", "index", "archive"}

func main() {
	agesFlag := flag.String("ages", "10,100,1000,8760", "crawl ages, in turns, to measure at")
	chunk := flag.Int("chunk", 24, "turns applied as one batch while ageing")
	flag.BoolVar(&oneBatchIndex, "one-batch", true, "compare each age's index with one built in one batch from the same final pages")
	flag.IntVar(&indexTurns, "index-turns", 1, "turns' fetches a batch of the index, built batch after batch as the loop does (1: one a turn, as the loop)")
	flag.IntVar(&deletesPct, "deletes-pct", 0, "the index built batch after batch reclaims deleted documents when more than `P` percent of its documents are (barrel build --deletes-pct; 0: barrel's default)")
	keep := flag.String("keep", "", "keep the aged crawls here, one directory an age, and resume from them (default: a temporary directory, removed)")
	reps := flag.Int("reps", 3, "measured turns at each age; the table has each step's median and range")
	cpuprofile := flag.String("cpuprofile", "", "write the ageing's CPU profile to this file")
	flag.StringVar(&indexProfile, "index-cpuprofile", "", "write a CPU profile of the index batches from turn -index-profile-from on to this file")
	flag.IntVar(&indexProfileFrom, "index-profile-from", 0, "the first turn whose index batch -index-cpuprofile profiles")
	windowsOf := flag.String("windows", "", "print the windows of 240 batches of this lifebench-index-turns.tsv (an age's copy, or the checkpoint's of a build under way) and exit")
	oneBatchOnly := flag.Bool("one-batch-only", false, "build only the one-batch indexes of -ages in the -keep directory and keep their sizes for the run (beside a run's batch-by-batch build, on a spare core)")
	searchN := flag.Int("search", 0, "time this many queries on each age's kept index (-keep) and on the one-batch index of the same pages (built and kept in DIR), -reps passes of each, and exit")
	searchProfiles := flag.String("search-cpuprofile", "", "with -search: profile one more pass of each index into this `DIR` (search-AGE-loop.pprof, search-AGE-onebatch.pprof; opened for each query, search-AGE-loop-opened.pprof, search-AGE-onebatch-opened.pprof)")
	flag.Parse()
	if *cpuprofile != "" && indexProfile != "" {
		fmt.Fprintln(os.Stderr, "lifebench: -cpuprofile and -index-cpuprofile cannot both be given (one CPU profile at a time)")
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "lifebench:", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	var ages []int
	for _, a := range strings.Split(*agesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "lifebench: -ages: %q is not a number of turns\n", a)
			os.Exit(2)
		}
		ages = append(ages, n)
	}
	slices.Sort(ages)
	if *windowsOf != "" {
		cs, err := readIndexLog(*windowsOf)
		if err == nil && len(cs) == 0 {
			err = fmt.Errorf("%s: no batches", *windowsOf)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "lifebench:", err)
			os.Exit(1)
		}
		printWindows(os.Stdout, windows(cs, windowBatches))
		return
	}
	if *searchN > 0 {
		if *keep == "" {
			fmt.Fprintln(os.Stderr, "lifebench: -search reads the aged indexes kept in -keep DIR: give it")
			os.Exit(2)
		}
		if err := searchAges(os.Stdout, *keep, crawlsim.Default(), ages, *searchN, max(1, *reps), *searchProfiles); err != nil {
			fmt.Fprintln(os.Stderr, "lifebench:", err)
			os.Exit(1)
		}
		fmt.Printf("load average: %s\n", benchenv.LoadAverage())
		return
	}
	if *oneBatchOnly {
		if *keep == "" {
			fmt.Fprintln(os.Stderr, "lifebench: -one-batch-only keeps the sizes in -keep DIR: give it")
			os.Exit(2)
		}
		for _, age := range ages {
			if _, err := oneBatchSize(*keep, crawlsim.Default(), age); err != nil {
				fmt.Fprintf(os.Stderr, "lifebench: the one-batch index at %d turns: %v\n", age, err)
				os.Exit(1)
			}
		}
		return
	}
	if err := run(ages, *chunk, *reps, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "lifebench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// measure is one measured turn.
type measure struct {
	age  int
	secs map[string]float64
	// lo and hi are the fastest and slowest of the measured turns
	// (summarizeRuns), per step.
	lo, hi map[string]float64
	rssMB  map[string]float64
	disk   map[string]int64 // bytes of state/, index/
	turn   float64
	// rankedInTurn: the turn's index batch recomputed PageRank.
	rankedInTurn bool
}

func run(ages []int, chunk, reps int, keep string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "lifebench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "real")
	build := exec.Command("go", "build", "-o", bin+"/", "./cmd/...")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	wrapped := filepath.Join(tmp, "bin")
	if err := wrapTools(bin, wrapped); err != nil {
		return err
	}
	snaps := keep
	if snaps == "" {
		snaps = filepath.Join(tmp, "aged")
	}
	cfg := crawlsim.Default()
	// Age first, keeping a copy of the crawl at each age; measure after,
	// so that the measured turns run one after the other, not between
	// ageing runs. A kept directory resumes from its oldest copy.
	crawl := filepath.Join(snaps, "crawl")
	if err := ageAll(snaps, crawl, cfg, ages, chunk); err != nil {
		return err
	}
	for _, age := range ages {
		if err := compactKept(snapshotDir(snaps, age), cfg); err != nil {
			return fmt.Errorf("the states at %d turns: %w", age, err)
		}
	}
	var results []measure
	for _, age := range ages {
		var runs []measure
		for rep := 0; rep < reps; rep++ {
			m, err := measureTurn(root, wrapped, snapshotDir(snaps, age), filepath.Join(snaps, "measure"), cfg, age)
			if err != nil {
				return fmt.Errorf("the turn after %d: %w", age, err)
			}
			fmt.Fprintf(os.Stderr, "lifebench: age %d, run %d: turn %.2f s\n", age, rep+1, m.turn)
			runs = append(runs, m)
		}
		results = append(results, summarizeRuns(runs))
	}
	print(results, reps)
	fmt.Printf("\nthe index as the loop builds it, %d turn(s) a batch: per batch (adding its pages and committing, merges included) median / 95th percentile / worst of the last %d batches\n", indexTurns, indexWindow)
	for _, age := range ages {
		sum, err := indexSummary(snapshotDir(snaps, age))
		if err != nil {
			return err
		}
		size := du(filepath.Join(snapshotDir(snaps, age), "index"))
		one := ""
		if oneBatchIndex {
			n, err := oneBatchSize(snaps, cfg, age)
			if err != nil {
				return fmt.Errorf("the one-batch index at %d turns: %w", age, err)
			}
			one = fmt.Sprintf(" (one batch of the same final pages: %.0f MB, %.2fx)", float64(n)/1e6, float64(size)/float64(n))
		}
		fmt.Printf("- %d turns: %s; index %.0f MB%s\n", age, sum, float64(size)/1e6, one)
	}
	if oldest := ages[len(ages)-1]; oldest >= 2*windowBatches {
		cs, err := readIndexLog(filepath.Join(snapshotDir(snaps, oldest), indexLog))
		if err != nil {
			return err
		}
		fmt.Printf("\nthe index at %d turns, batch by batch: per window of %d batches, the CPU seconds of a batch that is not a PageRank turn (every %dth) and the worst PageRank turn apart\n", oldest, windowBatches, pageRankEvery)
		printWindows(os.Stdout, windows(cs, windowBatches))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average: %s", b)
	}
	return nil
}

// ageAll ages the crawl to each age that has no kept copy yet, and builds
// each copy's index.
func ageAll(snaps, crawl string, cfg crawlsim.Config, ages []int, chunk int) error {
	if err := ageStates(snaps, crawl, cfg, ages, chunk); err != nil {
		return err
	}
	return indexAges(snaps, cfg, ages)
}

// ageStates ages opic, recrawl and sekitei to each age that has no kept
// copy yet, keeping a copy at each.
func ageStates(snaps, crawl string, cfg crawlsim.Config, ages []int, chunk int) error {
	missing := false
	for _, age := range ages {
		if _, err := os.Stat(snapshotDir(snaps, age)); err != nil {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	a, err := resumeAger(snaps, crawl, cfg, ages, chunk)
	if err != nil {
		return err
	}
	defer func() { a.close() }()
	for _, age := range ages {
		snap := snapshotDir(snaps, age)
		if _, err := os.Stat(snap); err == nil {
			continue
		}
		t0 := time.Now()
		for a.turns < age {
			n := min(chunk, age-a.turns)
			if err := a.apply(n); err != nil {
				return fmt.Errorf("ageing to turn %d: %w", a.turns+n, err)
			}
		}
		if err := a.sync(); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "lifebench: aged to %d turns in %.0f s (opic %.0f s, recrawl %.0f s, sekitei %.0f s so far)\n",
			age, time.Since(t0).Seconds(), a.spent.opic.Seconds(), a.spent.recrawl.Seconds(), a.spent.sekitei.Seconds())
		if age == ages[len(ages)-1] {
			// the oldest crawl ages no further: moved, not copied
			a.close()
			if err := os.Rename(crawl, snap); err != nil {
				return err
			}
			break
		}
		if err := copyDir(crawl, snap+".part"); err != nil {
			return err
		}
		if err := os.Rename(snap+".part", snap); err != nil {
			return err
		}
	}
	a.close()
	return os.RemoveAll(crawl)
}

// indexMark records in a copy that its index was built as the loop builds
// it, batch after batch; a copy without it (an index aged otherwise, or a
// build killed half-way) has its index built again.
const indexMark = "lifebench-index"

// indexTurns is how many turns' fetches make one index batch (-index-turns).
var indexTurns = 1

// deletesPct is the batch-after-batch index's share of deleted documents
// before merges reclaim them (-deletes-pct; 0: barrel's default).
var deletesPct = 0

// indexWindow is how many of an age's last batches its index row summarises.
const indexWindow = 24

// indexCommit is the cost of one index batch: adding its pages and
// committing them, with the merges the policy picked.
type indexCommit struct {
	turn            int     // the batch's last turn
	cpu, wall       float64 // seconds
	merged, mdocs   int     // segments merged, their documents
	mergeSecs       float64 // wall seconds of those merges
	segments, pages int
	segDocs         int   // documents of the batch's new segment
	bytes           int64 // the index's bytes after the batch
}

// indexAges builds the index of every age as the loop builds it: from turn
// 0, the fetches of each indexTurns turns as one batch (every version, as
// fetched), with the default merge policy and PageRank every 24 batches,
// copying the index into each age's copy when it reaches that age. It
// writes each age's batches to lifebench-index-turns.tsv in the copy.
func indexAges(snaps string, cfg crawlsim.Config, ages []int) error {
	want := func(age int) string {
		return fmt.Sprintf("%s, %d turns\n", buildKey(), age)
	}
	built := func(age int) bool {
		b, err := os.ReadFile(filepath.Join(snapshotDir(snaps, age), indexMark))
		return err == nil && string(b) == want(age)
	}
	if !slices.ContainsFunc(ages, func(age int) bool { return !built(age) }) {
		return nil
	}
	dir := filepath.Join(snaps, "index.build")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var log []indexCommit
	t0 := time.Now()
	next := 0
	profiling := false
	// A checkpoint resumes the build if every age it has passed is built.
	if n, l, err := readCheckpoint(snaps); err != nil {
		fmt.Fprintf(os.Stderr, "lifebench: the index build starts from turn 0: %v\n", err)
	} else if n > 0 && !slices.ContainsFunc(ages, func(age int) bool { return age < n && !built(age) }) {
		if err := linkIndex(filepath.Join(snaps, checkpointDir, "index"), dir); err != nil {
			return err
		}
		next, log = n, l
		fmt.Fprintf(os.Stderr, "lifebench: the index build resumes at turn %d from %s\n", next, filepath.Join(snaps, checkpointDir))
	}
	// Else the oldest age built, with every younger one, is resumed from.
	for i := len(ages) - 1; i >= 0 && next == 0; i-- {
		if !built(ages[i]) || slices.ContainsFunc(ages[:i], func(age int) bool { return !built(age) }) {
			continue
		}
		snap := snapshotDir(snaps, ages[i])
		l, err := readIndexLog(filepath.Join(snap, indexLog))
		if err != nil || len(l) == 0 || l[len(l)-1].turn != ages[i]-1 {
			break
		}
		if err := copyDir(filepath.Join(snap, "index"), dir); err != nil {
			return err
		}
		next, log = ages[i], l
		fmt.Fprintf(os.Stderr, "lifebench: the index build resumes at turn %d from %s\n", next, snap)
	}
	for _, age := range ages {
		if age <= next && built(age) {
			continue
		}
		for next < age {
			upto := min(age, next+indexTurns)
			if indexProfile != "" && next >= indexProfileFrom && !profiling {
				stop, err := startIndexProfile()
				if err != nil {
					return err
				}
				defer stop()
				profiling = true
			}
			if beforeBatch != nil {
				if err := beforeBatch(next); err != nil {
					return err
				}
			}
			c, err := indexBatch(dir, cfg, next, upto)
			if err != nil {
				return fmt.Errorf("the index batch of turns %d-%d: %w", next, upto-1, err)
			}
			log = append(log, c)
			next = upto
			if len(log)%checkpointEvery == 0 && next < age {
				if err := writeCheckpoint(snaps, dir, log, next); err != nil {
					return err
				}
			}
		}
		snap := snapshotDir(snaps, age)
		if err := os.RemoveAll(filepath.Join(snap, "index")); err != nil {
			return err
		}
		if err := copyDir(dir, filepath.Join(snap, "index")); err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(snap, indexLog), indexLogTSV(log)); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "lifebench: indexed %d turns in %d batches in %.0f s\n", age, len(log), time.Since(t0).Seconds())
		if err := writeFileAtomic(filepath.Join(snap, indexMark), []byte(want(age))); err != nil {
			return err
		}
		if age < ages[len(ages)-1] {
			if err := writeCheckpoint(snaps, dir, log, next); err != nil {
				return err
			}
		}
	}
	for _, name := range []string{checkpointDir, checkpointDir + ".part", checkpointDir + ".old"} {
		if err := os.RemoveAll(filepath.Join(snaps, name)); err != nil {
			return err
		}
	}
	return nil
}

// buildKey names how the index is built; a checkpoint or a copy's index
// made otherwise is not resumed from.
func buildKey() string {
	key := fmt.Sprintf("batch after batch, %d turns a batch, index format %d, analysis %s version %d", indexTurns, barrel.Format, analysis.Name, analysis.Version)
	if deletesPct != 0 {
		key += fmt.Sprintf(", deletes-pct %d", deletesPct)
	}
	return key
}

// A year's index build takes hours: every checkpointEvery batches, and at
// each age, the build is kept in checkpointDir (its files hard-linked, as
// the measured copies are, see linkCopy: the build only appends to the
// files it shares with the checkpoint, and opening the checkpoint cuts
// them back to the lengths its MANIFEST commits), with its batches so far
// and the turn it has reached, so that a killed run resumes it there.
const checkpointDir = "index.checkpoint"

var checkpointEvery = 240 // a variable for the tests

// indexProfile and indexProfileFrom are -index-cpuprofile and
// -index-profile-from: where the batches' costs go as the index ages.
var (
	indexProfile     string
	indexProfileFrom int
)

// startIndexProfile starts the CPU profile of the index batches; the
// function it returns stops it and closes the file.
func startIndexProfile() (func(), error) {
	f, err := os.Create(indexProfile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "lifebench: profiling the index batches into %s\n", indexProfile)
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// beforeBatch, when set, runs before each index batch (the tests stop a
// build with it).
var beforeBatch func(from int) error

// writeCheckpoint replaces the checkpoint with the build in dir, which has
// indexed the turns before next.
func writeCheckpoint(snaps, dir string, log []indexCommit, next int) error {
	ck := filepath.Join(snaps, checkpointDir)
	part := ck + ".part"
	if err := os.RemoveAll(part); err != nil {
		return err
	}
	if err := os.MkdirAll(part, 0o755); err != nil {
		return err
	}
	if err := linkIndex(dir, filepath.Join(part, "index")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(part, indexLog), indexLogTSV(log), 0o644); err != nil {
		return err
	}
	// The mark last: a part with its mark is whole.
	if err := os.WriteFile(filepath.Join(part, indexMark), fmt.Appendf(nil, "%s\nnext %d\n", buildKey(), next), 0o644); err != nil {
		return err
	}
	// The swap: the checkpoint is set aside, the part put in its place,
	// then the old one removed. A run killed anywhere in it leaves a whole
	// checkpoint under one of the three names (recoverCheckpoint).
	old := ck + ".old"
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	if err := os.Rename(ck, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(part, ck); err != nil {
		return err
	}
	return os.RemoveAll(old)
}

// recoverCheckpoint finishes the swap of a run killed while it wrote a
// checkpoint: where the checkpoint is not whole (missing, or its mark
// gone), the new one (the part, if its mark was written) or else the one
// set aside takes its place.
func recoverCheckpoint(snaps string) error {
	ck := filepath.Join(snaps, checkpointDir)
	if checkpointWhole(ck) {
		return nil
	}
	for _, from := range []string{ck + ".part", ck + ".old"} {
		if !checkpointWhole(from) {
			continue
		}
		if err := os.RemoveAll(ck); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "lifebench: the checkpoint was left half written: %s takes its place\n", from)
		return os.Rename(from, ck)
	}
	return nil
}

// checkpointWhole reports whether dir holds a checkpoint's mark with the
// turn it reached.
func checkpointWhole(dir string) bool {
	_, _, err := readMark(dir)
	return err == nil
}

// readMark reads a checkpoint's mark: the build's key and the turn it
// reached (a key read, the turn not, is a mark cut short).
func readMark(dir string) (key string, next int, err error) {
	b, err := os.ReadFile(filepath.Join(dir, indexMark))
	if err != nil {
		return "", 0, err
	}
	key, rest, _ := strings.Cut(string(b), "\n")
	if _, err := fmt.Sscanf(rest, "next %d", &next); err != nil {
		return key, 0, fmt.Errorf("%s: %v", filepath.Join(dir, indexMark), err)
	}
	return key, next, nil
}

// readCheckpoint returns the turn a kept build has reached and its
// batches; 0 when there is none, or it was built otherwise.
func readCheckpoint(snaps string) (int, []indexCommit, error) {
	if err := recoverCheckpoint(snaps); err != nil {
		return 0, nil, err
	}
	ck := filepath.Join(snaps, checkpointDir)
	key, next, err := readMark(ck)
	switch {
	case errors.Is(err, fs.ErrNotExist), key != "" && key != buildKey():
		return 0, nil, nil // none, or another build's
	case err != nil:
		return 0, nil, err
	}
	log, err := readIndexLog(filepath.Join(ck, indexLog))
	if err != nil {
		return 0, nil, err
	}
	if len(log) == 0 || log[len(log)-1].turn != next-1 {
		return 0, nil, fmt.Errorf("%s: its batches do not reach turn %d", ck, next-1)
	}
	return next, log, nil
}

// indexLogTSV is the batches' table, as written to indexLog.
func indexLogTSV(log []indexCommit) []byte {
	var tsv bytes.Buffer
	tsv.WriteString("turn\tcpu_s\twall_s\tmerged\tmerged_docs\tmerge_s\tsegments\tpages\tsegment_docs\tindex_bytes\n")
	for _, c := range log {
		fmt.Fprintf(&tsv, "%d\t%.3f\t%.3f\t%d\t%d\t%.3f\t%d\t%d\t%d\t%d\n", c.turn, c.cpu, c.wall, c.merged, c.mdocs, c.mergeSecs, c.segments, c.pages, c.segDocs, c.bytes)
	}
	return tsv.Bytes()
}

// readIndexLog reads an indexLog table back.
func readIndexLog(path string) ([]indexCommit, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cs []indexCommit
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i == 0 {
			continue
		}
		var c indexCommit
		if n, err := fmt.Sscanf(line, "%d\t%f\t%f\t%d\t%d\t%f\t%d\t%d\t%d\t%d", &c.turn, &c.cpu, &c.wall, &c.merged, &c.mdocs, &c.mergeSecs, &c.segments, &c.pages, &c.segDocs, &c.bytes); err != nil && n < 8 { // 8 columns: a copy kept before segment_docs and index_bytes
			return nil, fmt.Errorf("%s line %d: %v", path, i+1, err)
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// oneBatchIndex compares each age's index with one built in one batch.
var oneBatchIndex = true

// oneBatchSize returns the bytes of the one-batch index at age. The one
// at a year takes most of an hour to build: its size is kept in snaps
// (onebatch-AGE.size, with the build's key), for a resumed run and for
// -one-batch-only, which builds it beside the batch-by-batch build.
func oneBatchSize(snaps string, cfg crawlsim.Config, age int) (int64, error) {
	name := filepath.Join(snaps, fmt.Sprintf("onebatch-%d.size", age))
	key := oneBatchKey()
	if b, err := os.ReadFile(name); err == nil {
		k, v, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		if n, err := strconv.ParseInt(v, 10, 64); k == key && err == nil && n > 0 {
			return n, nil
		}
	}
	t0, c0 := time.Now(), cpuSeconds()
	n, err := oneBatch(filepath.Join(snaps, fmt.Sprintf("onebatch-%d", age)), cfg, age)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(os.Stderr, "lifebench: the one-batch index at %d turns: %.0f MB, built in %.0f s (%.0f s of CPU)\n", age, float64(n)/1e6, time.Since(t0).Seconds(), cpuSeconds()-c0)
	return n, writeFileAtomic(name, fmt.Appendf(nil, "%s\n%d\n", key, n))
}

// oneBatchKey names how the one-batch index is built: a size kept under
// another key is built again.
func oneBatchKey() string { return oneBatchKeyOf(barrel.Format) }

func oneBatchKeyOf(format int) string {
	return fmt.Sprintf("one batch, index format %d, analysis %s version %d", format, analysis.Name, analysis.Version)
}

// oneBatch builds in dir, as one batch, the index of the pages of turns
// 0 to age-1 as last fetched, and returns its bytes.
func oneBatch(dir string, cfg crawlsim.Config, age int) (int64, error) {
	defer os.RemoveAll(dir)
	err := buildOneBatch(dir, cfg, age)
	return du(dir), err
}

// buildOneBatch builds in dir, as one batch, the index of the pages of
// turns 0 to age-1 as last fetched (what dir held is removed first).
func buildOneBatch(dir string, cfg crawlsim.Config, age int) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	last := map[string]int32{}
	for t := range age {
		for _, f := range cfg.Turn(t) {
			last[f.URL] = int32(t)
		}
	}
	b, err := barrel.NewBuilder(dir, barrel.Options{})
	if err != nil {
		return err
	}
	for t := 0; t < age && err == nil; t++ {
		for _, f := range cfg.Turn(t) {
			if last[f.URL] == int32(t) {
				if err = b.Add(f.URL, f.Body()); err != nil {
					break
				}
			}
		}
	}
	if err == nil {
		err = b.Commit()
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	return err
}

// indexLog is the file of an age's copy listing its index batches.
const indexLog = "lifebench-index-turns.tsv"

// indexBatch adds the fetches of turns from to upto-1 to the index in dir
// as one batch named as the ageing names its batches: by the turns done.
func indexBatch(dir string, cfg crawlsim.Config, from, upto int) (indexCommit, error) {
	c := indexCommit{turn: upto - 1}
	c0, t0 := cpuSeconds(), time.Now()
	b, err := barrel.NewBuilder(dir, barrel.Options{Batch: batchID(cfg, upto), PageRankEvery: 24, DeletesPct: deletesPct})
	if err != nil {
		return c, err
	}
	for t := from; t < upto; t++ {
		for _, f := range cfg.Turn(t) {
			c.pages++
			if err = b.Add(f.URL, f.Body()); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = b.Commit()
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	c.cpu, c.wall = cpuSeconds()-c0, time.Since(t0).Seconds()
	c.merged, c.mdocs, c.mergeSecs, c.segments = b.Stats.Merged, b.Stats.MergedDocs, b.Stats.MergeTime.Seconds(), b.Stats.Segments
	c.segDocs, c.bytes = b.Stats.SegmentDocs, du(dir)
	return c, err
}

// cpuSeconds is the CPU time, user and system, this process has used.
func cpuSeconds() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// indexSummary reads an age's index batches back: the median, 95th
// percentile and worst CPU and wall seconds of its last indexWindow
// batches, and the merges over its whole life.
func indexSummary(snap string) (string, error) {
	cs, err := readIndexLog(filepath.Join(snap, indexLog))
	if err != nil {
		return "", err
	}
	if len(cs) == 0 {
		return "", fmt.Errorf("%s: no batches", indexLog)
	}
	last := cs[max(0, len(cs)-indexWindow):]
	pct := func(f func(indexCommit) float64) string {
		v := make([]float64, len(last))
		for i, c := range last {
			v[i] = f(c)
		}
		p50, p95, worst := percentiles(v)
		return fmt.Sprintf("%.2f / %.2f / %.2f", p50, p95, worst)
	}
	merges, mdocs, sdocs, msecs, worst, maxSegs := 0, 0, 0, 0.0, 0.0, 0
	for _, c := range cs {
		if c.merged > 0 {
			merges++
		}
		mdocs += c.mdocs
		sdocs += c.segDocs
		msecs += c.mergeSecs
		worst = math.Max(worst, c.mergeSecs)
		maxSegs = max(maxSegs, c.segments)
	}
	// Write amplification: the documents the batches' segments wrote and
	// the merges rewrote, per document a batch wrote.
	wa := "unknown (no segment_docs column)"
	if sdocs > 0 {
		wa = fmt.Sprintf("%.2f", float64(sdocs+mdocs)/float64(sdocs))
	}
	return fmt.Sprintf("%d batches, last %d: CPU s %s, wall s %s; %d segments (at most %d); %d batches merged (%d docs, %.1f s in all, worst %.2f s); write amplification %s",
		len(cs), len(last), pct(func(c indexCommit) float64 { return c.cpu }), pct(func(c indexCommit) float64 { return c.wall }),
		last[len(last)-1].segments, maxSegs, merges, mdocs, msecs, worst, wa), nil
}

// summarizeRuns gives, per step, the median time of an age's measured turns
// and its range, and the largest peak memory: a turn's cost is its usual
// one, and the range shows the machine's noise and the spikes.
func summarizeRuns(ms []measure) measure {
	r := ms[0]
	r.secs, r.lo, r.hi, r.rssMB = map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
	keys := map[string]bool{}
	for _, m := range ms {
		for s := range m.secs {
			keys[s] = true
		}
		for s, v := range m.rssMB {
			r.rssMB[s] = math.Max(r.rssMB[s], v)
		}
		r.rankedInTurn = r.rankedInTurn || m.rankedInTurn
	}
	for s := range keys {
		var v []float64
		for _, m := range ms {
			v = append(v, m.secs[s])
		}
		r.secs[s], r.lo[s], r.hi[s] = benchenv.Median(v), slices.Min(v), slices.Max(v)
	}
	var turns []float64
	for _, m := range ms {
		turns = append(turns, m.turn)
	}
	r.turn = benchenv.Median(turns)
	return r
}

func snapshotDir(snaps string, age int) string {
	return filepath.Join(snaps, fmt.Sprintf("age-%d", age))
}

// resumeAger starts the crawl where the last run left it: in place, from
// the crawl directory a killed or stopped run aged beyond the oldest copy
// kept (its progress file says how far, and the tools' own batch IDs make
// a chunk half-applied at the kill apply once); else from the copy of the
// oldest age kept in snaps; else from nothing. A year's ageing takes hours,
// so it can span several runs.
func resumeAger(snaps, crawl string, cfg crawlsim.Config, ages []int, chunk int) (*ager, error) {
	if err := os.MkdirAll(snaps, 0o755); err != nil {
		return nil, err
	}
	turns := 0
	for _, age := range ages {
		if _, err := os.Stat(snapshotDir(snaps, age)); err == nil {
			turns = age
		}
	}
	if p, err := readProgress(crawl); err == nil && p.turns > turns && p.chunk == chunk {
		fmt.Fprintf(os.Stderr, "lifebench: resuming in place from the crawl aged %d turns in %s\n", p.turns, crawl)
		return reopenAger(crawl, cfg, p)
	} else if err == nil && p.turns > turns {
		fmt.Fprintf(os.Stderr, "lifebench: %s was aged in chunks of %d turns, not %d: starting again from %d turns\n", crawl, p.chunk, chunk, turns)
	}
	os.RemoveAll(crawl)
	if turns > 0 {
		fmt.Fprintf(os.Stderr, "lifebench: resuming from the crawl aged %d turns in %s\n", turns, snaps)
		if err := copyDir(snapshotDir(snaps, turns), crawl); err != nil {
			return nil, err
		}
	}
	a, err := newAger(crawl, cfg)
	if err != nil {
		return nil, err
	}
	a.turns, a.chunk = turns, chunk
	return a, nil
}

// reopenAger opens a crawl aged p.turns turns. An index a run of an
// older version of this bench aged along is dropped: indexAge builds each
// copy's index.
func reopenAger(crawl string, cfg crawlsim.Config, p progress) (*ager, error) {
	if err := os.RemoveAll(filepath.Join(crawl, "index")); err != nil {
		return nil, err
	}
	a, err := newAger(crawl, cfg)
	if err != nil {
		return nil, err
	}
	a.turns, a.chunk = p.turns, p.chunk
	return a, nil
}

// progress is how far a crawl directory has aged: every state holds the
// turns up to turns, applied in chunks of chunk turns.
type progress struct{ turns, chunk int }

const progressName = "lifebench-aged"

func readProgress(crawl string) (progress, error) {
	var p progress
	b, err := os.ReadFile(filepath.Join(crawl, progressName))
	if err != nil {
		return p, err
	}
	if _, err := fmt.Sscanf(string(b), "%d %d", &p.turns, &p.chunk); err != nil {
		return p, fmt.Errorf("%s: %w", filepath.Join(crawl, progressName), err)
	}
	return p, nil
}

// writeProgress records the turns aged, beside and renamed so that a kill
// leaves the old or the new count, never a torn one.
func writeProgress(crawl string, p progress) error {
	return writeFileAtomic(filepath.Join(crawl, progressName), fmt.Appendf(nil, "%d %d\n", p.turns, p.chunk))
}

// writeFileAtomic writes name beside and renames it, so that a kill leaves
// the old or the new file, never a torn one.
func writeFileAtomic(name string, b []byte) error {
	if err := os.WriteFile(name+".new", b, 0o644); err != nil {
		return err
	}
	return os.Rename(name+".new", name)
}

func copyDir(from, to string) error {
	os.RemoveAll(to)
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		return fmt.Errorf("cp: %v\n%s", err, out)
	}
	return nil
}

// The measured copy shares the index's files with the aged crawl by hard
// links (a year's index is 15 GB, which copying each run would push
// through the page cache, evicting the files the turn reads, as no crawl
// turn does): segments and sorted runs are written once under a new
// sequence number and merges unlink them; the append-only files grow under
// the turn, past the lengths the aged crawl's MANIFEST commits, and are
// cut back after it (restoreIndex). MANIFEST and LOCK are copied; the
// states are copied, since bbolt rewrites them in place.

// restoreIndex cuts the append-only files of the index in dir back to the
// lengths its MANIFEST commits, as barrel does when a build opens an index
// a build that did not commit grew: opening a builder and closing it.
func restoreIndex(dir string) error {
	b, err := barrel.NewBuilder(dir, barrel.Options{})
	if err != nil {
		return err
	}
	return b.Close()
}

// linkCopy copies the crawl directory from to to, linking the index's
// files but MANIFEST and LOCK.
func linkCopy(from, to string) error {
	return linkFiles(from, to, func(p string) bool { return filepath.Base(filepath.Dir(p)) == "index" })
}

// linkIndex copies the index directory from to to, linking its files but
// MANIFEST and LOCK.
func linkIndex(from, to string) error {
	return linkFiles(from, to, func(string) bool { return true })
}

// linkFiles copies the directory from to to, linking the files inIndex
// says are an index's, but MANIFEST and LOCK.
func linkFiles(from, to string, inIndex func(path string) bool) error {
	os.RemoveAll(to)
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if inIndex(p) && d.Name() != "MANIFEST" && d.Name() != "LOCK" {
			return os.Link(p, dst)
		}
		return copyFile(p, dst)
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// wrapTools puts a wrapper for each tool in dir: the real tool under
// /usr/bin/time, which appends "tool subcommand maxrss_kb" to $MEMLOG; fetch
// is replayed from $REPLAY.
func wrapTools(real, dir string) error {
	os.MkdirAll(dir, 0o755)
	for _, tool := range []string{"opic", "recrawl", "sekitei", "barrel"} {
		w := fmt.Sprintf("#!/bin/sh\nexec /usr/bin/time -a -o \"$MEMLOG\" -f \"%s $1 %%M\" %s/%s \"$@\"\n", tool, real, tool)
		if err := os.WriteFile(filepath.Join(dir, tool), []byte(w), 0o755); err != nil {
			return err
		}
	}
	// fetch: its subcommands (stats, sitemaps, host-rates) run for real; a
	// fetch (options first) writes the replayed records into its --resume
	// file.
	fetch := fmt.Sprintf(`#!/bin/sh
case "$1" in -*) ;; *) exec %s/fetch "$@" ;; esac
out=""
while [ $# -gt 0 ]; do
  case "$1" in
  --resume) out=$2; shift ;;
  --resume=*) out=${1#--resume=} ;;
  esac
  shift
done
cat "$REPLAY" >> "$out"
`, real)
	return os.WriteFile(filepath.Join(dir, "fetch"), []byte(fetch), 0o755)
}

// spent is the ageing time per state; each field has one writer.
type spent struct{ opic, recrawl, sekitei time.Duration }

// ager keeps the aged crawl's states open through the Go APIs.
type ager struct {
	dir   string
	cfg   crawlsim.Config
	turns int
	op    *opic.DB
	rq    *queue.Queue
	sk    *sekitei.State
	spent *spent // ageing time per state

	chunk  int // turns a batch, recorded in the progress file
	closed bool
}

func newAger(dir string, cfg crawlsim.Config) (*ager, error) {
	state := filepath.Join(dir, "state")
	for _, d := range []string{state, filepath.Join(state, "history"), filepath.Join(dir, "batches"), filepath.Join(dir, "warc")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	os.WriteFile(filepath.Join(state, "shards"), []byte("1\n"), 0o644)
	os.WriteFile(filepath.Join(state, "seeded"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "seeds.txt"), []byte(cfg.URL(0)+"\n"), 0o644)
	a := &ager{dir: dir, cfg: cfg, spent: new(spent)}
	var err error
	if a.op, err = opic.Open(filepath.Join(state, "opic.db"), opic.DBOptions{Damping: 0.85, Window: 720 * time.Hour}); err != nil {
		return nil, err
	}
	if a.rq, err = queue.Open(filepath.Join(state, "recrawl.db"), queue.Options{NoSync: true,
		Update: queue.UpdateOptions{Prior: recrawl.Prior{Rate: 0.2, Days: 7, MinHistory: 5}, SimhashThreshold: 3,
			DeferFor: 24 * time.Hour, DeferCap: 192 * time.Hour}}); err != nil {
		return nil, err
	}
	if a.sk, err = sekitei.OpenState(filepath.Join(state, "sekitei.db"), sekitei.StateOptions{SiteQuota: siteQuota, MinQuota: minQuota, Regrow: 0.25}); err != nil {
		return nil, err
	}
	return a, nil
}

// batchID names turn t as the loop does.
func batchID(cfg crawlsim.Config, t int) string {
	return fmt.Sprintf("%06d-%s", t, cfg.Start.Add(time.Duration(t)*cfg.Every).Format("20060102T150405Z"))
}

// apply ages the crawl by n turns, as one batch.
func (a *ager) apply(n int) error {
	var fetches []crawlsim.Fetch
	for t := a.turns; t < a.turns+n; t++ {
		fetches = append(fetches, a.cfg.Turn(t)...)
	}
	id := batchID(a.cfg, a.turns+n)
	recs := make([]*record.Record, len(fetches))
	items := make([]opic.Item, 0, len(fetches))
	for i, f := range fetches {
		recs[i] = f.Record("", 0)
		line := recs[i].AppendJSON(nil)
		it, err := opic.ParseLine(line)
		if err != nil {
			return err
		}
		items = append(items, it)
	}
	// sekitei does not wait for opic and recrawl: the states age side by
	// side.
	var wg sync.WaitGroup
	var skErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.Now()
		if _, err := a.sk.Apply(id, recs, nil); err != nil {
			skErr = fmt.Errorf("sekitei: %w", err)
		} else if _, err := a.sk.Compact(); err != nil {
			skErr = fmt.Errorf("sekitei: %w", err)
		}
		a.spent.sekitei += time.Since(t)
	}()
	defer wg.Wait()
	t := time.Now()
	res, err := a.op.Apply(id, items)
	a.spent.opic += time.Since(t)
	if errors.Is(err, opic.ErrBatchApplied) {
		// a run killed after opic's commit: recrawl and sekitei skip
		// or apply the chunk; the importance changes are not made again
		res, err = &opic.StepResult{}, nil
	}
	if err != nil {
		return fmt.Errorf("opic: %w", err)
	}
	if _, err := a.op.Compact(); err != nil { // as opic update does
		return fmt.Errorf("opic: %w", err)
	}
	b := queue.Batch{Now: a.cfg.Start.Add(time.Duration(a.turns+n) * a.cfg.Every)}
	for _, r := range recs {
		f, err := queue.ParseFetch(r)
		if err != nil {
			return err
		}
		b.Fetches = append(b.Fetches, f)
	}
	sc := bufio.NewScanner(bytes.NewReader(res.Changes))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r, err := record.Parse(sc.Bytes())
		if err != nil {
			return err
		}
		w, _, _ := r.Float("importance")
		b.Weights = append(b.Weights, queue.Weight{URL: r.URL(), Host: record.RecordHost(r), Importance: w})
	}
	t = time.Now()
	if _, err := a.rq.Apply(id, b); err != nil {
		return fmt.Errorf("recrawl: %w", err)
	}
	if _, err := a.rq.Compact(); err != nil {
		return fmt.Errorf("recrawl: %w", err)
	}
	a.spent.recrawl += time.Since(t)
	wg.Wait()
	if skErr != nil {
		return skErr
	}
	a.turns += n
	// The loop names its next turn after the newest turn directory.
	last := filepath.Join(a.dir, "batches", id)
	os.MkdirAll(last, 0o755)
	if err := os.WriteFile(filepath.Join(last, "DONE"), nil, 0o644); err != nil {
		return err
	}
	return writeProgress(a.dir, progress{a.turns, a.chunk})
}

// compactKept compacts the states of a kept copy as the tools compact
// theirs after a batch (boltstate.CompactIfSparse): a copy aged before the
// tools compacted holds the free pages of its chunks, which a crawl run by
// the tools would not.
func compactKept(snap string, cfg crawlsim.Config) error {
	a, err := newAger(snap, cfg)
	if err != nil {
		return err
	}
	defer a.close()
	for i, compact := range []func() (boltstate.Compaction, error){a.op.Compact, a.rq.Compact, a.sk.Compact} {
		name := []string{"opic", "recrawl", "sekitei"}[i]
		c, err := compact()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if c.Done {
			fmt.Fprintf(os.Stderr, "lifebench: %s: compacted the %s state: %v\n", snap, name, c)
		}
	}
	return nil
}

// sync closes the states so that a copy of the directory is whole, and
// opens them again.
func (a *ager) sync() error {
	a.close()
	b, err := newAger(a.dir, a.cfg)
	if err != nil {
		return err
	}
	b.turns, b.chunk, b.spent = a.turns, a.chunk, a.spent
	*a = *b
	return nil
}

func (a *ager) close() {
	if a.closed {
		return
	}
	a.closed = true
	a.op.Close()
	a.rq.Close()
	a.sk.Close()
}

// measureTurn copies the aged crawl to dst and runs one turn of the loop
// on it with the fetch replayed.
func measureTurn(root, bin, aged, dst string, cfg crawlsim.Config, age int) (measure, error) {
	m := measure{age: age, secs: map[string]float64{}, rssMB: map[string]float64{}, disk: map[string]int64{}}
	os.RemoveAll(dst)
	if err := restoreIndex(filepath.Join(aged, "index")); err != nil {
		return m, err
	}
	if err := linkCopy(aged, dst); err != nil {
		return m, err
	}
	defer restoreIndex(filepath.Join(aged, "index"))
	m.disk["state"] = du(filepath.Join(aged, "state"))
	m.disk["index"] = du(filepath.Join(aged, "index"))
	// A crawl's state at the start of a turn was written an hour before,
	// and is on disk: without this, the copy's gigabytes would be written
	// back during the measured turn (an fsync of a state file writes all
	// of its dirty pages).
	unix.Sync()
	defer os.RemoveAll(dst)
	// The turn's fetch, replayed: records of the next synthetic turn,
	// their exchanges in a WARC file.
	w, err := warc.Create(warc.Options{Dir: filepath.Join(dst, "warc"), Prefix: "replay"})
	if err != nil {
		return m, err
	}
	var replay bytes.Buffer
	for _, f := range cfg.Turn(age) {
		body := f.Body()
		rec := &warc.Record{Header: warc.Header{
			{Name: warc.FieldType, Value: warc.TypeResponse},
			{Name: warc.FieldRecordID, Value: warc.NewRecordID()},
			{Name: warc.FieldTargetURI, Value: f.URL},
			{Name: warc.FieldContentType, Value: warc.ContentTypeHTTPResponse},
		}, Body: strings.NewReader(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", len(body), body))}
		locs, err := w.Write(rec)
		if err != nil {
			return m, err
		}
		replay.Write(f.Record(locs[0].File, locs[0].Offset).AppendJSON(nil))
		replay.WriteByte('\n')
	}
	if err := w.Close(); err != nil {
		return m, err
	}
	replayFile := filepath.Join(dst, "replay.ndjson")
	os.WriteFile(replayFile, replay.Bytes(), 0o644)
	now := cfg.Start.Add(time.Duration(age) * cfg.Every).Format(time.RFC3339)
	conf := fmt.Sprintf("TURN_N=700\nSITE_QUOTA=%d\nMIN_QUOTA=%d\nNOW=%s\n", siteQuota, minQuota, now)
	os.WriteFile(filepath.Join(dst, "crawl.conf"), []byte(conf), 0o644)
	// The index's PageRank runs every 24th turn, not in the measured
	// one: it is timed apart on the copy, first, so that the turn's batch
	// is an ordinary one even where the age falls on a PageRank turn (a
	// year, 8,760 turns, is 365 times 24).
	memlog2 := filepath.Join(dst, "mem-pagerank.log")
	pr := exec.Command(filepath.Join(bin, "barrel"), "pagerank", "--index", filepath.Join(dst, "index"))
	pr.Env = append(os.Environ(), "MEMLOG="+memlog2)
	t0 := time.Now()
	if out, err := pr.CombinedOutput(); err != nil {
		return m, fmt.Errorf("barrel pagerank: %v\n%s", err, out)
	}
	m.secs["pagerank"] = time.Since(t0).Seconds()
	if mem, err := os.ReadFile(memlog2); err == nil {
		if f := strings.Fields(string(mem)); len(f) == 3 {
			kb, _ := strconv.ParseFloat(f[2], 64)
			m.rssMB["pagerank"] = kb / 1024
		}
	}
	unix.Sync() // the ranks it wrote, as the state above
	memlog := filepath.Join(dst, "mem.log")
	cmd := exec.Command(filepath.Join(root, "scripts/crawl-cycle.sh"), dst)
	cmd.Env = append(os.Environ(), "CRAWLKIT_BIN="+bin, "MEMLOG="+memlog, "REPLAY="+replayFile)
	t0 = time.Now()
	out, err := cmd.CombinedOutput()
	m.turn = time.Since(t0).Seconds()
	if err != nil {
		return m, fmt.Errorf("crawl-cycle.sh: %v\n%s", err, out)
	}
	// Whether the turn's batch recomputed PageRank anyway (it should not:
	// the table's index step would hold it).
	idx, err := barrel.Open(filepath.Join(dst, "index"))
	if err != nil {
		return m, fmt.Errorf("the index after the turn: %w", err)
	}
	man := idx.Manifest()
	idx.Close()
	m.rankedInTurn = man.RankSource == "pagerank" && man.RankedAt == man.Batches
	log, _ := os.ReadFile(filepath.Join(dst, "logs", "cycle.log"))
	for _, line := range strings.Split(string(log), "\n") {
		f := strings.Fields(line)
		if len(f) == 5 && f[2] == "took" && f[4] == "s" {
			v, _ := strconv.ParseFloat(f[3], 64)
			m.secs[strings.TrimSuffix(f[1], ":")] = v
		}
	}
	mem, _ := os.ReadFile(memlog)
	for _, line := range strings.Split(string(mem), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[2], 64)
		step := stepOf(f[0], f[1])
		m.rssMB[step] = math.Max(m.rssMB[step], kb/1024)
	}
	return m, nil
}

// stepOf maps a tool's command to the loop's step that runs it.
func stepOf(tool, cmd string) string {
	switch tool + " " + cmd {
	case "recrawl summary", "recrawl lambda0", "recrawl next", "recrawl merge":
		return "select"
	case "sekitei admit":
		return "filter"
	case "recrawl new-sites":
		return "sitemaps"
	case "opic update", "opic exchange":
		return "opic"
	case "recrawl update":
		return "recrawl"
	case "sekitei update":
		return "sekitei"
	case "barrel build":
		return "index"
	}
	return tool + " " + cmd
}

func du(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// spread is a step's median time and, over several runs, its range.
func spread(r measure, step string) string {
	if r.lo[step] == r.hi[step] {
		return fmt.Sprintf("%.2f s", r.secs[step])
	}
	return fmt.Sprintf("%.2f s (%.2f-%.2f)", r.secs[step], r.lo[step], r.hi[step])
}

func print(rs []measure, reps int) {
	fmt.Printf("lifebench: commit %s, %d cores, load average %s; one turn of 700 fetch records (replayed) after each age, %d runs: per step the median time (fastest-slowest) and the largest peak memory\n\n", benchenv.Commit(), numCPU(), benchenv.LoadAverage(), reps)
	for _, r := range rs {
		if r.rankedInTurn {
			fmt.Printf("warning: the measured turn after %d turns recomputed PageRank in its index step\n\n", r.age)
		}
	}
	base := -1 // the age the oldest is compared with: 100 turns, as the targets say
	for i, r := range rs[:len(rs)-1] {
		if r.age == 100 {
			base = i
		}
	}
	head := "| step |"
	sep := "|---|"
	for _, r := range rs {
		head += fmt.Sprintf(" %d turns |", r.age)
		sep += "---|"
	}
	if len(rs) >= 2 {
		head += " growth k (time ~ age^k) |"
		sep += "---|"
	}
	if base >= 0 {
		head += fmt.Sprintf(" %d turns / 100 turns |", rs[len(rs)-1].age)
		sep += "---|"
	}
	fmt.Println(head)
	fmt.Println(sep)
	total := make([]float64, len(rs))
	for _, s := range steps {
		row := "| " + s + " |"
		for i, r := range rs {
			row += fmt.Sprintf(" %s, %.0f MB |", spread(r, s), r.rssMB[s])
			if s != "fetch" {
				total[i] += r.secs[s]
			}
		}
		if len(rs) >= 2 {
			row += " " + growth(rs, func(r measure) float64 { return r.secs[s] }) + " |"
		}
		if base >= 0 {
			row += " " + ratio(rs[len(rs)-1].secs[s], rs[base].secs[s]) + " |"
		}
		fmt.Println(row)
	}
	row := "| **non-fetch steps** |"
	for i := range rs {
		row += fmt.Sprintf(" **%.2f s** |", total[i])
	}
	if len(rs) >= 2 {
		k := growth(rs, func(r measure) float64 {
			t := 0.0
			for _, s := range steps {
				if s != "fetch" {
					t += r.secs[s]
				}
			}
			return t
		})
		row += " " + k + " |"
	}
	if base >= 0 {
		row += " " + ratio(total[len(rs)-1], total[base]) + " |"
	}
	fmt.Println(row)
	row = "| index PageRank (every 24th turn, apart) |"
	for _, r := range rs {
		row += fmt.Sprintf(" %s, %.0f MB |", spread(r, "pagerank"), r.rssMB["pagerank"])
	}
	if len(rs) >= 2 {
		row += " " + growth(rs, func(r measure) float64 { return r.secs["pagerank"] }) + " |"
	}
	if base >= 0 {
		row += " " + ratio(rs[len(rs)-1].secs["pagerank"], rs[base].secs["pagerank"]) + " |"
	}
	fmt.Println(row)
	row = "| state + index on disk |"
	for _, r := range rs {
		row += fmt.Sprintf(" %.0f + %.0f MB |", float64(r.disk["state"])/1e6, float64(r.disk["index"])/1e6)
	}
	fmt.Println(row)
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// growth is the exponent k of time ~ age^k between the two oldest ages.
func growth(rs []measure, f func(measure) float64) string {
	a, b := rs[len(rs)-2], rs[len(rs)-1]
	if f(a) <= 0 || f(b) <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", math.Log(f(b)/f(a))/math.Log(float64(b.age)/float64(a.age)))
}

func numCPU() int {
	out, err := exec.Command("nproc").Output()
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}
