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
	// Every document's rank (PageRank over the live links) and its
	// entry's count of anchor records, which decides its re-indexing.
	if err := idx.eachLive(func(d uint32, e DocEntry) error {
		r, err := idx.rank(d)
		fmt.Fprintf(&out, "%d\t%.9g\t%d\t%d\n", d, r, e.Anchors, e.Words)
		return err
	}); err != nil {
		t.Fatal(err)
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
	sp := *m.space(kind).sp
	got, _ = filepath.Glob(filepath.Join(dir, kind+"*"))
	got = slices.DeleteFunc(got, func(f string) bool { return strings.HasSuffix(f, ".tab") }) // anchor runs
	want = []string{filepath.Join(dir, sp.name(kind))}
	if sp.Copy != nil {
		want = append(want, filepath.Join(dir, sp.Copy.File))
	}
	slices.Sort(want)
	return got, want
}

// reclaimKinds are the files reclaim gives space back from.
var reclaimKinds = []string{repoName, textName, docInfoName, anchorsName}

// checkAnchorCounts checks the manifest's count of anchor records, live
// and in all, against a count over the anchors file.
func checkAnchorCounts(t *testing.T, dir string) {
	t.Helper()
	idx := open(t, dir)
	defer idx.Close()
	records, live, err := idx.anchorCounts()
	if err != nil {
		t.Fatal(err)
	}
	m := idx.Manifest()
	if live != m.LiveAnchors || m.AnchorSpace.Copy == nil && m.AnchorSpace.Records != records {
		t.Errorf("%s: %d anchor records, %d live; the manifest says %d and %d", dir, records, live, m.AnchorSpace.Records, m.LiveAnchors)
	}
}

// Reclaim gives back the dead records' space and changes no answer: the
// same batches with reclaim on and off give the same results, snippets,
// stored pages, ranks and counts of anchors, also while a copy of each
// file is under way; the reclaimed index is smaller on disk, verifies,
// and takes further batches.
func TestReclaimKeepsAnswers(t *testing.T) {
	withReclaim(t, 0.1, 0, 40<<10)
	on, off := filepath.Join(t.TempDir(), "on"), filepath.Join(t.TempDir(), "off")
	steps, done, mid := map[string]int{}, map[string]int{}, map[string]int{}
	files := map[string]string{}
	dropped := 0
	for batch := range 24 {
		st := reclaimBatch(t, on, batch, Options{MergeFactor: 2, PageRankEvery: 3}, false)
		steps[st.Reclaimed]++
		dropped += st.AnchorsDropped
		stOff := reclaimBatch(t, off, batch, Options{MergeFactor: 2, PageRankEvery: 3}, true)
		if st.AnchorsRead != stOff.AnchorsRead || st.Targets != stOff.Targets || st.Waiting != stOff.Waiting {
			t.Errorf("batch %d: anchors read %d, targets %d, waiting %d; without reclaim %d, %d, %d", batch, st.AnchorsRead, st.Targets, st.Waiting, stOff.AnchorsRead, stOff.Targets, stOff.Waiting)
		}
		m, err := readManifest(on)
		if err != nil {
			t.Fatal(err)
		}
		copying := ""
		for _, kind := range reclaimKinds {
			sp := m.space(kind).sp
			if sp.File != files[kind] {
				done[kind]++
				files[kind] = sp.File
			}
			if sp.Copy != nil {
				copying = kind
			}
		}
		if copying != "" || batch%4 == 3 {
			// Mid-copy too: reads go to the old file.
			mid[copying]++
			if a, b := reclaimAnswers(t, on), reclaimAnswers(t, off); a != b {
				t.Fatalf("batch %d: answers differ with reclaim:\n%s\nwithout:\n%s", batch, a, b)
			}
		}
	}
	t.Logf("reclaim steps %v, files replaced %v, answers compared mid-copy %v, dropped anchors met %d", steps, done, mid, dropped)
	if dropped == 0 {
		t.Error("no batch met an anchor record a reclaim had dropped")
	}
	// Copies of several steps, each file replaced at least once.
	for _, kind := range reclaimKinds {
		if done[kind] == 0 || steps[kind] <= done[kind] || mid[kind] == 0 {
			t.Fatalf("over 24 batches: reclaim steps %v, files replaced %v, answers compared mid-copy %v; want each file replaced, in more steps than copies, and compared mid-copy", steps, done, mid)
		}
	}
	mOn, err := readManifest(on)
	if err != nil {
		t.Fatal(err)
	}
	mOff, _ := readManifest(off)
	if mOn.Repository != mOff.Repository || mOn.Text != mOff.Text || mOn.DocInfo != mOff.DocInfo || mOn.Anchors != mOff.Anchors || mOn.LiveAnchors != mOff.LiveAnchors {
		t.Errorf("logical lengths differ: %d/%d/%d/%d/%d against %d/%d/%d/%d/%d", mOn.Repository, mOn.Text, mOn.DocInfo, mOn.Anchors, mOn.LiveAnchors, mOff.Repository, mOff.Text, mOff.DocInfo, mOff.Anchors, mOff.LiveAnchors)
	}
	checkAnchorCounts(t, on)
	checkAnchorCounts(t, off)
	// On disk: less, and exactly the files the manifest names.
	for _, kind := range reclaimKinds {
		son, soff := mOn.space(kind), mOff.space(kind)
		size, offSize := son.sp.physical(*son.size), soff.sp.physical(*soff.size)
		if size >= offSize {
			t.Errorf("reclaimed %s: %d bytes, not less than %d", kind, size, offSize)
		}
		st, err := os.Stat(filepath.Join(on, son.sp.name(kind)))
		if err != nil || st.Size() != size {
			t.Errorf("%s: %v, want %d bytes", son.sp.name(kind), err, size)
		}
		if got, want := reclaimFiles(t, on, kind, mOn); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: files %v, want %v", kind, got, want)
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

// oldManifest makes the manifest in dir one of format, without the
// fields drop (which that format did not have).
func oldManifest(t *testing.T, dir string, format int, drop ...string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	j["format"] = format
	for _, f := range drop {
		delete(j, f)
	}
	raw, _ = json.Marshal(j)
	if err := os.WriteFile(filepath.Join(dir, manifestName), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An index of format 7 (no docinfo or anchors reclaim fields) is read as
// it is; its first commit counts its anchors, and its docinfo and anchors
// are reclaimed once their dead records pass the fraction, the answers
// those of the same batches without reclaim.
func TestReclaimFormat7(t *testing.T) {
	withReclaim(t, 0.1, 0, 100<<10)
	dir, ref := filepath.Join(t.TempDir(), "idx"), filepath.Join(t.TempDir(), "ref")
	for batch := range 4 {
		reclaimBatch(t, dir, batch, Options{}, true)
		reclaimBatch(t, ref, batch, Options{}, true)
	}
	want := reclaimAnswers(t, dir)
	oldManifest(t, dir, 7, "docinfo_space", "anchors_space", "live_anchors")
	if got := reclaimAnswers(t, dir); got != want {
		t.Fatal("a format 7 index answers otherwise")
	}
	reclaimed := map[string]bool{}
	for batch := 4; batch < 20 && !(reclaimed[docInfoName] && reclaimed[anchorsName]); batch++ {
		reclaimed[reclaimBatch(t, dir, batch, Options{}, false).Reclaimed] = true
		reclaimBatch(t, ref, batch, Options{}, true)
		if batch == 4 {
			if m, _ := readManifest(dir); m.Format != formatNumber {
				t.Errorf("format %d after a commit, want %d", m.Format, formatNumber)
			}
			checkAnchorCounts(t, dir)
		}
	}
	if !reclaimed[docInfoName] || !reclaimed[anchorsName] {
		t.Fatalf("reclaimed %v in 16 batches after format 7; want docinfo and anchors", reclaimed)
	}
	checkAnchorCounts(t, dir)
	if got, want := reclaimAnswers(t, dir), reclaimAnswers(t, ref); got != want {
		t.Fatalf("after format 7 and reclaim the index answers\n%s\nthe same batches without reclaim\n%s", got, want)
	}
}

// An index of format 6 (no reclaim fields) is read as it is, and reclaimed
// once dead records pass the fraction after it becomes the current format.
func TestReclaimFormat6(t *testing.T) {
	withReclaim(t, 0.1, 0, 100<<10)
	dir := filepath.Join(t.TempDir(), "idx")
	for batch := range 4 {
		reclaimBatch(t, dir, batch, Options{}, true)
	}
	want := reclaimAnswers(t, dir)
	oldManifest(t, dir, 6, "repository_space", "text_space", "docinfo_space", "anchors_space", "live_anchors")
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
	checkAnchorCounts(t, dir)
}

// TestReclaimKillChild is the child of TestReclaimKill: it adds batches to
// the index in $BARREL_RECLAIM_DIR, reclaiming at nearly every commit,
// until it is killed (or 100 batches are in); with
// $BARREL_RECLAIM_AT=stage:batch:kind it kills itself (SIGKILL) at that
// stage of the first reclaim of that file from that batch on.
func TestReclaimKillChild(t *testing.T) {
	dir := os.Getenv("BARREL_RECLAIM_DIR")
	if dir == "" {
		return // run only as TestReclaimKill's child
	}
	withReclaim(t, 0.01, 0, 60<<10)
	stage, at, _ := strings.Cut(os.Getenv("BARREL_RECLAIM_AT"), ":")
	at, kind, _ := strings.Cut(at, ":")
	m, err := readManifest(dir)
	next := 0
	if err == nil {
		next = m.Batches
	}
	for batch := next; batch < next+100; batch++ {
		if n, err := strconv.Atoi(at); err == nil && batch >= n {
			reclaimHook = func(s, k string) {
				if s == stage && k == kind {
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
	refBatches, underWay := 0, map[string]int{}
	killed := map[string]int{}
	for round, kill := range []string{"committed:3:anchors", "written:4:anchors", "", "written:5:docinfo", "committed:6:docinfo", "written:9:repository", "committed:14:text", "", "written:19:anchors", "committed:21:anchors", "written:24:anchors", "committed:28:docinfo"} {
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
			killed[kill[strings.LastIndex(kill, ":")+1:]]++
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
		for _, kind := range reclaimKinds {
			if got, want := reclaimFiles(t, dir, kind, m); !reflect.DeepEqual(got, want) {
				t.Errorf("round %d: %s files %v, want %v", round, kind, got, want)
			}
		}
		// and cuts a copy under way back to its committed length.
		for _, kind := range reclaimKinds {
			if c := m.space(kind).sp.Copy; c != nil {
				underWay[kind]++
				if st, err := os.Stat(filepath.Join(dir, c.File)); err != nil || st.Size() != c.Size {
					t.Errorf("round %d: %s: %v, want %d bytes", round, c.File, err, c.Size)
				}
			}
		}
	}
	t.Logf("kills in a reclaim of %v; copies under way after a kill %v", killed, underWay)
	if underWay[anchorsName] == 0 || underWay[docInfoName] == 0 {
		t.Errorf("no kill found a copy of the anchors and of docinfo under way: %v", underWay)
	}
	m, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range reclaimKinds {
		if m.space(kind).sp.File == "" {
			t.Errorf("no reclaim of %s committed in the rounds", kind)
		}
	}
	checkAnchorCounts(t, dir)
}

// An open index reads its docinfo records (a result's URL and title) from
// a mapping of the file's committed bytes; a build that appends to the
// file meanwhile leaves the open index's answers as they were, and a read
// past the mapping (the records appended since) goes to the file.
func TestDocInfoMapped(t *testing.T) {
	dir := t.TempDir()
	page := func(title, words string) string {
		return "<html><head><title>" + title + "</title></head><body><p>" + words + "</p></body></html>"
	}
	build(t, dir, Options{}, map[string]string{
		"http://m.test/a": page("Alpha gravel", "gravel and sand"),
		"http://m.test/b": page("Beta gravel", "gravel gravel stones"),
	})
	idx := open(t, dir)
	defer idx.Close()
	end := idx.m.InfoSpace.physical(idx.m.DocInfo)
	if int64(len(idx.info.data)) != end || end == 0 {
		t.Fatalf("docinfo mapped %d bytes, committed %d", len(idx.info.data), end)
	}
	answer := func() string {
		r, err := idx.Search("gravel", SearchOptions{N: 10, NoSnippets: true})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, x := range r.Results {
			fmt.Fprintf(&b, "%s %q\n", x.URL, x.Title)
		}
		return b.String()
	}
	before := answer()
	if !strings.Contains(before, `http://m.test/a "Alpha gravel"`) || !strings.Contains(before, `http://m.test/b "Beta gravel"`) {
		t.Fatalf("results:\n%s", before)
	}
	build(t, dir, Options{}, map[string]string{ // a page fetched again, and a new one
		"http://m.test/a": page("Alpha gravel, revised", "gravel"),
		"http://m.test/c": page("Gamma gravel", "gravel pits"),
	})
	if got := answer(); got != before {
		t.Errorf("the open index's results changed with a later build:\n%s\nwere\n%s", got, before)
	}
	buf := make([]byte, 8)
	if n, err := idx.info.ReadAt(buf, end); n != len(buf) || err != nil {
		t.Errorf("a read past the mapping: %d bytes, %v (the file holds the later build's records)", n, err)
	}
	now := open(t, dir)
	defer now.Close()
	r, err := now.Search("gravel", SearchOptions{N: 10, NoSnippets: true})
	if err != nil || len(r.Results) != 3 {
		t.Fatalf("%+v %v", r, err)
	}
	for _, x := range r.Results {
		if x.URL == "http://m.test/a" && x.Title != "Alpha gravel, revised" {
			t.Errorf("the index reopened reads %q for a", x.Title)
		}
	}
}
