package barrel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

// batchOf builds one batch of pages (URL to body) with opts.
// buildSynth indexes the first n pages of a synthetic site as one batch.
func buildSynth(t testing.TB, dir string, site *synth.Site, n int) {
	t.Helper()
	var urls []string
	for i := range n {
		urls = append(urls, site.URL(i))
	}
	batchOf(t, dir, Options{}, urls, func(u string) []byte {
		var i int
		fmt.Sscanf(u[strings.LastIndex(u, "/")+1:], "%d.html", &i)
		return site.Page(i)
	})
}

func batchOf(t testing.TB, dir string, opts Options, urls []string, body func(string) []byte) *Stats {
	t.Helper()
	b, err := NewBuilder(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, u := range urls {
		if err := b.Add(u, body(u)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return &b.Stats
}

// byURL summarises results by URL and score, ties ordered by URL, so that
// two indexes of the same pages with different docIDs compare equal.
func byURL(t testing.TB, idx *Index, queries []string, opt SearchOptions) string {
	t.Helper()
	var sb strings.Builder
	for _, q := range queries {
		r, err := idx.Search(q, opt)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		lines := make([]string, len(r.Results))
		for i, x := range r.Results {
			lines[i] = fmt.Sprintf("%.4f %s %q", x.Score, x.URL, x.Title)
		}
		slices.SortFunc(lines, func(a, b string) int { return -strings.Compare(a, b) })
		fmt.Fprintf(&sb, "%s (%d matches, %s): %s\n", q, r.Matches, r.Barrels, strings.Join(lines, " | "))
	}
	return sb.String()
}

// exact summarises results to the bit, with the match counts, the barrels
// read and whether the scan stopped.
func exact(t testing.TB, idx *Index, queries []string, opt SearchOptions) string {
	return resultBits(t, idx, queries, opt, true)
}

// segmentedSite builds 600 synthetic pages in 12 batches, re-crawling (with
// new content) 10 earlier pages per batch, and returns the final content.
func segmentedSite(t testing.TB, dir string, opts Options) (*synth.Site, map[string][]byte, int) {
	merged := 0
	site := synth.New(600, 3000, 7)
	final := map[string][]byte{}
	for batch := range 12 {
		var urls []string
		for i := batch * 50; i < (batch+1)*50; i++ {
			urls = append(urls, site.URL(i))
			final[site.URL(i)] = site.Page(i)
		}
		for k := range 10 { // re-crawls: an earlier page, changed
			if batch == 0 {
				break
			}
			i := (batch*37 + k*13) % (batch * 50)
			u := site.URL(i)
			final[u] = site.Page((i + batch*101) % 600)
			urls = append(urls, u)
		}
		merged += batchOf(t, dir, opts, urls, func(u string) []byte { return final[u] }).Merged
	}
	return site, final, merged
}

// TestSegmentedAsOneShot: an index built in batches, as segments merged by
// the policy, with pages re-crawled, answers as the index built in one go
// from the final pages, and as itself once merged into one segment.
// noProx leaves proximity out of the comparison with the one-shot index:
// an anchor hit holds 4 bits of a hash of the docID it sits in (section
// 4.2.5), and the two build orders give pages different docIDs, so the
// proximity class of anchor hits differs. The comparison after ForceMerge
// (same docIDs) includes proximity.
var noProx = func() Weights { w := DefaultWeights; w.ProxScale = 0; return w }()

func TestSegmentedAsOneShot(t *testing.T) {
	// Deleted documents kept long (merged at 90%), and expunged early (the
	// default policy).
	for _, pct := range []int{90, DefaultDeletesPct} {
		t.Run(fmt.Sprintf("deletes%d", pct), func(t *testing.T) { testSegmentedAsOneShot(t, pct) })
	}
}

func testSegmentedAsOneShot(t *testing.T, deletesPct int) {
	dir := t.TempDir()
	// Every anchor re-indexes its target at once, as the one-shot index
	// has them all (TestAnchorGrowth covers targets that wait).
	site, final, merges := segmentedSite(t, dir, Options{MergeFactor: 2, DeletesPct: deletesPct, FloorDocs: 20, AnchorGrowth: -1})
	idx := open(t, dir)
	segs := idx.Segments()
	if len(segs) < 2 {
		t.Fatalf("want several segments, got %+v", segs)
	}
	deleted := 0
	for _, s := range segs {
		deleted += s.Deleted
	}
	if merges == 0 && deletesPct <= DefaultDeletesPct {
		t.Errorf("no merge in 12 batches: %+v", segs)
	}
	if deleted == 0 && deletesPct > DefaultDeletesPct {
		t.Errorf("no deletions recorded: %+v", segs)
	}
	docs := 0
	for _, s := range segs {
		docs += s.Docs
	}
	if deleted*100 > deletesPct*docs {
		t.Errorf("%d of %d documents deleted, over %d%%, not reclaimed: %+v", deleted, docs, deletesPct, segs)
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	queries := append(site.Queries(60), "zzzunknown")
	opt := SearchOptions{N: 10, NoSnippets: true, Weights: &noProx}
	got := byURL(t, idx, queries, opt)

	one := t.TempDir()
	urls := make([]string, 0, len(final))
	for u := range final {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	batchOf(t, one, Options{}, urls, func(u string) []byte { return final[u] })
	if want := byURL(t, open(t, one), queries, opt); got != want {
		g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range g {
			if g[i] != w[i] {
				t.Errorf("segmented index answers\n%s\none-shot index\n%s", g[i], w[i])
			}
		}
	}

	// Same docIDs once merged: the answers are equal to the bit, also when
	// the scan stops at a small MaxMatches cut-off across segments.
	small := SearchOptions{N: 5, NoSnippets: true, MaxMatches: 7}
	before, beforeSmall := exact(t, idx, queries, opt), exact(t, idx, queries, small)
	idx.Close()
	merged := forceMerged(t, dir)
	if after := exact(t, merged, queries, opt); after != before {
		t.Errorf("merged index answers\n%s\nsegmented\n%s", after, before)
	}
	if after := exact(t, merged, queries, small); after != beforeSmall {
		t.Errorf("with MaxMatches 7, merged index answers\n%s\nsegmented\n%s", after, beforeSmall)
	}
	if !strings.Contains(beforeSmall, "stopped true") {
		t.Errorf("no query reached the cut-off:\n%s", beforeSmall)
	}
	if err := merged.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestMergePolicy: segments stay few (under factor per size class) over
// many batches, and each batch writes one new segment.
func TestMergePolicy(t *testing.T) {
	dir := t.TempDir()
	site := synth.New(400, 2000, 3)
	maxSegs := 0
	merges := 0
	for batch := range 40 {
		var urls []string
		for i := batch * 10; i < (batch+1)*10; i++ {
			urls = append(urls, site.URL(i))
		}
		st := batchOf(t, dir, Options{MergeFactor: 4}, urls, func(u string) []byte {
			var i int
			fmt.Sscanf(u[strings.LastIndex(u, "/")+1:], "%d.html", &i)
			return site.Page(i)
		})
		maxSegs = max(maxSegs, st.Segments)
		if st.Merged > 0 {
			merges++
		}
	}
	idx := open(t, dir)
	p := newPolicy(Options{MergeFactor: 4})
	live, docs, deleted, smallest := 0, 0, 0, 1<<30
	for _, s := range idx.Segments() {
		live += s.Live()
		docs += s.Docs
		deleted += s.Deleted
		smallest = min(smallest, s.Live())
	}
	if deleted*100 > DefaultDeletesPct*docs {
		t.Errorf("%d of %d documents deleted: %+v", deleted, docs, idx.Segments())
	}
	if n, allowed := len(idx.Segments()), p.allowedSegments(live, smallest); n > allowed {
		t.Errorf("%d segments, %d allowed: %+v", n, allowed, idx.Segments())
	}
	if merges == 0 || maxSegs > 12 {
		t.Errorf("%d merges, up to %d segments", merges, maxSegs)
	}
	// The runs of 40 batches are merged too: under 4 per size class (the
	// document-frequency runs shrink as they merge, so a merged one may
	// stay in its class: only their number is bounded).
	m0 := idx.Manifest()
	for kind, runs := range map[string][]RunInfo{urlKind: m0.URLRuns, anchorKind: m0.AnchorRuns, lexKind: m0.LexRuns, dfKind: m0.DFRuns} {
		classes := map[int]int{}
		for _, r := range runs {
			classes[sizeClass(r.Count, 4)]++
		}
		for c, n := range classes {
			if n >= 4 && kind != dfKind {
				t.Errorf("%s runs: size class %d holds %d runs: %+v", kind, c, n, runs)
			}
		}
		if len(runs) == 0 || len(runs) > 12 {
			t.Errorf("%s: %d runs after 40 batches", kind, len(runs))
		}
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	// Only the files the manifest names are left (and the append-only ones).
	m := idx.Manifest()
	want := map[string]bool{manifestName: true, "LOCK": true, repoName: true, docInfoName: true, anchorsName: true, wordsName: true, textName: true}
	for name := range m.Files {
		want[diskName(name, m.Generation)] = true
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !want[e.Name()] {
			t.Errorf("stray file %s", e.Name())
		}
	}
}

// TestBatchID: a batch ID is recorded with the batch; the same ID again is
// refused before anything is written.
func TestBatchID(t *testing.T) {
	dir := t.TempDir()
	batchOf(t, dir, Options{Batch: "000001-20261123T100000Z"}, []string{"http://s.test/a.html"}, func(u string) []byte { return []byte(site[u]) })
	m := open(t, dir).Manifest()
	if m.LastBatch != "000001-20261123T100000Z" || m.Batches != 1 {
		t.Fatalf("manifest %+v", m)
	}
	_, err := NewBuilder(dir, Options{Batch: "000001-20261123T100000Z"})
	if !errors.Is(err, ErrBatchApplied) {
		t.Fatalf("same batch again: %v", err)
	}
	batchOf(t, dir, Options{Batch: "000002-20261123T110000Z"}, []string{"http://s.test/b.html"}, func(u string) []byte { return []byte(site[u]) })
	if m2 := open(t, dir).Manifest(); m2.LastBatch != "000002-20261123T110000Z" || m2.Batches != 2 {
		t.Fatalf("manifest %+v", m2)
	}
}

// TestPageRankEvery: ranks are recomputed every N batches, new documents
// in between get the rank of an unlinked page, and RankIndex ranks now.
func TestPageRankEvery(t *testing.T) {
	dir := t.TempDir()
	us := []string{"http://s.test/a.html", "http://s.test/b.html", "http://s.test/c.html"}
	body := func(u string) []byte { return []byte(site[u]) }
	var ranked []bool
	for i, u := range us {
		st := batchOf(t, dir, Options{PageRankEvery: 2}, []string{u}, body)
		ranked = append(ranked, st.Ranked)
		if m := open(t, dir).Manifest(); m.RankedAt != []int{1, 1, 3}[i] {
			t.Errorf("batch %d: ranked at %d", i+1, m.RankedAt)
		}
	}
	if !slices.Equal(ranked, []bool{true, false, true}) {
		t.Errorf("ranked %v", ranked)
	}
	batchOf(t, dir, Options{PageRankEvery: 2}, []string{"http://s.test/d.html"}, func(string) []byte { return []byte("<title>Delta</title>") })
	idx := open(t, dir)
	d, _, _ := idx.Lookup("http://s.test/d.html")
	e, _ := idx.Doc(d)
	if want := float32(0.15 / float64(idx.Docs())); e.Rank != want {
		t.Errorf("new page between rankings: rank %v, want %v", e.Rank, want)
	}
	idx.Close()
	if st, err := RankIndex(dir, Options{}); err != nil || !st.Ranked {
		t.Fatalf("RankIndex: %v %+v", err, st)
	}
	idx = open(t, dir)
	m := idx.Manifest()
	if m.RankedAt != 4 || m.Batches != 4 {
		t.Errorf("after RankIndex: ranked at %d, %d batches", m.RankedAt, m.Batches)
	}
	ref := t.TempDir()
	all := map[string]string{"http://s.test/d.html": "<title>Delta</title>"}
	for _, u := range us {
		all[u] = site[u]
	}
	build(t, ref, Options{}, all)
	if got, want := byURL(t, idx, queries, SearchOptions{N: 10}), byURL(t, open(t, ref), queries, SearchOptions{N: 10}); got != want {
		t.Errorf("after RankIndex\n%s\none-shot\n%s", got, want)
	}
}

// TestAppendFilesChecked: an emptied anchors file is refused on open; a
// bit flip in a superseded docinfo, anchors or text record is found by Verify.
func TestAppendFilesChecked(t *testing.T) {
	src := t.TempDir()
	build(t, src, Options{}, site)
	changed := maps(site)
	changed["http://s.test/a.html"] = strings.Replace(site["http://s.test/a.html"], "Alpha", "Apricot", 1)
	build(t, src, Options{}, changed)

	dir := t.TempDir()
	copyDir(t, src, dir)
	os.WriteFile(filepath.Join(dir, anchorsName), nil, 0o644)
	if _, err := Open(dir); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), dir) {
		t.Errorf("emptied anchors: %v", err)
	}
	for _, name := range []string{docInfoName, anchorsName, textName} {
		dir := t.TempDir()
		copyDir(t, src, dir)
		p := filepath.Join(dir, name)
		data, _ := os.ReadFile(p)
		data[10] ^= 1 // in the first batch's records
		os.WriteFile(p, data, 0o644)
		idx, err := Open(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := idx.Verify(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("bit flip in %s: Verify says %v", name, err)
		}
		idx.Close()
	}
}

// TestOlderFormat: an index of the previous format (2: one document index,
// URL file and lexicon rewritten per batch) is refused with a message
// naming it and the conversion; Rebuild converts it from its repository.
func TestOlderFormat(t *testing.T) {
	dir := t.TempDir()
	site := synth.New(60, 500, 5)
	buildSynth(t, dir, site, 60)
	queries := site.Queries(20)
	want := byURL(t, open(t, dir), queries, SearchOptions{N: 5, NoSnippets: true})
	p := filepath.Join(dir, manifestName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(data), fmt.Sprintf(`"format": %d,`, formatNumber), `"format": 2,`, 1)
	if old == string(data) {
		t.Fatal("no format field in the manifest")
	}
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, try := range []func() error{
		func() error { _, err := Open(dir); return err },
		func() error { _, err := NewBuilder(dir, Options{}); return err },
	} {
		err := try()
		if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "index format 2") || !strings.Contains(err.Error(), "barrel rebuild") {
			t.Errorf("format 2 index: error %v", err)
		}
	}
	if _, err := Rebuild(t.Context(), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := byURL(t, open(t, dir), queries, SearchOptions{N: 5, NoSnippets: true}); got != want {
		t.Errorf("rebuilt index answers\n%s\nwant\n%s", got, want)
	}
}

// TestTooLargeSegmentExpunged: a segment larger than a build may read in
// merges (one big batch made it) loses most of its documents to a later
// batch; that build expunges it, alone, and the index answers as one
// built from the same pages in one go. (The pages have no links, so a
// changed page re-indexes no other.)
func TestTooLargeSegmentExpunged(t *testing.T) {
	dir := t.TempDir()
	opts := Options{MaxMergeDocs: 20}
	words := strings.Fields("apple pear plum quince cherry grape melon lemon lime fig date kiwi mango papaya guava")
	var urls []string
	for i := range 80 {
		urls = append(urls, fmt.Sprintf("http://t.test/%d.html", i))
	}
	page := func(salt string) func(string) []byte {
		return func(u string) []byte {
			var i int
			fmt.Sscanf(u[strings.LastIndex(u, "/")+1:], "%d.html", &i)
			return fmt.Appendf(nil, "<html><head><title>%s %d</title></head><body><p>%s %s and %s%s</p></body></html>",
				words[i%len(words)], i, words[(i*7)%len(words)], words[(i*3)%len(words)], words[(i+5)%len(words)], salt)
		}
	}
	batchOf(t, dir, opts, urls, page(""))
	first := open(t, dir).Manifest().Segments[0]
	if first.Docs <= 20 {
		t.Fatalf("the first segment holds %d documents, not more than the cap", first.Docs)
	}
	batchOf(t, dir, opts, urls[:70], page(" changed"))
	idx := open(t, dir)
	for _, si := range idx.Manifest().Segments {
		if si.ID == first.ID {
			t.Fatalf("the too-large segment %d (%d of %d deleted) is still there: %+v", si.ID, si.Deleted, si.Docs, idx.Manifest().Segments)
		}
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	// A build without pages (Expunge) finds nothing more to merge.
	if st, err := Expunge(dir, opts); err != nil || st.Merged != 0 {
		t.Fatalf("Expunge: %+v, %v", st, err)
	}
	oneGo := t.TempDir()
	batchOf(t, oneGo, Options{}, urls, func(u string) []byte {
		var i int
		fmt.Sscanf(u[strings.LastIndex(u, "/")+1:], "%d.html", &i)
		if i < 70 {
			return page(" changed")(u)
		}
		return page("")(u)
	})
	qs := append(words, "apple pear", "changed", "changed lemon")
	if got, want := byURL(t, idx, qs, SearchOptions{N: 10}), byURL(t, open(t, oneGo), qs, SearchOptions{N: 10}); got != want {
		t.Errorf("after the expunge\n%s\nbuilt in one go\n%s", got, want)
	}
}

// TestExpunge: a build without pages makes the merges the policy wants
// (here the expunge of a segment a batch left 20% deleted, which that
// batch's build, with a higher threshold, did not make), and counts no
// batch.
func TestExpunge(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, Options{}, site)
	changed := maps(site)
	changed["http://s.test/c.html"] += "<p>changed</p>"
	build(t, dir, Options{DeletesPct: 100}, changed)
	before := open(t, dir).Manifest()
	if len(before.Segments) != 2 || before.Segments[0].Deleted*100 < 20*before.Segments[0].Docs {
		t.Fatalf("segments before: %+v", before.Segments)
	}
	st, err := Expunge(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	idx := open(t, dir)
	after := idx.Manifest()
	if st.Merged == 0 || after.Batches != before.Batches {
		t.Fatalf("Expunge: stats %+v; segments %+v, then %+v; batches %d, then %d", st, before.Segments, after.Segments, before.Batches, after.Batches)
	}
	for _, si := range after.Segments {
		if si.Deleted > 0 {
			t.Errorf("segment %d still has %d deleted documents", si.ID, si.Deleted)
		}
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	ref := t.TempDir()
	build(t, ref, Options{}, changed)
	if got, want := byURL(t, idx, queries, SearchOptions{N: 10}), byURL(t, open(t, ref), queries, SearchOptions{N: 10}); got != want {
		t.Errorf("after Expunge\n%s\nbuilt in one go\n%s", got, want)
	}
}

// TestNextLive: a segment's next live document, which the search's lists
// jump to past deleted postings, is the first docID at or after d that
// the segment's table holds and its deletion list does not.
func TestNextLive(t *testing.T) {
	dir := t.TempDir()
	segmentedSite(t, dir, Options{MergeFactor: 2, DeletesPct: 90, FloorDocs: 20, AnchorGrowth: -1})
	idx := open(t, dir)
	withDel := 0
	for _, sg := range idx.segs {
		var docs []uint32
		if err := sg.dt.each(0, math.MaxUint64, func(r []byte) error {
			if d := uint32(binary.LittleEndian.Uint64(r)); !slices.Contains(sg.delList.slice(), d) {
				docs = append(docs, d)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if sg.del == nil {
			if got := sg.nextLive(5); got != 5 {
				t.Errorf("segment %d without deletions: nextLive(5) = %d", sg.info.ID, got)
			}
			continue
		}
		withDel++
		for d := uint32(0); d < idx.m.Docs+70; d++ {
			want := uint32(math.MaxUint32)
			if i, _ := slices.BinarySearch(docs, d); i < len(docs) {
				want = docs[i]
			}
			if got := sg.nextLive(d); got != want {
				t.Fatalf("segment %d: nextLive(%d) = %d, want %d", sg.info.ID, d, got, want)
			}
		}
	}
	if withDel == 0 {
		t.Fatal("no segment with deletions")
	}
}

// forceMerged merges the index in dir into one segment, without deleted
// documents, and opens it.
func forceMerged(t *testing.T, dir string) *Index {
	t.Helper()
	if _, err := ForceMerge(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	merged := open(t, dir)
	if s := merged.Segments(); len(s) != 1 || s[0].Deleted != 0 {
		t.Fatalf("after ForceMerge: %+v", s)
	}
	return merged
}

// TestLiveWindows: the live documents read a window of docIDs at a time
// answer as the whole table does, across windows, empty ones and the
// last, for a segment whose documents span several windows and whose
// deletions empty some of them.
func TestLiveWindows(t *testing.T) {
	docs := []uint32{0, 3, 64, liveWinDocs - 1, liveWinDocs, liveWinDocs + 1, 2*liveWinDocs + 7, 5*liveWinDocs - 1, 5*liveWinDocs + 130}
	deleted := []uint32{3, liveWinDocs - 1, liveWinDocs, liveWinDocs + 1, 5*liveWinDocs - 1}
	var recs [][]byte
	for _, d := range docs {
		recs = append(recs, appendDocRec(nil, d, &DocEntry{Status: StatusFetched}))
	}
	tab := &table{name: "docs", data: encodeTable(docRecSize, recs)}
	if err := tab.parse(); err != nil {
		t.Fatal(err)
	}
	sg := &segment{dt: tab, del: bitsOf(deleted), delList: u32leOf(deleted)}
	var live []uint32
	for _, d := range docs {
		if !slices.Contains(deleted, d) {
			live = append(live, d)
		}
	}
	// Asked out of order, so that windows are read late and apart.
	for _, from := range []uint32{3 * liveWinDocs, 0, 6 * liveWinDocs} {
		for d := from; d < 7*liveWinDocs; d++ {
			want := uint32(math.MaxUint32)
			if i, _ := slices.BinarySearch(live, d); i < len(live) {
				want = live[i]
			}
			if got := sg.nextLive(d); got != want {
				t.Fatalf("nextLive(%d) = %d, want %d", d, got, want)
			}
			if got := sg.hasLive(d); got != slices.Contains(live, d) {
				t.Fatalf("hasLive(%d) = %v", d, got)
			}
		}
	}
	// A damaged table: no jumps, and no document live.
	bad := &table{name: "docs", data: slices.Clone(tab.data)}
	if err := bad.parse(); err != nil {
		t.Fatal(err)
	}
	bad.data[10] ^= 0xff // inside the first block: its checksum fails
	sg = &segment{dt: bad, del: bitsOf(deleted), delList: u32leOf(deleted)}
	if got := sg.nextLive(1); got != 1 {
		t.Errorf("damaged: nextLive(1) = %d, want 1 (no jump)", got)
	}
	if sg.hasLive(0) {
		t.Error("damaged: hasLive(0)")
	}
}

// TestAvgWords: BM25's mean page length is the mean of the live fetched
// pages' word counts: exactly from the manifest's count, which every
// batch keeps; and, in an index without one, read from the segments'
// tables, exactly where the index is small and within a few percent where
// it is sampled.
func TestAvgWords(t *testing.T) {
	dir := t.TempDir()
	segmentedSite(t, dir, Options{MergeFactor: 2, DeletesPct: 90, FloorDocs: 20, AnchorGrowth: -1})
	exact := func(idx *Index) float64 {
		sum, n := 0.0, 0
		for d := range idx.m.Docs {
			if e, ok := idx.Doc(d); ok && e.Status == StatusFetched {
				sum += float64(e.Words)
				n++
			}
		}
		return sum / float64(n)
	}
	idx := open(t, dir)
	deleted := 0
	for _, s := range idx.Segments() {
		deleted += s.Deleted
	}
	if len(idx.segs) < 2 || deleted == 0 {
		t.Fatalf("want several segments with deletions: %+v", idx.Segments())
	}
	want := exact(idx)
	if got := idx.avgWords(); got != want {
		t.Errorf("avgWords = %v, want the exact mean %v", got, want)
	}
	if pw, err := idx.countPageWords(); err != nil || idx.m.PageWords == nil || pw != *idx.m.PageWords {
		t.Errorf("the manifest counts %+v; the entries %+v (%v)", idx.m.PageWords, pw, err)
	}
	defer func(n int) { avgSample = n }(avgSample)
	avgSample = int(idx.m.Docs) / 4 // one entry in 4
	sampled := open(t, dir)
	sampled.m.PageWords = nil // as an index written before it was kept
	if got := sampled.avgWords(); math.Abs(got-want) > 0.05*want || got == want {
		t.Errorf("sampled from %d entries: avgWords = %v, want within 5%% of %v (and sampled, not exact)", avgSample, got, want)
	}
}

// A segment's deleted documents are set a window at a time, as asked:
// every docID answers as the list says, asked in any order; a window is
// set only once asked, one without a deletion is the shared empty one,
// and past the last deletion nothing is set.
func TestDeletedWindows(t *testing.T) {
	deleted := []uint32{1, 63, 64, liveWinDocs - 1, 3*liveWinDocs + 5, 3*liveWinDocs + 6, 6 * liveWinDocs}
	in := map[uint32]bool{}
	for _, d := range deleted {
		in[d] = true
	}
	{
		b := bitsOf(deleted)
		if len(b.wins) != 7 {
			t.Fatalf("%d windows, want 7", len(b.wins))
		}
		if !b.has(3*liveWinDocs+6) || b.wins[3].Load() == nil || b.wins[0].Load() != nil || b.wins[4].Load() != nil {
			t.Errorf("asking one docID of window 3 set windows %v", setWindows(b))
		}
		if b.has(2*liveWinDocs+9) || b.wins[2].Load() != &emptyLiveWindow {
			t.Error("a window without deletions is not the empty one")
		}
		for _, d := range []uint32{7*liveWinDocs + 1, math.MaxUint32} {
			if b.has(d) {
				t.Errorf("%d past the last deletion: deleted", d)
			}
		}
		for _, d := range []uint32{6*liveWinDocs + 1, 6 * liveWinDocs, 65, 64, 63, 62, 2, 1, 0, liveWinDocs - 1, liveWinDocs, 3*liveWinDocs + 4, 3*liveWinDocs + 5, 3*liveWinDocs + 7} {
			if b.has(d) != in[d] {
				t.Errorf("%d: deleted %v, want %v", d, b.has(d), in[d])
			}
			if w := b.win(d); (w[d>>6&(liveWinDocs/64-1)]>>(d&63)&1 != 0) != in[d] {
				t.Errorf("%d: its window says deleted %v, want %v", d, !in[d], in[d])
			}
		}
	}
	if bitsOf(nil) != nil || bitsOf(nil).has(1) || bitsOf(nil).win(1) != &emptyLiveWindow {
		t.Error("no deletions: a set, or 1 deleted")
	}
}

// A walk's deletion cursor answers every docID as the list does, asked
// in increasing order with steps and jumps of any length (its gallop),
// and in any order at all.
func TestDelCursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 28))
	for trial := range 400 {
		span := 1 + rng.IntN([]int{5000, 4 * liveWinDocs}[trial%2])
		in := map[uint32]bool{}
		var ds []uint32
		for d := range span {
			if rng.IntN(1000) < []int{0, 1, 100, 500, 950}[trial%5] {
				in[uint32(d)] = true
				ds = append(ds, uint32(d))
			}
		}
		c := newDelCursor(bitsOf(ds))
		ask := func(d uint32, how string) {
			if got := c.deleted(d); got != in[d] {
				t.Fatalf("trial %d (%d deletions), %s: %d deleted %v, want %v", trial, len(ds), how, d, got, in[d])
			}
		}
		for d := uint32(0); d < uint32(span)+10; d += uint32(1 + rng.IntN([]int{1, 3, 300, 70000}[trial%4])) {
			ask(d, "increasing")
			if rng.IntN(10) == 0 {
				ask(d, "again")
			}
		}
		for range 200 {
			ask(uint32(rng.IntN(span+10)), "any order")
		}
	}
	if c := newDelCursor(nil); c.deleted(0) || c.deleted(1<<20) {
		t.Error("no deletions: deleted")
	}
}

// bitsOf is the deleted set of the docIDs ds, in any order, as a segment
// holds it.
func bitsOf(ds []uint32) docBits { return delSetOf(u32leOf(slices.Sorted(slices.Values(ds)))) }

// u32leOf is ds as a file holds them.
func u32leOf(ds []uint32) u32le {
	var b []byte
	for _, d := range ds {
		b = binary.LittleEndian.AppendUint32(b, d)
	}
	return b
}

func setWindows(b *delSet) []int {
	var ws []int
	for w := range b.wins {
		if b.wins[w].Load() != nil {
			ws = append(ws, w)
		}
	}
	return ws
}

// TestDeletionListChecked: a segment's deletion list, read in place, is
// checked whole at open: a damaged byte fails the open naming the file,
// and a list out of order or range, or without its header, is refused.
func TestDeletionListChecked(t *testing.T) {
	dir := t.TempDir()
	segmentedSite(t, dir, Options{MergeFactor: 2, DeletesPct: 90, FloorDocs: 20, AnchorGrowth: -1})
	var del SegmentInfo
	idx := open(t, dir)
	m := idx.Manifest()
	for _, si := range m.Segments {
		if si.Deleted > 1 {
			del = si
		}
	}
	if del.Del == "" {
		t.Fatalf("no segment with deletions: %+v", m.Segments)
	}
	gen := m.Generation
	idx.Close()
	path := filepath.Join(dir, diskName(del.Del, gen))
	flipByte(t, path, int64(len(docListMagic)+4), 0x10)
	if _, err := Open(dir); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), del.Del) {
		t.Errorf("a damaged deletion list: %v", err)
	}
	for _, c := range []struct {
		what string
		b    []byte
	}{
		{"out of order", encodeDocList([]uint32{1, 5, 4})},
		{"repeated", encodeDocList([]uint32{1, 5, 5})},
		{"out of range", encodeDocList([]uint32{1, 5, 10})},
		{"no header", u32leOf([]uint32{1, 5})},
		{"cut", encodeDocList([]uint32{1, 5})[:len(docListMagic)+6]},
	} {
		if _, err := decodeDocList(c.b, "x.del", 10); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "x.del") {
			t.Errorf("%s: %v", c.what, err)
		}
	}
	if l, err := decodeDocList(encodeDocList([]uint32{0, 5, 9}), "x.del", 10); err != nil || !slices.Equal(l.slice(), []uint32{0, 5, 9}) {
		t.Errorf("a good list: %v, %v", l.slice(), err)
	}
}

// TestPageWords: the manifest's count of live fetched pages and their
// words, kept batch by batch as pages are re-crawled and segments merged,
// is what the entries count and what an index built in one go from the
// final pages counts; an index without one (written before it was kept)
// is counted whole at its next batch; Verify finds a wrong count.
func TestPageWords(t *testing.T) {
	dir := t.TempDir()
	_, final, _ := segmentedSite(t, dir, Options{MergeFactor: 2, DeletesPct: 90, FloorDocs: 20, AnchorGrowth: -1})
	idx := open(t, dir)
	counted, err := idx.countPageWords()
	if err != nil || idx.m.PageWords == nil || *idx.m.PageWords != counted || counted.Pages != int64(len(final)) {
		t.Fatalf("the manifest counts %+v; the entries %+v of %d pages (%v)", idx.m.PageWords, counted, len(final), err)
	}
	idx.Close()
	pages := map[string]string{}
	for u, b := range final {
		pages[u] = string(b)
	}
	ref := t.TempDir()
	build(t, ref, Options{}, pages)
	if got := open(t, ref).m.PageWords; got == nil || *got != counted {
		t.Errorf("built in one go: %+v, want %+v", got, counted)
	}

	m, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.PageWords = nil
	if err := writeManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	site := synth.New(600, 3000, 7)
	urls := []string{site.URL(3), site.URL(70), site.URL(599)}
	batchOf(t, dir, Options{MergeFactor: 2, DeletesPct: 90, FloorDocs: 20, AnchorGrowth: -1}, urls, func(u string) []byte { return site.Page(5) })
	idx = open(t, dir)
	if counted, err = idx.countPageWords(); err != nil || idx.m.PageWords == nil || *idx.m.PageWords != counted {
		t.Errorf("after a batch on an index without a count: the manifest counts %+v; the entries %+v (%v)", idx.m.PageWords, counted, err)
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	idx.Close()

	// A commit without pages counts them too.
	m, err = readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.PageWords = nil
	if err := writeManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	if _, err := Expunge(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	idx = open(t, dir)
	if idx.m.PageWords == nil || *idx.m.PageWords != counted {
		t.Errorf("after Expunge on an index without a count: %+v, want %+v", idx.m.PageWords, counted)
	}
	idx.Close()
	m, err = readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.PageWords.Words++
	if err := writeManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	if err := open(t, dir).Verify(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "live fetched pages") {
		t.Errorf("a wrong count: Verify says %v", err)
	}
}

// TestIncreasing: an array read in place is strictly increasing and below
// its limit, or refused, wherever the fault is.
func TestIncreasing(t *testing.T) {
	for _, c := range []struct {
		ds   []uint32
		want bool
	}{
		{nil, true}, {[]uint32{0}, true}, {[]uint32{9}, true}, {[]uint32{10}, false},
		{[]uint32{0, 1, 5, 9}, true}, {[]uint32{1, 1}, false}, {[]uint32{2, 1}, false},
		{[]uint32{1, 2, 3, 3}, false}, {[]uint32{1, 2, 3, 10}, false}, {[]uint32{11, 2}, false},
	} {
		if got := u32leOf(c.ds).increasing(10); got != c.want {
			t.Errorf("%v: increasing %v, want %v", c.ds, got, c.want)
		}
	}
}
