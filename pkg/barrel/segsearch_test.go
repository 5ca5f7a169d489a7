package barrel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

// bits summarises results with docIDs and the scores' bits, in rank
// order; with counts, the match count, the barrels read and whether the
// scan stopped too.
func resultBits(t testing.TB, idx *Index, queries []string, opt SearchOptions, counts bool) string {
	t.Helper()
	var sb strings.Builder
	for _, q := range queries {
		r, err := idx.Search(q, opt)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		sb.WriteString(q)
		if counts {
			fmt.Fprintf(&sb, " (%d matches, %s, stopped %v)", r.Matches, r.Barrels, r.Stopped)
		}
		sb.WriteByte(':')
		for _, x := range r.Results {
			fmt.Fprintf(&sb, " %d %016x", x.Doc, math.Float64bits(x.Score))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// TestManySegmentsExact: on an index of many segments whose lists still
// hold the postings of the pages re-indexed since (merges held back), a
// search answers to the bit as the exhaustive scan (every match scored,
// no intersection first, the segments merged in docID order) on the same
// segments, as a second time (with
// the document frequencies cached), and, match counts included, as the
// same index merged into one segment without deletions, and as the scan
// that walks the intersection first even for a word on few pages. The queries
// include words rarer than the results wanted, whose pages holding every
// word are too few for the intersection to be walked first.
func TestManySegmentsExact(t *testing.T) {
	dir := t.TempDir()
	site, _, _ := segmentedSite(t, dir, Options{MergeFactor: 64, DeletesPct: 100})
	idx := open(t, dir)
	segs, deleted := idx.Segments(), 0
	for _, s := range segs {
		deleted += s.Deleted
	}
	if len(segs) < 5 || deleted == 0 {
		t.Fatalf("want many segments with deletions, got %+v", segs)
	}
	queries := mixedQueries(site, 5, 150)

	// Queries of several words, one of them on at most 10 pages, are
	// there; and the kept frequencies are the lists' live postings.
	rare := 0
	for _, q := range queries {
		words, minDF := 0, math.MaxInt
		for _, w := range strings.Fields(q) {
			id, ok, err := idx.lex.Lookup([]byte(w))
			if err != nil || !ok {
				continue
			}
			df, err := idx.docFreq(id)
			if err != nil {
				t.Fatal(err)
			}
			live, err := idx.countLive(id)
			if err != nil {
				t.Fatal(err)
			}
			if df != int(live) {
				t.Errorf("word %q: docFreq %d, %d live postings", w, df, live)
			}
			words++
			minDF = min(minDF, df)
		}
		if words > 1 && minDF <= 10 {
			rare++
		}
	}
	if rare < 10 {
		t.Errorf("only %d queries of several words hold a word on at most 10 pages", rare)
	}

	opts := map[string]SearchOptions{
		"top10":  {N: 10, NoSnippets: true},
		"offset": {N: 3, Offset: 4, NoSnippets: true},
		"stop":   {N: 5, NoSnippets: true, MaxMatches: 7},
		"deep":   {N: 60, NoSnippets: true},
	}
	want := map[string]string{}
	for name, opt := range opts {
		got := resultBits(t, idx, queries, opt, true)
		walked := bitsWithout(t, idx, queries, opt, true, &rareFirst)
		if walked != got {
			t.Errorf("%s: the intersection walked first:\n%s\nnot walked for a rare word:\n%s", name, walked, got)
		}
		if again := resultBits(t, idx, queries, opt, true); again != got {
			t.Errorf("%s: a second time:\n%s\nfirst:\n%s", name, again, got)
		}
		want[name] = got
		if name == "stop" { // the exhaustive scan counts other matches up to the cut-off
			continue
		}
		all := bitsWithout(t, idx, queries, opt, false, &pruning, &intersectFirst, &segmentOrder)
		if fast := resultBits(t, idx, queries, opt, false); fast != all {
			t.Errorf("%s: on %d segments:\n%s\nevery match scored:\n%s", name, len(segs), fast, all)
		}
	}
	idx.Close()
	merged := forceMerged(t, dir)
	for name, opt := range opts {
		if got := resultBits(t, merged, queries, opt, true); got != want[name] {
			t.Errorf("%s: one segment answers\n%s\n%d segments\n%s", name, got, len(segs), want[name])
		}
	}
}

// TestSegmentOrderExact: scanning the segments one after the other, with
// the candidates (and so the score to beat) of the segments scanned
// before, answers to the bit as the segments merged in docID order and
// as the exhaustive scan (every match scored), match counts included.
// The bounds skip matches in segments scanned after the first, and the
// scans that keep every match score only some of them.
func TestSegmentOrderExact(t *testing.T) {
	dir := t.TempDir()
	site, idx := manySegments(t, dir)
	queries := mixedQueries(site, 9, 200)
	for name, opt := range map[string]SearchOptions{
		"top10":  {N: 10, NoSnippets: true},
		"offset": {N: 3, Offset: 4, NoSnippets: true},
		"one":    {N: 1, NoSnippets: true},
		"deep":   {N: 60, NoSnippets: true}, // most scans keep fewer candidates than that: all scored
	} {
		later := skippedLater.Load()
		got := resultBits(t, idx, queries, opt, true)
		later = skippedLater.Load() - later
		// The candidates kept by their bound, without the floor of the
		// coordination tiers (which passes most of them unscored first).
		kept, scored := boundsKept.Load(), boundsScored.Load()
		if floorless := bitsWithout(t, idx, queries, opt, true, &tierFloor); floorless != got {
			t.Errorf("%s: without the floor of the tiers:\n%s\nwith:\n%s", name, floorless, got)
		}
		kept, scored = boundsKept.Load()-kept, boundsScored.Load()-scored
		merged := bitsWithout(t, idx, queries, opt, true, &segmentOrder)
		all := bitsWithout(t, idx, queries, opt, false, &segmentOrder, &pruning, &intersectFirst) // the intersection walked first counts other matches
		if got != merged {
			t.Errorf("%s: segment after segment:\n%s\nmerged in docID order:\n%s", name, got, merged)
		}
		if got := resultBits(t, idx, queries, opt, false); got != all {
			t.Errorf("%s: segment after segment:\n%s\nevery match scored:\n%s", name, got, all)
		}
		if later == 0 {
			t.Errorf("%s: no match skipped in a segment scanned after the first", name)
		}
		if kept == 0 || scored >= kept && name != "deep" {
			t.Errorf("%s: %d candidates kept by their bound, %d of them scored", name, kept, scored)
		}
	}
}

// TestSegmentOrderTies: pages of the same score in two segments, the
// later segment holding the lower docIDs (re-crawled, changed in a word
// no query holds), rank
// by docID as the merged scan ranks them: a match scanned after the
// worst candidate but before it in docID order enters on a tie.
func TestSegmentOrderTies(t *testing.T) {
	dir := t.TempDir()
	other := "alpha"
	page := func(u string) []byte {
		return []byte("<html><head><title>notes</title></head><body><p>tiedword common text here " + other + "</p></body></html>")
	}
	var urls []string
	for i := range 40 {
		urls = append(urls, fmt.Sprintf("http://tie%d.test/p.html", i))
	}
	batchOf(t, dir, Options{MergeFactor: 64, DeletesPct: 100}, urls, page)
	other = "gamma"                                                             // changed, but not in the query nor in length
	batchOf(t, dir, Options{MergeFactor: 64, DeletesPct: 100}, urls[:20], page) // the lower docIDs, in a new segment
	idx := open(t, dir)
	if len(idx.segs) != 2 {
		t.Fatalf("%d segments, want 2", len(idx.segs))
	}
	queries := []string{"tiedword", "tiedword common", "tiedword text here"}
	for _, n := range []int{1, 5, 10, 25} {
		opt := SearchOptions{N: n, NoSnippets: true}
		got := resultBits(t, idx, queries, opt, true)
		merged := bitsWithout(t, idx, queries, opt, true, &segmentOrder)
		if got != merged {
			t.Errorf("N=%d: segment after segment:\n%s\nmerged in docID order:\n%s", n, got, merged)
		}
		for _, q := range queries {
			r, err := idx.Search(q, opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Results) != n {
				t.Fatalf("%q: %d results, want %d", q, len(r.Results), n)
			}
			for i, x := range r.Results {
				if x.Score != r.Results[0].Score {
					t.Fatalf("%q: result %d scores %v, the first %v: the pages should tie", q, i, x.Score, r.Results[0].Score)
				}
				if i > 0 && x.Doc <= r.Results[i-1].Doc {
					t.Errorf("%q: tied results out of docID order: %d after %d", q, x.Doc, r.Results[i-1].Doc)
				}
			}
		}
	}
}

// TestDocStatsLongTitle: a page whose title is longer than the scores'
// cache holds (the cache keeps 7 bits of title words) is scored with its
// whole title, the first time and when met again: the title match is the
// query's share of its 150 words.
func TestDocStatsLongTitle(t *testing.T) {
	dir := t.TempDir()
	long := "zebra" + strings.Repeat(" ab", 149) // 452 bytes: titles are clipped at 500
	build(t, dir, Options{}, map[string]string{
		"http://a.test/long.html":  "<html><head><title>" + long + "</title></head><body><p>zebra here</p></body></html>",
		"http://a.test/short.html": "<html><head><title>zebra notes</title></head><body><p>zebra there</p></body></html>",
	})
	idx := open(t, dir)
	for range 2 {
		r, err := idx.Search("zebra", SearchOptions{N: 10, Explain: true, NoSnippets: true})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, x := range r.Results {
			got[x.URL] = x.Explain.TitleMatch / HandModel(&DefaultWeights).W[FeatTitleMatch]
		}
		if want := 1.0 / 150; math.Abs(got["http://a.test/long.html"]-want) > 1e-12 {
			t.Errorf("long title: title match %v, want %v", got["http://a.test/long.html"], want)
		}
		if want := 1.0 / 2; math.Abs(got["http://a.test/short.html"]-want) > 1e-12 {
			t.Errorf("short title: title match %v, want %v", got["http://a.test/short.html"], want)
		}
	}
}

// mixedQueries is the site's own queries, n of 1 to 3 of its words drawn
// with seed, and a phrase, an exclusion and an OR.
func mixedQueries(site *synth.Site, seed uint64, n int) []string {
	pool := strings.Fields(strings.Join(site.Queries(300), " "))
	rng := rand.New(rand.NewPCG(seed, 28))
	queries := site.Queries(100)
	for range n {
		var q []string
		for range 1 + rng.IntN(3) {
			q = append(q, pool[rng.IntN(len(pool))])
		}
		queries = append(queries, strings.Join(q, " "))
	}
	// Acronyms spelt out (spelledOut), with another word and without.
	acr := strings.ToUpper(pool[8][:1] + pool[9][:1])
	return append(queries, `"`+pool[0]+" "+pool[1]+`" `+pool[2], pool[3]+" -"+pool[4], pool[5]+" OR "+pool[6]+" "+pool[7],
		pool[8]+" "+pool[9]+" "+acr+" "+pool[10], pool[8]+" "+pool[9]+" "+acr)
}

// bitsWithout is resultBits with the search's shortcuts named by
// switches turned off, and on again however the search ends.
func bitsWithout(t testing.TB, idx *Index, queries []string, opt SearchOptions, counts bool, switches ...*bool) string {
	t.Helper()
	for _, s := range switches {
		*s = false
	}
	defer func() {
		for _, s := range switches {
			*s = true
		}
	}()
	return resultBits(t, idx, queries, opt, counts)
}

// sameWithout checks that the searches of queries with opt answer to the
// bit (match counts included) as with the switch off, a second time, and
// (but for a MaxMatches cut-off, where the exhaustive scan counts other
// matches) as the exhaustive scan; it returns the answers.
func sameWithout(t *testing.T, idx *Index, queries []string, name string, opt SearchOptions, off *bool) string {
	t.Helper()
	got := resultBits(t, idx, queries, opt, true)
	if without := bitsWithout(t, idx, queries, opt, true, off); without != got {
		t.Errorf("%s: with the switch on:\n%s\noff:\n%s", name, got, without)
	}
	if again := resultBits(t, idx, queries, opt, true); again != got {
		t.Errorf("%s: a second time:\n%s\nfirst:\n%s", name, again, got)
	}
	if opt.MaxMatches == 0 {
		all := bitsWithout(t, idx, queries, opt, false, off, &tierFloor, &pruning, &intersectFirst, &segmentOrder)
		if fast := resultBits(t, idx, queries, opt, false); fast != all {
			t.Errorf("%s: with the switch on:\n%s\nevery match scored:\n%s", name, fast, all)
		}
	}
	return got
}

// TestTierFloorExact: the scan that counts the matches by the query's
// words they hold, and walks only those at or above the coordination tier
// the results need, answers to the bit as the scan that scores them all
// (match counts included, a scan stopped at MaxMatches too) and as the
// exhaustive scan, on many segments and on the same pages merged into
// one; and it passes some matches, in both.
func TestTierFloorExact(t *testing.T) {
	dir := t.TempDir()
	site, _, _ := segmentedSite(t, dir, Options{MergeFactor: 64, DeletesPct: 100})
	queries := mixedQueries(site, 11, 300)
	opts := map[string]SearchOptions{
		"top10":  {N: 10, NoSnippets: true},
		"offset": {N: 3, Offset: 4, NoSnippets: true},
		"one":    {N: 1, NoSnippets: true},
		"deep":   {N: 60, NoSnippets: true},
		"wide":   {N: 250, NoSnippets: true}, // more than the candidates re-ranked
		"stop":   {N: 5, NoSnippets: true, MaxMatches: 40},
	}
	check := func(idx *Index, what string) {
		for name, opt := range opts {
			before := floorSkipped.Load()
			got := resultBits(t, idx, queries, opt, true)
			if floorSkipped.Load() == before && name != "wide" {
				t.Errorf("%s, %s: no match passed below the floor", what, name)
			}
			if scored := bitsWithout(t, idx, queries, opt, true, &tierFloor); got != scored {
				t.Errorf("%s, %s: below the floor passed:\n%s\nscored:\n%s", what, name, got, scored)
			}
			if name == "stop" { // the exhaustive scan counts other matches up to the cut-off
				continue
			}
			all := bitsWithout(t, idx, queries, opt, false, &tierFloor, &pruning, &intersectFirst, &segmentOrder)
			if fast := resultBits(t, idx, queries, opt, false); fast != all {
				t.Errorf("%s, %s: below the floor passed:\n%s\nevery match scored:\n%s", what, name, fast, all)
			}
		}
	}
	idx := open(t, dir)
	if len(idx.segs) < 5 {
		t.Fatalf("%d segments: the test wants many", len(idx.segs))
	}
	check(idx, "segments")
	idx.Close()
	check(forceMerged(t, dir), "merged")
}

// TestMostlyDeletedExact: on segments that later batches mostly
// superseded (merges held back), whose lists are read through the cache
// of their live postings, a search answers to the bit as without the
// cache, match counts included, a second time (the cache filled), as the
// exhaustive scan on the same segments, and as the same pages merged
// into one segment without deletions.
func TestMostlyDeletedExact(t *testing.T) {
	dir := t.TempDir()
	site := synth.New(1200, 3000, 5)
	page := map[string][]byte{}
	opts := Options{MergeFactor: 64, DeletesPct: 100}
	rng := rand.New(rand.NewPCG(5, 28))
	for batch := range 16 {
		var urls []string
		for i := batch * 75; i < (batch+1)*75; i++ {
			urls = append(urls, site.URL(i))
			page[site.URL(i)] = site.Page(i)
		}
		for i := range batch * 75 { // a few earlier pages re-crawled, changed
			if rng.IntN(20) == 0 {
				u := site.URL(i)
				page[u] = site.Page((i + batch*97) % 1200)
				urls = append(urls, u)
			}
		}
		batchOf(t, dir, opts, urls, func(u string) []byte { return page[u] })
	}
	idx := open(t, dir)
	cached := 0
	for _, sg := range idx.segs {
		if cachesLive(sg) {
			cached++
		}
	}
	if len(idx.segs) < 5 || cached < 4 {
		t.Fatalf("%d segments, %d of them mostly deleted: the test wants many", len(idx.segs), cached)
	}
	queries := mixedQueries(site, 13, 300)
	searches := map[string]SearchOptions{
		"one":    {N: 1, NoSnippets: true},
		"top10":  {N: 10, NoSnippets: true},
		"offset": {N: 3, Offset: 4, NoSnippets: true},
		"deep":   {N: 60, NoSnippets: true},
		"wide":   {N: 250, NoSnippets: true},
		"stop":   {N: 5, NoSnippets: true, MaxMatches: 40},
	}
	want := map[string]string{}
	for name, opt := range searches {
		reads := liveReads.Load()
		want[name] = sameWithout(t, idx, queries, name, opt, &liveLists)
		if liveReads.Load() == reads {
			t.Errorf("%s: no list read through the cache", name)
		}
	}
	idx.Close()

	// An index opened for one query allocates the cache's slots by the
	// block its lists fall in, not the whole table.
	one := open(t, dir)
	defer one.Close()
	for range 2 { // the second time the lists are cached
		if _, err := one.Search(queries[0], SearchOptions{N: 10, NoSnippets: true}); err != nil {
			t.Fatal(err)
		}
	}
	slots := 0
	blocks := eachSlot(&one.liveCache, func(p *atomic.Pointer[liveEntry]) {
		if p.Load() != nil {
			slots++
		}
	})
	if slots == 0 || blocks > slots {
		t.Errorf("one query: %d of the live cache's %d blocks allocated for %d slots used", blocks, len(one.liveCache.blocks), slots)
	}

	merged := forceMerged(t, dir)
	for name, opt := range searches {
		if got := resultBits(t, merged, queries, opt, true); got != want[name] {
			t.Errorf("%s: one segment answers\n%s\n%d segments\n%s", name, got, len(idx.segs), want[name])
		}
	}
}

// manySegments builds in dir the pages of segmentedSite with merges held
// back and every deletion kept, and opens it: many segments, most of
// them partly deleted.
func manySegments(t *testing.T, dir string) (*synth.Site, *Index) {
	t.Helper()
	site, _, _ := segmentedSite(t, dir, Options{MergeFactor: 64, DeletesPct: 100})
	idx := open(t, dir)
	if len(idx.segs) < 5 {
		t.Fatalf("%d segments: the test wants many", len(idx.segs))
	}
	return site, idx
}

// exactOptions are the searches the exactness tests over many segments
// compare: pages of results at several depths, an offset, and a search
// stopped by MaxMatches.
func exactOptions() map[string]SearchOptions {
	return map[string]SearchOptions{
		"top10":  {N: 10, NoSnippets: true},
		"offset": {N: 3, Offset: 4, NoSnippets: true},
		"one":    {N: 1, NoSnippets: true},
		"deep":   {N: 60, NoSnippets: true},
		"wide":   {N: 250, NoSnippets: true},
		"stop":   {N: 5, NoSnippets: true, MaxMatches: 40},
	}
}

// sameMerged checks that the index in dir, merged into one segment,
// answers each search of opts as want (the many segments' answers).
func sameMerged(t *testing.T, dir string, queries []string, opts map[string]SearchOptions, want map[string]string) {
	t.Helper()
	merged := forceMerged(t, dir)
	for name, opt := range opts {
		if got := resultBits(t, merged, queries, opt, true); got != want[name] {
			t.Errorf("%s: one segment answers\n%s\nmany segments\n%s", name, got, want[name])
		}
	}
}

// TestSegShortcutsExact: the scan's shortcuts over many segments (a
// word's lookups cached, a segment lacking a word every match holds
// passed unread, one whose matches are all below the floor of the tiers
// passed unwalked, the short lists opened at a segment's first bound)
// answer to the bit as without them, match counts included, a second
// time (the lookups cached), as the exhaustive scan, and as the same
// pages merged into one segment; and both segments passed are met.
func TestSegShortcutsExact(t *testing.T) {
	dir := t.TempDir()
	site, idx := manySegments(t, dir)
	queries := mixedQueries(site, 17, 300)
	opts := exactOptions()
	want := map[string]string{}
	and, floor := andPassed.Load(), floorPassed.Load()
	for name, opt := range opts {
		want[name] = sameWithout(t, idx, queries, name, opt, &segShortcuts)
	}
	if and, floor = andPassed.Load()-and, floorPassed.Load()-floor; and == 0 || floor == 0 {
		t.Errorf("%d segments passed lacking a word, %d below the floor: the test wants both", and, floor)
	}
	idx.Close()
	sameMerged(t, dir, queries, opts, want)
}

// TestDenseListsExact: a search over many segments, most of them partly
// deleted, whose words' lists are decoded (asked for before: see
// denseOf) and walked by their docIDs answers to the bit as the walk of
// the lists themselves, match counts included, a second time, and as the
// exhaustive scan; and as the same pages merged into one segment. The
// decoded lists are walked, in segments with deletions too.
func TestDenseListsExact(t *testing.T) {
	dir := t.TempDir()
	site, idx := manySegments(t, dir)
	queries := mixedQueries(site, 19, 300)
	opts := exactOptions()
	resultBits(t, idx, queries, opts["top10"], true) // each word asked for once: decoded when asked again
	want := map[string]string{}
	cursors, deleted := denseCursors.Load(), denseDeleted.Load()
	for name, opt := range opts {
		want[name] = sameWithout(t, idx, queries, name, opt, &denseLists)
	}
	if cursors, deleted = denseCursors.Load()-cursors, denseDeleted.Load()-deleted; cursors == 0 || deleted == 0 {
		t.Errorf("%d cursors walked decoded lists, %d of them in segments with deletions: the test wants both", cursors, deleted)
	}
	// The budget counts the decoded lists the cache holds: those of the
	// words taken over in their slot have left it.
	held, words := int64(0), 0
	eachSlot(&idx.wlCache, func(p *atomic.Pointer[wordLists]) {
		if e := p.Load(); e != nil {
			words++
			if d := e.dense.Load(); d != nil {
				for k, dl := range d.segs {
					if dl != nil {
						held += 8 * int64(e.segs[k].nf)
					}
				}
			}
		}
	})
	if got := idx.denseBytes.Load(); got != held || held == 0 {
		t.Errorf("the budget counts %d bytes of decoded lists, the cache (%d words) holds %d", got, words, held)
	}
	idx.Close()
	sameMerged(t, dir, queries, opts, want)
}

// TestPartlyDeletedStepped: over segments that later batches partly
// superseded (every page fetched, then a few of them re-crawled in each
// batch, merges held back), a search passes the deleted postings of a
// segment less than half deleted by its deletion list, without reading
// the segment's documents table for its live documents (no window of
// them is read), and answers to the bit as the same pages merged into
// one segment, match counts included. The pages link nowhere, so that a
// re-crawl re-indexes its own page alone (no other's anchors change).
func TestPartlyDeletedStepped(t *testing.T) {
	dir := t.TempDir()
	words := strings.Fields("amber basalt cobalt dune ember fjord glacier heath isle jade karst loch moor nectar oasis prairie quartz reef " +
		"savanna tundra umber valley willow xeric yarrow zephyr")
	rng := rand.New(rand.NewPCG(9, 28))
	text := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(words[min(rng.IntN(len(words)), rng.IntN(len(words)))]) // the first words the commonest
			sb.WriteByte(' ')
		}
		return sb.String()
	}
	page := map[string][]byte{}
	for batch := range 10 {
		var urls []string
		for i := range 1500 {
			if batch == 0 || rng.IntN(15) == 0 { // a few pages re-crawled, changed
				u := fmt.Sprintf("http://site.test/p/%d.html", i)
				page[u] = fmt.Appendf(nil, "<html><head><title>%s</title></head><body><p>%s</p></body></html>", text(3), text(40))
				urls = append(urls, u)
			}
		}
		batchOf(t, dir, Options{MergeFactor: 64, DeletesPct: 100}, urls, func(u string) []byte { return page[u] })
	}
	idx := open(t, dir)
	partly := 0
	for _, sg := range idx.segs {
		if sg.del != nil && !sg.mostlyDeleted() {
			partly++
		}
	}
	if partly < 5 {
		t.Fatalf("%d of %d segments partly deleted: the test wants several", partly, len(idx.segs))
	}
	var queries []string
	for range 300 {
		queries = append(queries, text(1+rng.IntN(3)))
	}
	opts := exactOptions()
	want := map[string]string{}
	for name, opt := range opts {
		want[name] = resultBits(t, idx, queries, opt, true)
	}
	for _, sg := range idx.segs {
		if sg.del != nil && !sg.mostlyDeleted() && sg.liveWins != nil {
			t.Errorf("segment %d, %d of %d documents deleted: its documents table was read for its live documents", sg.info.ID, sg.info.Deleted, sg.info.Docs)
		}
	}
	idx.Close()
	sameMerged(t, dir, queries, opts, want)
}
