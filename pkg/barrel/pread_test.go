package barrel

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// TestFirstLookupRead: on segments large enough to be mapped, a word's
// first lookup in a barrel of a segment reads the barrel's word arrays
// (in blocks, its fences and one block) by pread, not in place, and its
// short lists (copies of the lists in place), and a second word of the
// barrel reads the arrays in place (loaded, or their fences checked);
// the first searches on indexes opened for them answer to the bit as the
// same searches on an index whose arrays are loaded; the open index
// keeps one descriptor a mapped segment, and Close gives them all back.
func TestFirstLookupRead(t *testing.T) {
	dir := t.TempDir()
	site := docStatsSite(t, dir, 0, 6)
	queries := mixedQueries(site, 23, 40)
	fds := openFDs(t)
	warm := open(t, dir)
	mapped := 0
	for _, s := range warm.segs {
		if s.fdOpen {
			mapped++
		}
	}
	if mapped < 2 {
		t.Fatalf("%d of %d segments mapped: the test wants larger segments", mapped, len(warm.segs))
	}
	if got := openFDs(t); got < fds+mapped {
		t.Errorf("an open index of %d mapped segments holds %d descriptors more", mapped, got-fds)
	}
	opt := SearchOptions{N: 10, NoSnippets: true, Explain: true}
	for range 2 {
		resultBits(t, warm, queries, opt, true)
	}
	// A barrel's arrays are loaded in place by its second lookup: the
	// queries' words looked up again in each segment.
	loaded := 0
	for _, q := range queries {
		for _, w := range strings.Fields(q) {
			id, ok, err := warm.lookupWord(w)
			if err != nil || !ok {
				continue
			}
			for _, s := range warm.segs {
				if _, _, _, _, err := s.lists(id); err != nil {
					t.Fatal(err)
				}
				if s.fdOpen && inPlace(s, lexicon.BarrelOf(id)) {
					loaded++
				}
			}
		}
	}
	if loaded == 0 {
		t.Fatal("no word arrays loaded in place after the second lookups")
	}
	want := resultBits(t, warm, queries, opt, true)
	var got strings.Builder
	read, copied := 0, 0
	for _, q := range queries {
		idx, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(resultBits(t, idx, []string{q}, opt, true))
		words := map[int]int{} // the words looked up (each in every segment), by barrel
		eachSlot(&idx.wlCache, func(p *atomic.Pointer[wordLists]) {
			if e := p.Load(); e != nil {
				words[lexicon.BarrelOf(e.id)]++
			}
		})
		// The lists read by pread are copies of the lists in place.
		eachSlot(&idx.wlCache, func(p *atomic.Pointer[wordLists]) {
			e := p.Load()
			if e == nil {
				return
			}
			w, err := warm.wordLists(e.id)
			if err != nil {
				t.Fatal(err)
			}
			for k, l := range e.segs {
				for _, x := range [][2][]byte{{l.full, w.segs[k].full}, {l.short, w.segs[k].short}} {
					if chk, _ := lookupInv(x[0]); chk == nil && len(x[0]) > 0 && idx.segs[k].fdOpen {
						copied++
					}
					if !bytes.Equal(x[0], x[1]) {
						t.Fatalf("%q: word %d segment %d: the list read differs from the list in place", q, e.id, idx.segs[k].info.ID)
					}
				}
			}
		})
		for _, s := range idx.segs {
			for bb := range lexicon.Barrels {
				if s.asked.Load()&(1<<bb) != 0 {
					read++
					if s.fdOpen && inPlace(s, bb) && words[bb] == 1 {
						t.Fatalf("%q: segment %d barrel %d: the first lookup loaded the arrays in place", q, s.info.ID, bb)
					}
				}
			}
		}
		idx.Close()
	}
	if got.String() != want {
		t.Errorf("first lookups read:\n%s\nfrom the arrays loaded:\n%s", got.String(), want)
	}
	if read == 0 || copied == 0 {
		t.Errorf("the first searches asked %d barrels and read %d lists by pread: the test wants both", read, copied)
	}
	warm.Close()
	if got := openFDs(t); got != fds {
		t.Errorf("%d descriptors open after the indexes closed, %d before", got, fds)
	}
}

// TestFirstLookupDamage: a flipped byte in the word pointers' headers of
// a mapped segment (read by pread at open) fails the open; one in a
// word's short list fails its first search (the list read by pread) as
// it fails a walk of the list in place; one in a
// barrel's word arrays (in a
// posting count, which only their checksum tells) of a
// mapped segment fails the first lookup in it (read by pread) as it fails
// the lookup that loads the arrays in place, naming the segment and the
// barrel, and every later lookup in the segment; Verify reports it too.
func TestFirstLookupDamage(t *testing.T) {
	dir := t.TempDir()
	site := docStatsSite(t, dir, 0, 6)
	idx := open(t, dir)
	var word string
	var id uint32
	var sg *segment
	for _, q := range site.Queries(50) {
		for _, w := range strings.Fields(q) {
			i, ok, err := idx.lookupWord(w)
			if err != nil || !ok {
				continue
			}
			for _, s := range idx.segs {
				if full, _, nf, _, err := s.lists(i); err == nil && nf > 0 && len(full) <= listReadMax && s.fdOpen {
					word, id, sg = w, i, s
				}
			}
		}
	}
	if sg == nil {
		t.Fatal("no word found in a mapped segment")
	}
	bb := lexicon.BarrelOf(id)
	at := countAt(t, sg, bb, lexicon.Rel(id)) + 1 // a posting count: only the checksum tells
	path, name, head := sg.path, sg.ptrsName, sg.ptrsAt+int64(len(segPtrsMagic))+ptrsHeader*int64(bb)+12
	e, _, _, err := sg.find(bb, lexicon.Rel(id))
	if err != nil {
		t.Fatal(err)
	}
	inList := sg.secs[bb].fullStart + (e.fullLo+e.fullHi)/2
	idx.Close()

	// A short list, read by pread at the word's first lookup: a flipped
	// byte fails the search as it fails the walk of the list in place.
	var listErrs []string
	listDir := t.TempDir()
	if err := os.CopyFS(listDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	flipByte(t, filepath.Join(listDir, filepath.Base(path)), inList, 0x10)
	for _, first := range []bool{true, false} {
		idx, err := Open(listDir)
		if err != nil {
			t.Fatal(err)
		}
		if !first {
			for _, s := range idx.segs {
				s.asked.Store(^uint64(0))
			}
		}
		_, err = idx.Search(word, SearchOptions{N: 10, NoSnippets: true})
		if err == nil || !strings.Contains(err.Error(), name+": bytes") || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Fatalf("first lookup %v: search of %q with a flipped byte in its list: %v", first, word, err)
		}
		listErrs = append(listErrs, err.Error())
		idx.Close()
	}
	if listErrs[0] != listErrs[1] {
		t.Errorf("the damage of a list read by pread: %s\nin place: %s", listErrs[0], listErrs[1])
	}

	// The headers, read by pread at open: a flipped byte fails the open.
	other := t.TempDir()
	if err := os.CopyFS(other, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	flipByte(t, filepath.Join(other, filepath.Base(path)), head, 0x10)
	if _, err := Open(other); err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "ptrs: header checksum mismatch") {
		t.Errorf("open with a flipped byte in the word pointers' headers: %v", err)
	}

	flipByte(t, path, at, 0x10)

	var errs []string
	for _, first := range []bool{true, false} {
		idx, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range idx.segs {
			if !first {
				s.asked.Store(^uint64(0)) // as if asked before: the arrays loaded in place
			}
		}
		_, err = idx.Search(word, SearchOptions{N: 10, NoSnippets: true})
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "barrel") {
			t.Fatalf("first lookup %v: search of %q: %v, want the damage of %s", first, word, err, name)
		}
		errs = append(errs, err.Error())
		if _, err2 := idx.Search(word+" "+word, SearchOptions{N: 10, NoSnippets: true}); err2 == nil {
			t.Errorf("first lookup %v: the second search passes the damage", first)
		}
		idx.Close()
	}
	if errs[0] != errs[1] {
		t.Errorf("the damage read by pread: %s\nread in place: %s", errs[0], errs[1])
	}
	// Verify decodes every barrel whole: it reports the damage too.
	idx = open(t, dir)
	if err := idx.Verify(); err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("Verify with a flipped posting count: %v", err)
	}
}

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// inPlace reports whether segment s reads barrel bb's word arrays in
// place: loaded, or in blocks with their fences checked.
func inPlace(s *segment, bb int) bool {
	return s.words[bb] != nil || s.blkReady.Load()&(1<<bb) != 0
}

// countAt is where the full posting count of the word of relative ID rel
// in barrel bb lies in sg's compound file: in its barrel's arrays, or in
// its block of them.
func countAt(t *testing.T, sg *segment, bb int, rel uint32) int64 {
	t.Helper()
	a, err := sg.ptrs.loadBarrel(bb, &sg.secs[bb])
	if err != nil {
		t.Fatal(err)
	}
	j, found := a.rels.search(rel)
	if !found {
		t.Fatalf("word %d not in barrel %d", rel, bb)
	}
	n, at := sg.ptrs.n[bb], sg.ptrsAt+int64(sg.ptrs.off[bb])
	if !sg.ptrs.blocks {
		return at + int64(4*n+2*8*(n+1)+4*j)
	}
	return at + int64(blockAt(n, j/wordBlockWords)+wordEntryLen*(j%wordBlockWords)+4+8+8)
}

// TestFormat13Index: an index of format 13 (its word arrays checked
// whole, not in blocks) opens and answers as a fresh index of the same
// batches, its first lookups by pread and its arrays loaded in place
// alike; its next commits make it format 14, its new segments in blocks
// beside the old ones, and it answers to the bit as a fresh build, by
// first lookups and by loaded arrays, and verifies.
func TestFormat13Index(t *testing.T) {
	old, fresh, site := olderAndFresh(t, &writeWordBlocks)
	queries := mixedQueries(site, 29, 80)
	opt := SearchOptions{N: 10, NoSnippets: true, Explain: true}

	// Each query's first search on the index opened for it (its lookups
	// by pread), then every query on one index (loaded in place).
	answers := func(dir string) string {
		var sb strings.Builder
		for _, q := range queries {
			idx := open(t, dir)
			sb.WriteString(resultBits(t, idx, []string{q}, opt, true))
			idx.Close()
		}
		idx := open(t, dir)
		defer idx.Close()
		for range 2 {
			sb.WriteString(resultBits(t, idx, queries, opt, true))
		}
		if err := idx.Verify(); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		return sb.String()
	}
	kinds := func(dir string) (blocks, whole int) {
		idx := open(t, dir)
		defer idx.Close()
		for _, s := range idx.segs {
			switch {
			case !s.fdOpen: // too small to be mapped: no lookup by pread
			case s.ptrs.blocks:
				blocks++
			default:
				whole++
			}
		}
		return blocks, whole
	}
	if m := open(t, old).Manifest(); m.Format != formatNoWordBlocks {
		t.Fatalf("format %d, want %d", m.Format, formatNoWordBlocks)
	}
	if b, w := kinds(old); b != 0 || w == 0 {
		t.Fatalf("format 13: %d mapped segments in blocks, %d not", b, w)
	}
	if got, want := answers(old), answers(fresh); got != want {
		t.Errorf("format 13 answers\n%s\nformat 14:\n%s", got, want)
	}

	docStatsSite(t, old, 5, 7)
	docStatsSite(t, fresh, 5, 7)
	if m := open(t, old).Manifest(); m.Format != formatNumber {
		t.Fatalf("after two batches: format %d", m.Format)
	}
	if b, w := kinds(old); b == 0 || w == 0 {
		t.Fatalf("after two batches: %d mapped segments in blocks, %d not: the test wants both", b, w)
	}
	if got, want := answers(old), answers(fresh); got != want {
		t.Errorf("the upgraded index answers\n%s\na fresh one:\n%s", got, want)
	}
}
