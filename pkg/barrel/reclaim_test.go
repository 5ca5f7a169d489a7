package barrel

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

// reclaimSite is the crawl of the reclaim tests: batch k adds 60 new
// pages and fetches 60 older ones again with new content.
var reclaimSite = synth.New(100000, 3000, 9)

func reclaimBatch(t testing.TB, dir string, batch int, opts Options, noReclaim bool) *Stats {
	t.Helper()
	opts.Batch = strconv.Itoa(batch)
	b, err := NewBuilder(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.noReclaim = noReclaim
	for i := range 120 {
		k := batch*60 + i
		if i >= 60 {
			k = (batch*37 + i*13) % (batch*60 + 60)
		}
		if err := b.Add(reclaimSite.URL(k), reclaimSite.Page((k+batch*7)%reclaimSite.N)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return &b.Stats
}

// reclaimAnswers are an index's answers to a few queries, with snippets, and a
// few stored pages.
func reclaimAnswers(t testing.TB, dir string) string {
	t.Helper()
	idx := open(t, dir)
	defer idx.Close()
	if err := idx.Verify(); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	var out strings.Builder
	for _, q := range []string{"the", "of and", "page", "site", "a b c"} {
		rs, err := idx.Search(q, SearchOptions{N: 20})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs.Results {
			fmt.Fprintf(&out, "%s\t%d\t%s\t%.9g\t%s\t%s\n", q, r.Doc, r.URL, r.Score, r.Title, r.Snippet)
		}
	}
	for d := uint32(0); d < idx.Manifest().Docs; d += 7 {
		u, body, err := idx.Page(d)
		if err == ErrNotFetched {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%d\t%s\t%x\n", d, u, crc(body))
	}
	return out.String()
}

func withReclaim(t *testing.T, fraction float64, min, step int64) {
	f, m, st := reclaimFraction, reclaimMin, reclaimStep
	reclaimFraction, reclaimMin, reclaimStep = fraction, min, step
	t.Cleanup(func() { reclaimFraction, reclaimMin, reclaimStep = f, m, st })
}

// reclaimFiles lists the files of kind in dir, and those the manifest
// says should be there.
func reclaimFiles(t testing.TB, dir, kind string, m *Manifest) (got, want []string) {
	sp := m.RepoSpace
	if kind == textName {
		sp = m.TextSpace
	}
	got, _ = filepath.Glob(filepath.Join(dir, kind+"*"))
	want = []string{filepath.Join(dir, sp.name(kind))}
	if sp.Copy != nil {
		want = append(want, filepath.Join(dir, sp.Copy.File))
	}
	slices.Sort(want)
	return got, want
}

// Reclaim gives back the dead records' space and changes no answer: the
// same batches with reclaim on and off give the same results, snippets
// and stored pages; the reclaimed index is smaller on disk, verifies, and
// takes further batches.
func TestReclaimKeepsAnswers(t *testing.T) {
	withReclaim(t, 0.1, 0, 100<<10)
	on, off := filepath.Join(t.TempDir(), "on"), filepath.Join(t.TempDir(), "off")
	steps, done := map[string]int{}, map[string]int{}
	var files [2]string
	for batch := range 16 {
		st := reclaimBatch(t, on, batch, Options{MergeFactor: 2, PageRankEvery: 3}, false)
		steps[st.Reclaimed]++
		reclaimBatch(t, off, batch, Options{MergeFactor: 2, PageRankEvery: 3}, true)
		m, err := readManifest(on)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range []string{m.RepoSpace.File, m.TextSpace.File} {
			if f != files[i] {
				done[[]string{repoName, textName}[i]]++
				files[i] = f
			}
		}
		if m.RepoSpace.Copy != nil || m.TextSpace.Copy != nil || batch%4 == 3 {
			// Mid-copy too: reads go to the old file.
			if a, b := reclaimAnswers(t, on), reclaimAnswers(t, off); a != b {
				t.Fatalf("batch %d: answers differ with reclaim:\n%s\nwithout:\n%s", batch, a, b)
			}
		}
	}
	// Copies of several steps, each file replaced at least once.
	if done[repoName] == 0 || done[textName] == 0 || steps[repoName] <= done[repoName] || steps[textName] <= done[textName] {
		t.Fatalf("over 16 batches: reclaim steps %v, files replaced %v; want both files replaced, in more steps than copies", steps, done)
	}
	mOn, err := readManifest(on)
	if err != nil {
		t.Fatal(err)
	}
	mOff, _ := readManifest(off)
	if mOn.Repository != mOff.Repository || mOn.Text != mOff.Text {
		t.Errorf("logical lengths differ: %d/%d against %d/%d", mOn.Repository, mOn.Text, mOff.Repository, mOff.Text)
	}
	if mOn.RepositoryBytes() >= mOff.RepositoryBytes() || mOn.TextBytes() >= mOff.TextBytes() {
		t.Errorf("reclaimed repository %d and text %d bytes, not less than %d and %d", mOn.RepositoryBytes(), mOn.TextBytes(), mOff.RepositoryBytes(), mOff.TextBytes())
	}
	// On disk: exactly the files the manifest names.
	for _, sp := range []struct {
		kind string
		sp   Reclaimed
		size int64
	}{{repoName, mOn.RepoSpace, mOn.RepositoryBytes()}, {textName, mOn.TextSpace, mOn.TextBytes()}} {
		st, err := os.Stat(filepath.Join(on, sp.sp.name(sp.kind)))
		if err != nil || st.Size() != sp.size {
			t.Errorf("%s: %v, want %d bytes", sp.sp.name(sp.kind), err, sp.size)
		}
		if got, want := reclaimFiles(t, on, sp.kind, mOn); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: files %v, want %v", sp.kind, got, want)
		}
	}
	// Rebuild reads the reclaimed repository: the same pages.
	if _, err := Rebuild(t.Context(), on, Options{}); err != nil {
		t.Fatal(err)
	}
	idx := open(t, on)
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	if got := idx.Manifest().Fetched; got != mOff.Fetched {
		t.Errorf("rebuilt from the reclaimed repository: %d pages, want %d", got, mOff.Fetched)
	}
	idx.Close()
}

// An index of format 6 (no reclaim fields) is read as it is, and reclaimed
// once dead records pass the fraction after it becomes format 7.
func TestReclaimFormat6(t *testing.T) {
	withReclaim(t, 0.1, 0, 100<<10)
	dir := filepath.Join(t.TempDir(), "idx")
	for batch := range 4 {
		reclaimBatch(t, dir, batch, Options{}, true)
	}
	want := reclaimAnswers(t, dir)
	raw, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	j["format"] = 6
	delete(j, "repository_space")
	delete(j, "text_space")
	raw, _ = json.Marshal(j)
	if err := os.WriteFile(filepath.Join(dir, manifestName), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := reclaimAnswers(t, dir); got != want {
		t.Fatal("a format 6 index answers otherwise")
	}
	reclaimed := ""
	for batch := 4; batch < 12 && reclaimed == ""; batch++ {
		reclaimed = reclaimBatch(t, dir, batch, Options{}, false).Reclaimed
	}
	if reclaimed == "" {
		t.Fatal("no reclaim in 8 batches after format 6")
	}
	if m, _ := readManifest(dir); m.Format != formatNumber {
		t.Errorf("format %d after a commit, want %d", m.Format, formatNumber)
	}
	reclaimAnswers(t, dir) // verifies
}

// TestReclaimKillChild is the child of TestReclaimKill: it adds batches to
// the index in $BARREL_RECLAIM_DIR, reclaiming at nearly every commit,
// until it is killed; with $BARREL_RECLAIM_AT=stage:batch it kills itself
// (SIGKILL) at that stage of that batch's reclaim.
func TestReclaimKillChild(t *testing.T) {
	dir := os.Getenv("BARREL_RECLAIM_DIR")
	if dir == "" {
		return // run only as TestReclaimKill's child
	}
	withReclaim(t, 0.01, 0, 60<<10)
	stage, at, _ := strings.Cut(os.Getenv("BARREL_RECLAIM_AT"), ":")
	m, err := readManifest(dir)
	next := 0
	if err == nil {
		next = m.Batches
	}
	for batch := next; ; batch++ {
		if n, err := strconv.Atoi(at); err == nil && batch >= n {
			reclaimHook = func(s string) {
				if s == stage {
					os.WriteFile(dir+".killed", []byte(strconv.Itoa(batch)), 0o644)
					syscall.Kill(os.Getpid(), syscall.SIGKILL)
				}
			}
		}
		reclaimBatch(t, dir, batch, Options{MergeFactor: 2, PageRankEvery: 3}, false)
	}
}

// TestReclaimKill kills (SIGKILL) a process whose commits reclaim: after
// its reclaim's files are written, after the manifest naming them is in
// (the old file not yet removed), and at timed moments. Each time the
// index verifies, holds only the files its manifest names, and answers as
// the same batches built without reclaim do; the killed process's
// successor goes on from there.
func TestReclaimKill(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(t.TempDir(), "ref")
	refBatches, underWay := 0, 0
	for round, kill := range []string{"written:2", "committed:4", "", "written:7", "", "committed:10"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReclaimKillChild$")
		cmd.Env = append(os.Environ(), "BARREL_RECLAIM_DIR="+dir, "BARREL_RECLAIM_AT="+kill)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if kill == "" {
			time.Sleep(900 * time.Millisecond) // a kill point, not a measurement
			cmd.Process.Signal(syscall.SIGKILL)
		}
		err := <-done
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child ended with %v, not killed", round, err)
		}
		m, err := readManifest(dir)
		if err != nil {
			continue // killed before the first commit
		}
		// The reference: the same batches, reclaim off.
		for ; refBatches < m.Batches; refBatches++ {
			reclaimBatch(t, ref, refBatches, Options{MergeFactor: 2, PageRankEvery: 3}, true)
		}
		if kill != "" {
			// Killed in batch k's commit: batches 0 to k-1 are in after
			// "written", 0 to k after "committed".
			b, err := os.ReadFile(dir + ".killed")
			if err != nil {
				t.Fatal(err)
			}
			k, _ := strconv.Atoi(string(b))
			if strings.HasPrefix(kill, "committed") {
				k++
			}
			if m.Batches != k {
				t.Fatalf("round %d: killed at %s in batch %s: %d batches in the index, want %d", round, kill, b, m.Batches, k)
			}
			os.Remove(dir + ".killed")
		}
		if got, want := reclaimAnswers(t, dir), reclaimAnswers(t, ref); got != want {
			t.Fatalf("round %d (kill %q): after kill -9 the index answers\n%s\nthe same batches without reclaim\n%s", round, kill, got, want)
		}
		// The next builder removes what the dead one left.
		b, err := NewBuilder(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		for _, kind := range []string{repoName, textName} {
			if got, want := reclaimFiles(t, dir, kind, m); !reflect.DeepEqual(got, want) {
				t.Errorf("round %d: %s files %v, want %v", round, kind, got, want)
			}
		}
		// and cuts a copy under way back to its committed length.
		for _, sp := range []Reclaimed{m.RepoSpace, m.TextSpace} {
			if c := sp.Copy; c != nil {
				underWay++
				if st, err := os.Stat(filepath.Join(dir, c.File)); err != nil || st.Size() != c.Size {
					t.Errorf("round %d: %s: %v, want %d bytes", round, c.File, err, c.Size)
				}
			}
		}
	}
	if underWay == 0 {
		t.Error("no kill found a copy under way")
	}
	m, err := readManifest(dir)
	if err != nil || m.RepoSpace.File == "" || m.TextSpace.File == "" {
		t.Fatalf("no reclaim committed in the rounds: %v %+v %+v", err, m.RepoSpace, m.TextSpace)
	}
}
