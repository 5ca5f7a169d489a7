package barrel

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

// docStatsSite builds in dir batches [from, to) of a site whose batches
// re-crawl a few earlier pages with another page's text (so their length
// changes and their older copies stay, deleted, in older segments), ranked
// every third batch.
func docStatsSite(t *testing.T, dir string, from, to int) *synth.Site {
	t.Helper()
	site := synth.New(900, 3000, 7)
	rng := rand.New(rand.NewPCG(7, 13))
	page := map[string][]byte{}
	for batch := range to {
		var urls []string
		for i := batch * 100; i < (batch+1)*100; i++ {
			urls = append(urls, site.URL(i))
			page[site.URL(i)] = site.Page(i)
		}
		for i := range batch * 100 {
			if rng.IntN(12) == 0 {
				u := site.URL(i)
				page[u] = site.Page((i + batch*131) % 900)
				urls = append(urls, u)
			}
		}
		if batch >= from {
			batchOf(t, dir, Options{MergeFactor: 64, DeletesPct: 100, PageRankEvery: 3}, urls, func(u string) []byte { return page[u] })
		}
	}
	return site
}

// withoutDocStats opens dir as an index that reads its pages' statistics
// from the segments' documents tables and the ranks, as format 12 did.
func withoutDocStats(t *testing.T, dir string) *Index {
	t.Helper()
	idx := open(t, dir)
	idx.dstats.close()
	idx.dstats = nil
	return idx
}

var docStatsSearches = map[string]SearchOptions{
	"top10":  {N: 10, NoSnippets: true},
	"deep":   {N: 60, NoSnippets: true},
	"fields": {N: 10, NoSnippets: true, Explain: true},
}

// TestDocStats: the document statistics table holds each live page's
// length and title length as its entry in its segment gives them, for the
// segments it covers, on an index whose re-crawled pages changed length
// (their older copies deleted in older segments) and whose last batch
// came after the table (its segment read from its documents table); every
// search answers to the bit as with the lengths read from the segments'
// documents tables; Verify passes, and fails on a record changed with its
// block sums made good.
func TestDocStats(t *testing.T) {
	docStatsShare = 1 // the table written anew by the rankings only
	t.Cleanup(func() { docStatsShare = 8 })
	dir := t.TempDir()
	site := docStatsSite(t, dir, 0, 8)
	idx := open(t, dir)
	m := idx.Manifest()
	if m.Format != formatNumber || m.DocStats == 0 || idx.dstats == nil || idx.dstats.count > int(m.Docs) {
		t.Fatalf("format %d, docstats table %d", m.Format, m.DocStats)
	}
	if m.RankSource != "pagerank" || m.RankedDocs == 0 || m.RankedAt >= m.Batches {
		t.Fatalf("ranked at batch %d of %d: the test wants a ranking older than the last batch", m.RankedAt, m.Batches)
	}
	live := map[uint32]DocEntry{}
	covered, newer := 0, 0
	for _, s := range idx.segs {
		err := s.eachLive(func(d uint32, e DocEntry) error {
			live[d] = e
			if !idx.coveredBy(s, d) {
				newer++
				return nil
			}
			covered++
			r, err := idx.dstats.rec(int(d))
			if err != nil {
				t.Fatal(err)
			}
			if w, tw := decodeDocStat(r); w != e.Words || tw != e.TitleWords || e.Status == StatusFetched && w == 0 {
				t.Errorf("doc %d: %d words, %d in the title; its entry says %d, %d", d, w, tw, e.Words, e.TitleWords)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if covered < 100 || newer < 50 {
		t.Fatalf("%d live pages the table covers, %d in segments it does not: the test wants both", covered, newer)
	}
	// Older copies whose length differs from the live one's: reading a
	// deleted copy's lengths would show.
	changed := 0
	for _, s := range idx.segs {
		s.eachDoc(func(d uint32, e DocEntry, _ []byte) error {
			if s.del.has(d) && e.Words != live[d].Words {
				changed++
			}
			return nil
		})
	}
	if changed < 20 {
		t.Fatalf("%d deleted copies of another length: the test wants more", changed)
	}
	queries := mixedQueries(site, 17, 200)
	without := withoutDocStats(t, dir)
	for name, opt := range docStatsSearches {
		got := resultBits(t, idx, queries, opt, true)
		if want := resultBits(t, without, queries, opt, true); got != want {
			t.Errorf("%s: with the table:\n%s\nfrom the documents tables:\n%s", name, got, want)
		}
		if strings.Count(got, " ") < 5*len(queries) {
			t.Errorf("%s: few results:\n%s", name, got)
		}
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}

	// A record changed, its table written again (block sums good): the
	// open and the searches cannot tell; Verify does.
	name := runName(docStatsKind, m.DocStats)
	var recs [][]byte
	for i := range idx.dstats.count {
		r, err := idx.dstats.rec(i)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, append([]byte(nil), r...))
	}
	var doc uint32
	for _, s := range idx.segs {
		if s.info.InDocStats {
			if err := s.eachLive(func(d uint32, _ DocEntry) error {
				doc = d
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	w, tw := decodeDocStat(recs[doc])
	recs[doc] = appendDocStat(nil, w+1, tw)
	if err := os.WriteFile(filepath.Join(dir, name), encodeTable(docStatSize, recs), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := open(t, dir)
	if err := bad.Verify(); err == nil || !strings.Contains(err.Error(), name) {
		t.Errorf("a changed record: Verify says %v", err)
	}
	bad.Close()

	// A byte flipped: the query that reads its block reports the table.
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < docStatSize*idx.dstats.count; i += 64 {
		data[i] ^= 0x40
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	flipped := open(t, dir)
	if _, err := flipped.Search(queries[0], SearchOptions{N: 10, NoSnippets: true}); err == nil || !strings.Contains(err.Error(), name) {
		t.Errorf("a damaged block: the search says %v", err)
	}
	if err := flipped.Verify(); err == nil {
		t.Error("a damaged block: Verify passes")
	}
}

// TestDocStatsDue: the table is written anew by a ranking, and once the
// segments it does not cover hold more than a docStatsShare-th of the
// docIDs, not by every batch (here a half: a batch's segment holds its
// pages and the earlier pages it re-indexed for their new anchors).
func TestDocStatsDue(t *testing.T) {
	docStatsShare = 2
	t.Cleanup(func() { docStatsShare = 8 })
	dir := t.TempDir()
	site := synth.New(20000, 3000, 9)
	page := map[string][]byte{}
	var ids []int
	for batch := range 12 {
		var urls []string
		for i := batch * 200; i < (batch+1)*200; i++ {
			urls = append(urls, site.URL(i))
			page[site.URL(i)] = site.Page(i)
		}
		batchOf(t, dir, Options{MergeFactor: 64, PageRankEvery: 100}, urls, func(u string) []byte { return page[u] })
		m, err := readManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.DocStats)
		outside := 0
		for _, si := range m.Segments {
			if !si.InDocStats {
				outside += si.Docs
			}
		}
		if outside*docStatsShare > int(m.Docs) {
			t.Errorf("batch %d: %d documents in segments the table does not cover, of %d docIDs", batch+1, outside, m.Docs)
		}
	}
	rewrites := 0
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1] {
			rewrites++
		}
	}
	if ids[0] == 0 || rewrites == 0 || rewrites >= len(ids)-1 {
		t.Errorf("the table's IDs by batch %v: want it kept by some batches and written anew by others", ids)
	}
	if err := open(t, dir).Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestFormat12Index: an index of format 12 (no document statistics table)
// opens and answers as a fresh index of the same batches; its next commit
// makes it the current format with the table (made from its segments'
// entries), which verifies and answers to the bit as a fresh build of the
// same batches.
func TestFormat12Index(t *testing.T) {
	old, fresh, site := olderAndFresh(t, &writeDocStats)
	queries := mixedQueries(site, 19, 150)

	idx := open(t, old)
	if m := idx.Manifest(); m.Format != formatNoDocStats || m.DocStats != 0 || idx.dstats != nil {
		t.Fatalf("format %d, docstats table %d", m.Format, m.DocStats)
	}
	want := open(t, fresh)
	for name, opt := range docStatsSearches {
		if got, w := resultBits(t, idx, queries, opt, true), resultBits(t, want, queries, opt, true); got != w {
			t.Errorf("%s: format 12 answers\n%s\nthe current format:\n%s", name, got, w)
		}
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	idx.Close()
	want.Close()

	docStatsSite(t, old, 5, 7)
	docStatsSite(t, fresh, 5, 7)
	idx = open(t, old)
	if m := idx.Manifest(); m.Format != formatNumber || idx.dstats == nil {
		t.Fatalf("after two batches: format %d, docstats table %d", m.Format, m.DocStats)
	}
	want = open(t, fresh)
	for name, opt := range docStatsSearches {
		if got, w := resultBits(t, idx, queries, opt, true), resultBits(t, want, queries, opt, true); got != w {
			t.Errorf("%s: the upgraded index answers\n%s\na fresh one:\n%s", name, got, w)
		}
	}
	for _, x := range []*Index{idx, want} {
		if err := x.Verify(); err != nil {
			t.Error(err)
		}
	}
}

// olderAndFresh builds the same five batches of docStatsSite twice: in
// old with the writer's switch *off turned off (an index of an older
// format), in fresh as the current format writes them.
func olderAndFresh(t *testing.T, off *bool) (old, fresh string, site *synth.Site) {
	old = t.TempDir()
	*off = false
	docStatsSite(t, old, 0, 5)
	*off = true
	t.Cleanup(func() { *off = true })
	fresh = t.TempDir()
	return old, fresh, docStatsSite(t, fresh, 0, 5)
}

// TestFirstSearchUncached: the first search on an index reads its pages'
// statistics from the tables without the cache (none of it allocated),
// and answers to the bit as a search of the same query whose statistics
// come from the cache (filled by the same queries before), on an index of
// pages both in and out of the statistics table; from the second search
// on, the cache is used.
func TestFirstSearchUncached(t *testing.T) {
	dir := t.TempDir()
	site := docStatsSite(t, dir, 0, 8)
	queries := mixedQueries(site, 17, 60)
	warm := open(t, dir)
	for name, opt := range docStatsSearches {
		resultBits(t, warm, queries, opt, true) // fills the cache
		want := resultBits(t, warm, queries, opt, true)
		var got strings.Builder
		for _, q := range queries {
			idx, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			got.WriteString(resultBits(t, idx, []string{q}, opt, true))
			if idx.stats != nil {
				t.Fatalf("%s: %q: the first search on an index allocated the statistics cache", name, q)
			}
			idx.Close()
		}
		if got.String() != want {
			t.Errorf("%s: first searches:\n%s\nfrom the cache:\n%s", name, got.String(), want)
		}
	}
	cached := 0
	for i := range warm.stats {
		if c := warm.stats[i].Load(); c != nil {
			for j := range c {
				if c[j].Load()&statSet != 0 {
					cached++
				}
			}
		}
	}
	if cached < 100 {
		t.Errorf("%d documents in the cache after the searches: want it used from the second search on", cached)
	}
}
