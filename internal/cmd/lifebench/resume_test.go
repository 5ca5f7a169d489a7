package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/internal/crawlsim"
	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/opic"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
	"github.com/sekitei/crawlkit/pkg/sekitei"
)

// TestResumeInPlace ages one crawl to 12 turns in one run, and another to
// 8 turns, stopped there with opic already holding the next chunk (a run
// killed inside a chunk), then resumed to 12: both end in the same state.
func TestResumeInPlace(t *testing.T) {
	cfg := crawlsim.Default()
	cfg.Hosts, cfg.NewPerTurn, cfg.RecrawlPerTurn = 20, 30, 10
	const chunk = 4
	ages := []int{12}

	whole := t.TempDir()
	if err := ageAll(whole, filepath.Join(whole, "crawl"), cfg, ages, chunk); err != nil {
		t.Fatal(err)
	}

	stopped := t.TempDir()
	crawl := filepath.Join(stopped, "crawl")
	a, err := resumeAger(stopped, crawl, cfg, ages, chunk)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := a.apply(chunk); err != nil {
			t.Fatal(err)
		}
	}
	// The kill: opic has committed the third chunk, nothing else has.
	var items []opic.Item
	for tn := 8; tn < 12; tn++ {
		for _, f := range cfg.Turn(tn) {
			it, err := opic.ParseLine(f.Record("", 0).AppendJSON(nil))
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, it)
		}
	}
	if _, err := a.op.Apply(batchID(cfg, 12), items); err != nil {
		t.Fatal(err)
	}
	a.close()
	// A file of the stopped crawl's own: the resumed run must age this
	// directory, not start another.
	if err := os.WriteFile(filepath.Join(crawl, "mark"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := readProgress(crawl); err != nil || p.turns != 8 || p.chunk != chunk {
		t.Fatalf("progress %+v, %v", p, err)
	}

	if err := ageAll(stopped, crawl, cfg, ages, chunk); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(snapshotDir(stopped, 12), "mark")); err != nil {
		t.Fatalf("the crawl was aged again from nothing: %v", err)
	}
	want, got := summarize(t, snapshotDir(whole, 12)), summarize(t, snapshotDir(stopped, 12))
	if got != want {
		t.Fatalf("resumed crawl %+v, aged at once %+v", got, want)
	}
	if want.recrawlPages == 0 || want.indexDocs == 0 || want.recrawlBatch != batchID(cfg, 12) || want.indexBatch != batchID(cfg, 12) {
		t.Fatalf("the crawl did not age: %+v", want)
	}
}

type crawlSummary struct {
	opicPages, recrawlPages, indexDocs                int
	opicBatch, recrawlBatch, sekiteiBatch, indexBatch string
}

func summarize(t *testing.T, dir string) crawlSummary {
	t.Helper()
	var s crawlSummary
	op, err := opic.Open(filepath.Join(dir, "state", "opic.db"), opic.DBOptions{Damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	s.opicPages = op.Len()
	s.opicBatch, _ = op.LastBatch()
	op.Close()
	q, err := queue.Open(filepath.Join(dir, "state", "recrawl.db"), queue.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.recrawlBatch, err = q.LastBatch(); err != nil {
		t.Fatal(err)
	}
	q.Pages(func(queue.PageInfo) error { s.recrawlPages++; return nil })
	q.Close()
	sk, err := sekitei.OpenState(filepath.Join(dir, "state", "sekitei.db"), sekitei.StateOptions{SiteQuota: siteQuota, MinQuota: minQuota, Regrow: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if s.sekiteiBatch, err = sk.LastBatch(); err != nil {
		t.Fatal(err)
	}
	sk.Close()
	idx, err := barrel.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	m := idx.Manifest()
	s.indexDocs, s.indexBatch = idx.Docs(), m.LastBatch
	idx.Close()
	return s
}

// TestIndexBuildResumes builds the index of a crawl's ages in one run, and
// again in a run stopped at turn 8 and started again: the second run goes
// on from the checkpoint of turn 6, not from turn 0, and ends with the
// same index, file for file, and the same batches. An age added later is
// built on from the oldest age built, to the same index as a fresh build.
func TestIndexBuildResumes(t *testing.T) {
	cfg := crawlsim.Default()
	cfg.Hosts, cfg.NewPerTurn, cfg.RecrawlPerTurn = 20, 30, 10
	ages := []int{4, 12}
	defer func(n int) { checkpointEvery, beforeBatch = n, nil }(checkpointEvery)
	checkpointEvery = 3

	build := func(snaps string) {
		t.Helper()
		for _, age := range ages {
			if err := os.MkdirAll(snapshotDir(snaps, age), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := indexAges(snaps, cfg, ages); err != nil {
			t.Fatal(err)
		}
	}
	whole := t.TempDir()
	build(whole)

	stopped := t.TempDir()
	var batches []int
	stop := true
	beforeBatch = func(from int) error {
		batches = append(batches, from)
		if from == 8 && stop {
			return errors.New("stopped")
		}
		return nil
	}
	for _, age := range ages {
		if err := os.MkdirAll(snapshotDir(stopped, age), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := indexAges(stopped, cfg, ages); err == nil {
		t.Fatal("the stopped build did not stop")
	}
	if n, _, err := readCheckpoint(stopped); err != nil || n != 6 {
		t.Fatalf("checkpoint at turn %d (%v), want 6", n, err)
	}
	batches, stop = nil, false
	build(stopped)
	if want := []int{6, 7, 8, 9, 10, 11}; !slices.Equal(batches, want) {
		t.Errorf("the resumed build indexed the batches from turns %v, want %v", batches, want)
	}
	if _, err := os.Stat(filepath.Join(stopped, checkpointDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the finished build left its checkpoint: %v", err)
	}
	for _, age := range ages {
		a, b := filepath.Join(snapshotDir(whole, age), "index"), filepath.Join(snapshotDir(stopped, age), "index")
		if fa, fb := indexFiles(t, a), indexFiles(t, b); !maps.Equal(fa, fb) {
			t.Errorf("age %d: the resumed index has files %v, the whole build's %v", age, fb, fa)
		}
		la, err := readIndexLog(filepath.Join(snapshotDir(whole, age), indexLog))
		if err != nil {
			t.Fatal(err)
		}
		lb, err := readIndexLog(filepath.Join(snapshotDir(stopped, age), indexLog))
		if err != nil {
			t.Fatal(err)
		}
		if len(la) != len(lb) {
			t.Fatalf("age %d: %d batches logged, the whole build %d", age, len(lb), len(la))
		}
		for i := range la {
			if la[i].turn != lb[i].turn || la[i].pages != lb[i].pages || la[i].segments != lb[i].segments || la[i].bytes != lb[i].bytes {
				t.Errorf("age %d, batch %d: resumed %+v, whole %+v", age, i, lb[i], la[i])
			}
		}
	}
	// An older age added later goes on from the oldest age built.
	ages = append(ages, 16)
	batches = nil
	build(stopped)
	if want := []int{12, 13, 14, 15}; !slices.Equal(batches, want) {
		t.Errorf("the build to 16 turns indexed the batches from turns %v, want %v", batches, want)
	}
	batches = nil
	fresh := t.TempDir()
	build(fresh)
	if len(batches) != 16 {
		t.Errorf("a fresh build to 16 turns indexed %d batches", len(batches))
	}
	if fa, fb := indexFiles(t, filepath.Join(snapshotDir(fresh, 16), "index")), indexFiles(t, filepath.Join(snapshotDir(stopped, 16), "index")); !maps.Equal(fa, fb) {
		t.Errorf("age 16: the index built on has files %v, a fresh build's %v", fb, fa)
	}
	idx, err := barrel.Open(filepath.Join(snapshotDir(stopped, 16), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Verify(); err != nil {
		t.Errorf("the resumed index: %v", err)
	}
}

// indexFiles maps an index directory's files to their sizes.
func indexFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int64{}
	for _, e := range es {
		if fi, err := e.Info(); err == nil && e.Name() != "LOCK" {
			m[e.Name()] = fi.Size()
		}
	}
	return m
}

// TestSummarizeRuns: a step's time is the median of the runs with their
// range, and its memory the largest peak, so that one slow run shows as a
// spread instead of being hidden or taken for the usual cost.
func TestSummarizeRuns(t *testing.T) {
	run := func(idx, rss, turn float64) measure {
		return measure{age: 100, secs: map[string]float64{"index": idx}, rssMB: map[string]float64{"index": rss}, turn: turn}
	}
	r := summarizeRuns([]measure{run(0.5, 80, 2), run(4.0, 60, 9), run(0.4, 70, 1)})
	if r.secs["index"] != 0.5 || r.lo["index"] != 0.4 || r.hi["index"] != 4.0 || r.rssMB["index"] != 80 || r.turn != 2 {
		t.Errorf("summary %+v", r)
	}
	if got, want := spread(r, "index"), "0.50 s (0.40-4.00)"; got != want {
		t.Errorf("spread %q, want %q", got, want)
	}
}

// TestOneBatchSizeKept builds a one-batch index once: its size is kept in
// the directory under the build's key, read back by the next run, and
// built again when the key is another's.
func TestOneBatchSizeKept(t *testing.T) {
	cfg := crawlsim.Default()
	cfg.Hosts, cfg.NewPerTurn, cfg.RecrawlPerTurn = 20, 30, 10
	dir := t.TempDir()
	n, err := oneBatchSize(dir, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 {
		t.Fatalf("one-batch index of %d bytes", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "onebatch-3")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the one-batch build is left behind: %v", err)
	}
	kept := filepath.Join(dir, "onebatch-3.size")
	if err := os.WriteFile(kept, []byte(oneBatchKey()+"\n12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := oneBatchSize(dir, cfg, 3); err != nil || got != 12345 {
		t.Fatalf("kept size read back as %d, %v; want 12345", got, err)
	}
	if err := os.WriteFile(kept, []byte("one batch, index format 0\n12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := oneBatchSize(dir, cfg, 3); err != nil || got != n {
		t.Fatalf("a size kept under another key gave %d, %v; want it built again: %d", got, err, n)
	}
}

// TestMeasuredTurnIsOrdinary measures the turn after 24 turns, where the
// loop's PageRank falls due (as it does after a year, 365 times 24): the
// measured turn's index step must add its batch alone, PageRank being
// timed apart.
func TestMeasuredTurnIsOrdinary(t *testing.T) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		t.Fatalf("the measured turn needs /usr/bin/time (scripts/deps.sh installs it): %v", err)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "./cmd/...")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	wrapped := filepath.Join(t.TempDir(), "bin")
	if err := wrapTools(bin, wrapped); err != nil {
		t.Fatal(err)
	}
	cfg := crawlsim.Default()
	cfg.Hosts, cfg.NewPerTurn, cfg.RecrawlPerTurn = 20, 30, 10
	snaps := t.TempDir()
	const age = 24
	if err := ageAll(snaps, filepath.Join(snaps, "crawl"), cfg, []int{age}, 4); err != nil {
		t.Fatal(err)
	}
	m, err := measureTurn(root, wrapped, snapshotDir(snaps, age), filepath.Join(snaps, "measure"), cfg, age)
	if err != nil {
		t.Fatal(err)
	}
	if m.rankedInTurn {
		t.Errorf("the measured turn after %d turns recomputed PageRank in its index step", age)
	}
	if !(m.secs["index"] > 0) || !(m.secs["pagerank"] > 0) {
		t.Errorf("index step %.3f s, PageRank apart %.3f s: want both timed", m.secs["index"], m.secs["pagerank"])
	}
	idx, err := barrel.Open(filepath.Join(snapshotDir(snaps, age), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if got := idx.Manifest().Batches; got != age {
		t.Errorf("the aged index holds %d batches after the measured turn, want %d (the turn runs on a copy)", got, age)
	}
}

// TestCheckpointSwapKilled: a run killed while it writes a checkpoint
// leaves a whole one to resume from, whichever step the kill stopped:
// after the part was written (the new one is taken), while the part's mark
// was written (the old one stays), between the swap's two renames, and in
// a checkpoint half removed (the new one, whole, is taken).
func TestCheckpointSwapKilled(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "MANIFEST"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	logTo := func(n int) []indexCommit {
		var l []indexCommit
		for turn := range n {
			l = append(l, indexCommit{turn: turn, pages: 700, segments: 1})
		}
		return l
	}
	// A checkpoint at turn 6, and one at turn 9 (the part a next
	// checkpoint writes), made whole by writeCheckpoint.
	made := map[int]string{}
	for _, next := range []int{6, 9} {
		snaps := t.TempDir()
		if err := writeCheckpoint(snaps, src, logTo(next), next); err != nil {
			t.Fatal(err)
		}
		made[next] = filepath.Join(snaps, checkpointDir)
	}
	put := func(snaps string, next int, name string) string {
		t.Helper()
		dst := filepath.Join(snaps, name)
		if err := copyDir(made[next], dst); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	ck := checkpointDir
	for _, tc := range []struct {
		name  string
		state func(snaps string)
		want  int
	}{
		{"part written, not swapped", func(s string) { put(s, 6, ck); put(s, 9, ck+".part") }, 6},
		{"part's mark unwritten", func(s string) {
			put(s, 6, ck)
			os.Remove(filepath.Join(put(s, 9, ck+".part"), indexMark))
		}, 6},
		{"between the renames", func(s string) { put(s, 6, ck+".old"); put(s, 9, ck+".part") }, 9},
		{"old removed, part not renamed", func(s string) {
			os.Remove(filepath.Join(put(s, 6, ck), indexMark))
			put(s, 9, ck+".part")
		}, 9},
		{"part's mark unwritten, old set aside", func(s string) {
			put(s, 6, ck+".old")
			os.Remove(filepath.Join(put(s, 9, ck+".part"), indexMark))
		}, 6},
		{"swapped, old not removed", func(s string) { put(s, 6, ck+".old"); put(s, 9, ck) }, 9},
	} {
		snaps := t.TempDir()
		tc.state(snaps)
		next, log, err := readCheckpoint(snaps)
		if err != nil || next != tc.want || len(log) != tc.want {
			t.Errorf("%s: resumed at turn %d with %d batches (%v), want %d", tc.name, next, len(log), err, tc.want)
			continue
		}
		// The next checkpoint is written over what is left.
		if err := writeCheckpoint(snaps, src, logTo(12), 12); err != nil {
			t.Errorf("%s: the next checkpoint: %v", tc.name, err)
		} else if n, _, err := readCheckpoint(snaps); err != nil || n != 12 {
			t.Errorf("%s: after the next checkpoint, resumed at %d (%v), want 12", tc.name, n, err)
		}
	}
}

// TestSearchAges times queries on an age's kept index and on the one-batch
// index of the same pages, which it keeps for the next run.
func TestSearchAges(t *testing.T) {
	cfg := crawlsim.Default()
	cfg.Hosts, cfg.NewPerTurn, cfg.RecrawlPerTurn = 20, 30, 10
	snaps := t.TempDir()
	var out bytes.Buffer
	if err := searchAges(&out, snaps, cfg, []int{6}, 20, 1, ""); err == nil || !strings.Contains(err.Error(), "no index kept at 6 turns") {
		t.Fatalf("without an aged index: %v, want it named", err)
	}
	if err := os.MkdirAll(snapshotDir(snaps, 6), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := indexAges(snaps, cfg, []int{6}); err != nil {
		t.Fatal(err)
	}
	profiles := t.TempDir()
	if err := searchAges(&out, snaps, cfg, []int{6}, 20, 2, profiles); err != nil {
		t.Fatal(err)
	}
	// The loop's index holds a segment per batch not yet merged, the
	// one-batch index one; both hold the same live documents.
	rows := regexp.MustCompile(`(?m)^\| 6 \| (as the loop built it|one batch of the same pages) \| (\d+) \| (\d+) \| ([0-9.]+) ms \(`).FindAllStringSubmatch(out.String(), -1)
	if len(rows) != 2 {
		t.Fatalf("want a row for each index:\n%s", out.String())
	}
	if rows[1][2] != "1" || rows[0][2] == "1" || rows[0][3] != rows[1][3] {
		t.Errorf("segments and documents: loop %s/%s, one batch %s/%s; want several segments against one, the same documents", rows[0][2], rows[0][3], rows[1][2], rows[1][3])
	}
	// And each opened for each query, as one barrel search command.
	opened := regexp.MustCompile(`(?m)^\| 6 \| (as the loop built it|one batch), opened for each of 20 queries \| (\d+) \| (\d+) \| ([0-9.]+) ms \(`).FindAllStringSubmatch(out.String(), -1)
	if len(opened) != 2 || opened[0][2] != rows[0][2] || opened[1][2] != "1" {
		t.Fatalf("want a row for each index opened for each query:\n%s", out.String())
	}
	for i := range opened {
		if ms, _ := strconv.ParseFloat(opened[i][4], 64); !(ms > 0) {
			t.Errorf("%s opened for each query: p50 %s ms", opened[i][1], opened[i][4])
		}
	}
	if n := strings.Count(out.String(), "| 6 | the first against the second |"); n != 2 {
		t.Errorf("%d ratio rows, want 2:\n%s", n, out.String())
	}
	mark := filepath.Join(snaps, "onebatch-6-index", searchIndexMark)
	st, err := os.Stat(mark)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"search-6-loop.pprof", "search-6-onebatch.pprof", "search-6-loop-opened.pprof", "search-6-onebatch-opened.pprof"} {
		if st, err := os.Stat(filepath.Join(profiles, p)); err != nil || st.Size() == 0 {
			t.Errorf("profile %s: %v", p, err)
		}
	}
	if err := searchAges(io.Discard, snaps, cfg, []int{6}, 20, 1, ""); err != nil {
		t.Fatal(err)
	}
	if st2, err := os.Stat(mark); err != nil || !st2.ModTime().Equal(st.ModTime()) {
		t.Errorf("the kept one-batch index was built again (%v)", err)
	}
	// A one-batch index kept under another key (another format or
	// analysis) is built again.
	if err := os.WriteFile(mark, []byte("one batch, index format 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := searchAges(io.Discard, snaps, cfg, []int{6}, 20, 1, ""); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(mark); err != nil || strings.TrimSpace(string(b)) != oneBatchKey() {
		t.Errorf("a stale one-batch index was kept: mark %q (%v)", b, err)
	}
	if qs := searchQueries(cfg, 6, 20); len(qs) != 20 || !slices.Equal(qs, searchQueries(cfg, 6, 20)) {
		t.Errorf("queries: %d, or not the same twice", len(qs))
	}
}
