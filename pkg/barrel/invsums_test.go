package barrel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// fourFiles makes the test's commits write a segment as the four files of
// format 10 and before, as an index of an older format has them.
func fourFiles(t *testing.T) {
	compoundSegments = false
	t.Cleanup(func() { compoundSegments = true })
}

// asFormat rewrites dir's manifest as format f; below format 10 its
// segments' block sums go, as an index of that format has none.
func asFormat(t *testing.T, dir string, f int) {
	t.Helper()
	m, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Format = f
	if f < formatBlockSums {
		for _, si := range m.Segments {
			name := segName(si.ID, "sums")
			if _, ok := m.Files[name]; !ok {
				continue
			}
			delete(m.Files, name)
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := writeManifest(dir, m); err != nil {
		t.Fatal(err)
	}
}

// sumsPages are pages enough for an .inv file of many blocks, each
// with a word of its own.
func sumsPages(from, n int) map[string]string {
	pages := map[string]string{}
	for i := from; i < from+n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "<html><head><title>Page %d uniq%dx</title></head><body><p>", i, i)
		for k := range 60 {
			fmt.Fprintf(&b, "filler%d word%d ", (i*7+k)%500, k)
		}
		fmt.Fprintf(&b, "uniq%dx</p></body></html>", i)
		pages[fmt.Sprintf("http://s.test/p%d.html", i)] = b.String()
	}
	return pages
}

// listRange is where word w's full list lies in the .inv file of the
// index's segment k.
func listRange(t *testing.T, idx *Index, k int, w string) (lo, hi int64) {
	t.Helper()
	id, ok, err := idx.lex.Lookup([]byte(w))
	if err != nil || !ok {
		t.Fatalf("%s: not in the lexicon", w)
	}
	s := idx.segs[k]
	sec, a, err := s.sec(lexicon.BarrelOf(id))
	if err != nil {
		t.Fatal(err)
	}
	i, found := a.rels.search(lexicon.Rel(id))
	if !found {
		t.Fatalf("%s: not in segment %d", w, k)
	}
	return sec.fullStart + int64(a.fullOff.at(i)), sec.fullStart + int64(a.fullOff.at(i+1))
}

// flipByte flips the bits mask of byte off of the file at path.
func flipByte(t *testing.T, path string, off int64, mask byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[off] ^= mask
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustID(t *testing.T, idx *Index, w string) uint32 {
	t.Helper()
	id, ok, err := idx.lex.Lookup([]byte(w))
	if err != nil || !ok {
		t.Fatalf("%s: not in the lexicon (%v)", w, err)
	}
	return id
}

func blocksChecked(s *segment) int {
	n := 0
	for _, w := range s.sums.ok {
		n += bits.OnesCount64(w)
	}
	return n
}

// A query checks the blocks of the lists it reads, not their barrels:
// a damaged byte in one word's list fails the queries that read that
// list, naming the file and the bytes, while a word whose lists lie in
// other blocks is found; Verify finds the damage from any query.
func TestBlockSums(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, Options{}, sumsPages(0, 400))
	idx := open(t, dir)
	s := idx.segs[0]
	if s.sums == nil || s.sums.sums.len() < 8 {
		t.Fatalf("block sums: %+v (an .inv file of %d bytes)", s.sums, s.invSize)
	}
	if _, err := idx.Search("uniq7x", SearchOptions{N: 5, NoSnippets: true}); err != nil {
		t.Fatal(err)
	}
	if got, all := blocksChecked(s), s.sums.sums.len(); got == 0 || 4*got > all {
		t.Errorf("one query checked %d of %d blocks", got, all)
	}
	// The word whose list lies farthest from uniq7x's blocks.
	alo, ahi := listRange(t, idx, 0, "uniq7x")
	var far string
	var lo int64
	for i := range 400 {
		w := fmt.Sprintf("uniq%dx", i)
		l, h := listRange(t, idx, 0, w)
		if h > l && (l>>s.sums.shift > (ahi-1)>>s.sums.shift+1 || (h-1)>>s.sums.shift+1 < alo>>s.sums.shift) {
			far, lo = w, l
			break
		}
	}
	if far == "" {
		t.Fatal("no word's list away from uniq7x's blocks")
	}
	idx.Close()
	flipByte(t, s.path, lo, 0x55)

	idx = open(t, dir)
	defer idx.Close()
	if got := resultURLs(t, idx, "uniq7x", 5); len(got) != 1 || got[0] != "http://s.test/p7.html" {
		t.Errorf("uniq7x beside a damaged block: %q", got)
	}
	_, err := idx.Search(far, SearchOptions{N: 5, NoSnippets: true})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(s.path)+": bytes ") {
		t.Errorf("%s, its list damaged: %v", far, err)
	}
	if err := idx.Verify(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Verify: %v", err)
	}
}

// An index of format 9 has no block sums: it opens as it is, its
// barrels checked whole, and its next commit writes every segment's sums
// and makes it the current format; a damaged .inv file fails that commit, naming
// the file, and leaves the index as it was.
func TestFormat9Index(t *testing.T) {
	fourFiles(t)
	dir := t.TempDir()
	build(t, dir, Options{}, sumsPages(0, 200))
	build(t, dir, Options{}, sumsPages(200, 100))
	asFormat(t, dir, formatNoSums)
	idx := open(t, dir)
	if m := idx.Manifest(); m.Format != formatNoSums || len(idx.segs) < 2 {
		t.Fatalf("opened as format %d with %d segments", m.Format, len(idx.segs))
	}
	for _, s := range idx.segs {
		if s.sums != nil {
			t.Fatalf("segment %d has block sums", s.info.ID)
		}
	}
	before := resultURLs(t, idx, "uniq250x filler3", 10)
	if len(before) == 0 {
		t.Fatal("no result")
	}
	idx.Close()

	// A format 10 manifest without a segment's sums is damaged.
	asFormat(t, dir, formatBlockSums)
	if _, err := Open(dir); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), ".sums missing") {
		t.Errorf("format 10 without sums: %v", err)
	}
	asFormat(t, dir, formatNoSums)

	// A damaged .inv file: the commit fails, the index stays format 9.
	m, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(dir, segName(m.Segments[0].ID, "inv"))
	good, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(good)
	bad[len(bad)/2] ^= 1
	if err := os.WriteFile(inv, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err == nil || !strings.Contains(err.Error(), segName(m.Segments[0].ID, "inv")) {
		t.Errorf("a commit over a damaged .inv file: %v", err)
	}
	b.Close()
	if m, err := readManifest(dir); err != nil || m.Format != formatNoSums {
		t.Fatalf("after the failed commit: %v, %v", m, err)
	}
	if err := os.WriteFile(inv, good, 0o644); err != nil {
		t.Fatal(err)
	}

	build(t, dir, Options{}, sumsPages(300, 10))
	m, err = readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Format != formatNumber {
		t.Errorf("after a batch: format %d, want %d", m.Format, formatNumber)
	}
	idx = open(t, dir)
	defer idx.Close()
	for _, s := range idx.segs {
		if s.sums == nil {
			t.Errorf("segment %d: no block sums after the commit", s.info.ID)
		}
	}
	if after := resultURLs(t, idx, "uniq250x filler3", 10); !slices.Equal(after, before) {
		t.Errorf("results after the upgrade %q, before %q", after, before)
	}
	if err := idx.Verify(); err != nil {
		t.Error(err)
	}

	// The same batches built at format 10: the same segments and sums,
	// as CommitCompletes says.
	fresh := t.TempDir()
	build(t, fresh, Options{}, sumsPages(0, 200))
	build(t, fresh, Options{}, sumsPages(200, 100))
	build(t, fresh, Options{}, sumsPages(300, 10))
	for _, s := range idx.segs {
		for _, ext := range []string{"inv", "sums"} {
			name := segName(s.info.ID, ext)
			a, errA := os.ReadFile(filepath.Join(dir, name))
			b, errB := os.ReadFile(filepath.Join(fresh, name))
			if errA != nil || errB != nil || !slices.Equal(a, b) {
				t.Errorf("%s: upgraded and built differ (%v, %v)", name, errA, errB)
			}
		}
	}
	if !CommitCompletes(formatNoSums) || CommitCompletes(formatNoEmph) {
		t.Error("CommitCompletes: format 9 is completed by a commit, format 8 is not")
	}
}

// A sums file that does not fit its .inv file is refused, naming it.
func TestDecodeInvSums(t *testing.T) {
	good := encodeInvSums([]uint32{1, 2, 3}, 1<<14)
	if s, err := decodeInvSums(good, "x.sums", 3<<14-5); err != nil || s.shift != 14 || !slices.Equal(s.sums.slice(), []uint32{1, 2, 3}) {
		t.Fatalf("good: %+v, %v", s, err)
	}
	for name, c := range map[string]struct {
		b    []byte
		size int64
	}{
		"too few blocks": {good, 3<<14 + 1},
		"too many":       {good, 2 << 14},
		"block size":     {encodeInvSums([]uint32{1}, 3000), 100},
		"damaged":        {append(slices.Clone(good[:len(good)-1]), good[len(good)-1]^1), 3 << 14},
		"short":          {good[:10], 3 << 14},
		"magic":          {append([]byte("BSUM0"), good[5:]...), 3 << 14},
	} {
		if _, err := decodeInvSums(c.b, "x.sums", c.size); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "x.sums") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A walk checks the blocks of a list as it reaches them: a damaged block
// in the middle of a long list fails the queries that read it, and not
// a query that stops at its MaxMatches-th match before it, nor a seek
// that jumps over it by the skip table.
func TestWalkChecksBlocks(t *testing.T) {
	dir := t.TempDir()
	pages := map[string]string{}
	for i := range 2000 {
		pages[fmt.Sprintf("http://w.test/p%04d.html", i)] = fmt.Sprintf("<html><body><p>%s rare%dx</p></body></html>", strings.Repeat("common ", 12), i)
	}
	build(t, dir, Options{}, pages)
	idx := open(t, dir)
	lo, hi := listRange(t, idx, 0, "common")
	s := idx.segs[0]
	sh := s.sums.shift
	if (hi-1)>>sh-lo>>sh < 4 {
		t.Fatalf("the list of common spans %d bytes", hi-lo)
	}
	// The last posting: its docID, and the rare word of its page.
	inv0, err := s.invData()
	if err != nil {
		t.Fatal(err)
	}
	it := checkedIter(inv0[lo:hi])
	for it.next() {
	}
	last := it.doc
	mid := (lo + hi) / 2
	idx.Close()
	flipByte(t, s.path, mid, 0x40)

	// Each on the index opened afresh: a word asked again is decoded
	// whole (denseOf), which reads every block.
	idx = open(t, dir)
	if r, err := idx.Search("common", SearchOptions{N: 5, NoSnippets: true, MaxMatches: 50}); err != nil || len(r.Results) != 5 {
		t.Errorf("common, up to 50 matches: %v, %v", r, err)
	}
	idx.Close()
	// A seek by the skip table to the last posting, over the damage; a
	// walk posting by posting meets it.
	idx = open(t, dir)
	defer idx.Close()
	s = idx.segs[0]
	l, _, err := s.list(mustID(t, idx, "common"), false)
	if err != nil {
		t.Fatal(err)
	}
	it = newPostingIter(l)
	if !it.next() || !it.seek(last) || it.doc != last || it.err != nil {
		t.Errorf("seek over the damaged block to %d: at %d, %v", last, it.doc, it.err)
	}
	it = newPostingIter(l)
	for it.next() {
	}
	if !errors.Is(it.err, ErrCorrupt) || it.doc >= last {
		t.Errorf("a walk over the damaged block: stopped at %d of %d, %v", it.doc, last, it.err)
	}
	_, err = idx.Search("common", SearchOptions{N: 5, NoSnippets: true})
	want := fmt.Sprintf("%s: bytes %d to ", filepath.Base(s.path), mid>>sh<<sh)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
		t.Errorf("common, every match: %v, want %q", err, want)
	}
	if checked, all := blocksChecked(idx.segs[0]), idx.segs[0].sums.sums.len(); checked >= all {
		t.Errorf("%d of %d blocks checked", checked, all)
	}
}

// Searches on one index at once check the blocks they reach together,
// and find what one search alone finds (go test -race).
func TestBlockSumsConcurrent(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, Options{}, sumsPages(0, 300))
	build(t, dir, Options{}, sumsPages(300, 100))
	want := map[string][]string{}
	for _, q := range []string{"filler7", "uniq12x", "word3 filler9", "uniq350x"} {
		idx := open(t, dir)
		want[q] = resultURLs(t, idx, q, 10)
		idx.Close()
	}
	idx := open(t, dir)
	defer idx.Close()
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for _, q := range []string{"filler7", "uniq12x", "word3 filler9", "uniq350x"}[g%4:] {
				r, err := idx.Search(q, SearchOptions{N: 10, NoSnippets: true})
				if err != nil {
					errs <- err
					return
				}
				var got []string
				for _, x := range r.Results {
					got = append(got, x.URL)
				}
				if !slices.Equal(got, want[q]) {
					errs <- fmt.Errorf("%s: %q, alone %q", q, got, want[q])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestBlockSummerSizes: a segment's lists are summed by blocks of 4 KiB
// up to 64 MiB of them and of 16 KiB past that, each sum the CRC-32C of
// its block however the writes split the bytes, and the file says the
// size.
func TestBlockSummerSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	limit := invSmallBlocks * invBlockSmall
	for _, n := range []int{0, 1, invBlockSmall - 1, invBlockSmall, 5*invBlockSmall + 7, limit, limit + 1, limit + 3*invBlock + 5} {
		data := make([]byte, n)
		for i := 0; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(data[i:], rng.Uint64())
		}
		for _, split := range []string{"random", "blocks"} { // writes of any size, and of a block each
			bs := &blockSummer{out: &countOut{}}
			for p := data; len(p) > 0; {
				k := min(len(p), 1+rng.IntN(3*invBlock))
				if split == "blocks" {
					k = min(len(p), invBlockSmall)
				}
				bs.Write(p[:k])
				p = p[k:]
			}
			want := invBlockSmall
			if n > limit {
				want = invBlock
			}
			s, err := decodeInvSums(bs.file(), "t.sums", int64(n))
			if err != nil {
				t.Fatalf("%d bytes, %s writes: %v", n, split, err)
			}
			if 1<<s.shift != want {
				t.Fatalf("%d bytes, %s writes: blocks of %d, want %d", n, split, 1<<s.shift, want)
			}
			for k := range s.sums.len() {
				lo := k * want
				if crc(data[lo:min(lo+want, n)]) != s.sums.at(k) {
					t.Fatalf("%d bytes, %s writes: block %d's sum is not its CRC", n, split, k)
				}
			}
		}
	}
}
