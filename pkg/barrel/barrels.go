package barrel

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	bits64 "math/bits"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/sekitei/crawlkit/pkg/barrel/hit"
	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// Forward barrels (section 4.2.6): per document that has words in the
// barrel, its docID, then for each word the 24-bit relative wordID and 8-bit
// hit count (hit.AppendForward) and the hits, then the end-of-document mark.
// They live only for one build: the sorter turns them into inverted barrels.

// forwardSet is the 64 forward barrels of a batch being built.
type forwardSet struct {
	dir   string
	files [lexicon.Barrels]*os.File
	w     [lexicon.Barrels]*bufio.Writer
	buf   []byte
}

func newForwardSet(dir string) (*forwardSet, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	fs := &forwardSet{dir: dir}
	for b := range fs.files {
		f, err := os.Create(fs.path(b))
		if err != nil {
			fs.close()
			return nil, err
		}
		fs.files[b] = f
		fs.w[b] = bufio.NewWriterSize(f, 64<<10)
	}
	return fs, nil
}

func (fs *forwardSet) path(b int) string { return fmt.Sprintf("%s/fwd-%02d", fs.dir, b) }

// wordHits is the hit list of one word in one document.
type wordHits struct {
	id   uint32
	hits []hit.Hit
}

// add writes a document's hit lists, sorted by wordID, to the barrels.
func (fs *forwardSet) add(doc uint32, words []wordHits) error {
	for i := 0; i < len(words); {
		b := lexicon.BarrelOf(words[i].id)
		buf := binary.BigEndian.AppendUint32(fs.buf[:0], doc)
		for ; i < len(words) && lexicon.BarrelOf(words[i].id) == b; i++ {
			hs := words[i].hits
			if len(hs) > hit.MaxHits {
				hs = hs[:hit.MaxHits]
			}
			buf = hit.AppendForward(buf, lexicon.Rel(words[i].id), len(hs))
			buf = hit.AppendHits(buf, hs)
		}
		buf = hit.AppendForward(buf, hit.EndOfDoc, 0)
		fs.buf = buf
		if _, err := fs.w[b].Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// byBarrel orders keys (wordID<<32 | i) by their wordID's barrel into
// buf, a counting sort: the forward barrels need a page's words of one
// barrel together, and the sorter orders each barrel's words itself, so
// the page's words need no full sort (its distinct words each come once).
func byBarrel(keys, buf []uint64) []uint64 {
	var next [lexicon.Barrels + 1]int
	for _, k := range keys {
		next[lexicon.BarrelOf(uint32(k>>32))+1]++
	}
	for i := 1; i < len(next); i++ {
		next[i] += next[i-1]
	}
	out := sized(buf, len(keys))[:len(keys)]
	for _, k := range keys {
		bb := lexicon.BarrelOf(uint32(k >> 32))
		out[next[bb]] = k
		next[bb]++
	}
	return out
}

func (fs *forwardSet) flush() error {
	for _, w := range fs.w {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func (fs *forwardSet) close() {
	for _, f := range fs.files {
		if f != nil {
			f.Close()
		}
	}
}

// eachForwardBytes calls fn for every word entry of a forward barrel held
// in memory, with its hits, b[off:off+len(hits)].
func eachForwardBytes(b []byte, fn func(doc, rel uint32, off int, hits []byte)) error {
	for p := 0; p < len(b); {
		if p+4 > len(b) {
			return corrupt("forward barrel: truncated")
		}
		doc := binary.BigEndian.Uint32(b[p:])
		p += 4
		for {
			rel, n, size, err := hit.ReadForward(b[p:])
			if err != nil {
				return corrupt("forward barrel: %v", err)
			}
			p += size
			if rel == hit.EndOfDoc {
				break
			}
			if p+2*n > len(b) {
				return corrupt("forward barrel: truncated")
			}
			fn(doc, rel, p, b[p:p+2*n])
			p += 2 * n
		}
	}
	return nil
}

// eachForward calls fn for every word entry of a forward barrel file.
func eachForward(path string, fn func(doc, rel uint32, hits []byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	var hdr [6]byte
	hits := make([]byte, 0, 1024)
	for {
		if _, err := io.ReadFull(r, hdr[:4]); err != nil {
			if err == io.EOF {
				return nil
			}
			return corrupt("forward barrel %s: truncated", path)
		}
		doc := binary.BigEndian.Uint32(hdr[:4])
		for {
			if _, err := io.ReadFull(r, hdr[:4]); err != nil {
				return corrupt("forward barrel %s: truncated", path)
			}
			size := 4
			if hdr[3] == 255 && binary.BigEndian.Uint32(hdr[:4])>>8 != hit.EndOfDoc {
				if _, err := io.ReadFull(r, hdr[4:6]); err != nil {
					return corrupt("forward barrel %s: truncated", path)
				}
				size = 6
			}
			rel, n, _, err := hit.ReadForward(hdr[:size])
			if err != nil {
				return corrupt("forward barrel %s: %v", path, err)
			}
			if rel == hit.EndOfDoc {
				break
			}
			hits = sized(hits, 2*n)[:2*n]
			if _, err := io.ReadFull(r, hits); err != nil {
				return corrupt("forward barrel %s: truncated", path)
			}
			fn(doc, rel, hits)
		}
	}
}

func monotone(offs u64le, size int64) bool {
	n := offs.len()
	if n == 0 || offs.at(0) != 0 || offs.at(n-1) != uint64(size) {
		return false
	}
	prev := uint64(0)
	for i := range n {
		v := offs.at(i)
		if v < prev {
			return false
		}
		prev = v
	}
	return true
}

// u32le and u64le are little-endian arrays read in place in a mapped
// file: an index opened for one query reads a few entries of each, where
// decoding them whole into slices was a sixth of that query's CPU on a
// year's index.
type (
	u32le []byte
	u64le []byte
)

func (a u32le) len() int        { return len(a) / 4 }
func (a u32le) at(i int) uint32 { return binary.LittleEndian.Uint32(a[4*i:]) }
func (a u32le) slice() []uint32 { return u32s(a) }
func (a u64le) len() int        { return len(a) / 8 }
func (a u64le) at(i int) uint64 { return binary.LittleEndian.Uint64(a[8*i:]) }

// search returns where x is or would be in a, sorted, and whether it is.
func (a u32le) search(x uint32) (int, bool) {
	lo, hi := 0, a.len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a.at(m) < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < a.len() && a.at(lo) == x
}

// increasing reports whether a is strictly increasing and below limit.
func (a u32le) increasing(limit uint32) bool {
	if len(a) < 4 {
		return true
	}
	prev := binary.LittleEndian.Uint32(a)
	if prev >= limit {
		return false
	}
	for b := a[4 : len(a)&^3]; len(b) >= 4; b = b[4:] {
		v := binary.LittleEndian.Uint32(b)
		if v <= prev || v >= limit {
			return false
		}
		prev = v
	}
	return true
}

func u32s(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// isShort reports whether h goes to the short barrels: title and anchor hits.
func isShort(h hit.Hit) bool {
	t := h.Type()
	return t == hit.Title || t == hit.Anchor
}

// An inverted list is a skip table (uvarint count, then for every
// skipEvery-th posting its docID and offset, 4 bytes each) followed by the
// postings: docID<<5|count headers (with escape) and hits, docIDs strictly
// increasing. The skip table lets a multi-word query jump over the long
// lists of common words instead of decoding every posting.
const skipEvery = 32

// appendList appends an inverted list of n postings.
func appendList(out, postings []byte, n uint32) []byte {
	if n < 2*skipEvery {
		return append(binary.AppendUvarint(out, 0), postings...)
	}
	out = binary.AppendUvarint(out, uint64((n+skipEvery-1)/skipEvery))
	it := postingIter{data: postings, prev: -1}
	for k := 0; it.next(); k++ {
		if k%skipEvery == 0 {
			out = binary.BigEndian.AppendUint32(out, it.doc)
			out = binary.BigEndian.AppendUint32(out, uint32(it.pos-len(it.raw)))
		}
	}
	return append(out, postings...)
}

// postingIter walks an inverted list.
type postingIter struct {
	data  []byte // the postings
	skips []byte
	pos   int
	doc   uint32
	n     int
	hits  []byte
	raw   []byte // the whole posting
	err   error
	prev  int64
	sk    int // the skip block last jumped to (with dd, the posting last sought)
	// dd is the list decoded, which seeks search (seekDense) instead of
	// its skip table; nil where it is not. lazy: the walk stands on its
	// posting sk (doc) without having read it (seekDoc).
	dd   *denseList
	lazy bool
	// chk is the mapped .inv file with block sums the list lies in (nil
	// for a list in memory, or checked whole): its postings' bytes are
	// checked as the walk reaches them, from cbase (the file offset of
	// data); clo to chi of data are checked.
	chk      *mappedInv
	cbase    int64
	clo, chi int
}

func newPostingIter(list []byte) postingIter {
	chk, base := lookupInv(list)
	return newIterIn(list, chk, base)
}

// checkedIter walks a list its caller checked whole (a merge's, Verify's:
// their barrels read and checked whole), or holds in memory.
func checkedIter(list []byte) postingIter { return newIterIn(list, nil, 0) }

// newIterIn walks list, which lies at file offset base of chk (nil: no
// blocks to check).
func newIterIn(list []byte, chk *mappedInv, base int64) postingIter {
	it := postingIter{prev: -1}
	if chk != nil {
		if it.err = chk.check(base, base+int64(min(len(list), binary.MaxVarintLen64))); it.err != nil {
			return it
		}
	}
	ns, k := binary.Uvarint(list)
	if k <= 0 || ns > uint64(len(list)-k)/8 {
		if len(list) > 0 {
			it.err = corrupt("inverted list: bad skip table")
		}
		return it
	}
	if chk != nil { // the skip table, which seeks read anywhere
		d := int64(k + 8*int(ns))
		if it.err = chk.check(base, base+d); it.err != nil {
			return it
		}
		it.chk, it.cbase = chk, base+d
	}
	it.skips = list[k : k+8*int(ns)]
	it.data = list[k+8*int(ns):]
	return it
}

// reach checks the blocks of the postings' bytes pos to end (clipped to
// the list, at least one), which the walk is about to read; false when
// one is damaged (it.err says which).
func (it *postingIter) reach(pos, end int) bool {
	end = min(max(end, pos+1), len(it.data))
	if pos >= end {
		return true
	}
	lo, hi := it.cbase+int64(pos), it.cbase+int64(end)
	if it.err = it.chk.check(lo, hi); it.err != nil {
		return false
	}
	sh := it.chk.sums.shift
	it.clo = int(max(lo>>sh<<sh-it.cbase, 0))
	it.chi = int(min(((hi-1)>>sh+1)<<sh-it.cbase, int64(len(it.data))))
	return true
}

// maxHeader bounds a posting's header (docID and count), which a damaged
// list may leave unread: the bytes checked before it is called damaged.
const maxHeader = 16

// next advances to the next posting; false at the end or on an error.
func (it *postingIter) next() bool {
	if it.lazy {
		// From the posting it stands on, unread (seekDoc), to the next.
		it.lazy = false
		if it.sk++; it.sk >= len(it.dd.docs) {
			it.pos = len(it.data)
			return false
		}
		it.pos = int(it.dd.offs[it.sk])
	}
	if it.pos >= len(it.data) || it.err != nil {
		return false
	}
	doc, n, size, err := hit.ReadInverted(it.data[it.pos:])
	if it.chk != nil && (err != nil || it.pos < it.clo || it.pos+size+2*n > it.chi) {
		if !it.reach(it.pos, it.pos+max(size+2*n, maxHeader)) {
			return false
		}
	}
	if err != nil || it.pos+size+2*n > len(it.data) || int64(doc) <= it.prev {
		it.err = corrupt("inverted list: bad posting at byte %d", it.pos)
		return false
	}
	it.raw = it.data[it.pos : it.pos+size+2*n]
	it.hits = it.data[it.pos+size : it.pos+size+2*n]
	it.doc, it.n, it.prev = doc, n, int64(doc)
	it.pos += size + 2*n
	return true
}

// seek advances to the first posting with docID >= target, which must
// follow the current one; false when there is none. The skip table is
// searched from the block last jumped to, and the postings walked to the
// target have their headers read, not their hits sliced.
func (it *postingIter) seek(target uint32) bool {
	if it.doc >= target && it.prev >= 0 {
		return true
	}
	if it.dd != nil {
		return it.seekDense(it.dd, target)
	}
	skipDoc := func(i int) uint32 { return binary.BigEndian.Uint32(it.skips[8*i:]) }
	if ns := len(it.skips) / 8; ns > it.sk && skipDoc(it.sk) <= target {
		// The last block starting at or before target, found by galloping
		// from the block of the last seek: a target is mostly near.
		lo, step := it.sk, 1
		for lo+step < ns && skipDoc(lo+step) <= target {
			lo += step
			step *= 2
		}
		// The last block in [lo, hi) starting at or before target: lo's
		// does, and hi's does not (or is past the table).
		for hi := min(ns, lo+step); hi-lo > 1; {
			mid := int(uint(lo+hi) >> 1)
			if skipDoc(mid) <= target {
				lo = mid
			} else {
				hi = mid
			}
		}
		i := lo
		doc := skipDoc(i)
		off := int(binary.BigEndian.Uint32(it.skips[8*i+4:]))
		if off > it.pos-len(it.raw) && int64(doc) > it.prev {
			if off >= len(it.data) {
				it.err = corrupt("inverted list: bad skip entry")
				return false
			}
			it.pos, it.prev = off, int64(doc)-1
		}
		it.sk = i // the next target is not before this one
	}
	if it.err != nil {
		return false
	}
	// The walk keeps its place in locals, and stops on the posting it
	// wants without reading its header again.
	data, pos, prev := it.data, it.pos, it.prev
	for pos < len(data) {
		doc, n, size, err := hit.ReadInverted(data[pos:])
		end := pos + size + 2*n
		if it.chk != nil && (err != nil || pos < it.clo || end > it.chi) {
			if !it.reach(pos, max(end, pos+maxHeader)) {
				it.pos, it.prev = pos, prev
				return false
			}
		}
		if err != nil || end > len(data) || int64(doc) <= prev {
			it.pos, it.prev = pos, prev
			it.err = corrupt("inverted list: bad posting at byte %d", pos)
			return false
		}
		if doc >= target {
			it.raw = data[pos:end]
			it.hits = data[pos+size : end]
			it.doc, it.n, it.prev = doc, n, int64(doc)
			it.pos = end
			return true
		}
		prev = int64(doc)
		pos = end
	}
	it.pos, it.prev = pos, prev
	return false
}

// bitset is a set of docIDs.
type bitset []uint64

func newBitset(n uint32) bitset    { return make(bitset, (n+64)/64) }
func (s bitset) set(i uint32)      { s[i/64] |= 1 << (i % 64) }
func (s bitset) has(i uint32) bool { return int(i/64) < len(s) && s[i/64]&(1<<(i%64)) != 0 }
func (s bitset) grow(n uint32) bitset {
	return append(s, make(bitset, max(0, int((n+64)/64)-len(s)))...)
}

// basketItem is one forward entry held in a sorter basket.
type basketItem struct {
	rel, doc, seq, off, n uint32
}

// sorterBufs are the buffers of one sortBarrel, handed from barrel to
// barrel: a sorter's buffers are as large as a forward barrel, and fresh
// ones for each of the 64 barrels cost more in allocation, zeroing and
// garbage collection than the sorting does.
type sorterBufs struct {
	whole         []byte // the forward barrel, when it fits the budget
	hits          []byte // a basket's hits (read from the file)
	items, sorted []basketItem
	buf, sbuf     []byte
	shits         []hit.Hit
}

// sortBarrel is the sorter of section 4.4 for one barrel: it sorts the
// batch's forward barrel into the inverted lists of a new segment, in
// baskets of at most budget bytes by wordID range so memory stays bounded
// however large the barrel. sb may be nil.
func sortBarrel(fwdPath string, b, count int, budget int64, w *segWriter, sb *sorterBufs) error {
	// Pass 1: bytes per word, to cut the wordID range into baskets; a
	// forward barrel that fits the budget whole is one basket.
	w.begin(b)
	defer w.end()
	if sb == nil {
		sb = new(sorterBufs)
	}
	st, err := os.Stat(fwdPath)
	if err != nil || st.Size() == 0 {
		return err
	}
	size := make([]int64, count)
	var whole []byte // the forward barrel, when it fits the budget
	entries := 0     // its word entries
	if st.Size()*3 <= budget {
		if count > 0 {
			size[0] = st.Size() * 3
		}
		if whole, err = readInto(fwdPath, sb.whole[:0], st.Size()); err != nil {
			return err
		}
		sb.whole = whole
		if len(whole) > 1<<31 {
			return fmt.Errorf("sorter: basket over 2 GiB")
		}
		if err := eachForwardBytes(whole, func(uint32, uint32, int, []byte) { entries++ }); err != nil {
			return err
		}
	} else if err := eachForward(fwdPath, func(doc, rel uint32, hits []byte) {
		if int(rel) < count {
			size[rel] += int64(len(hits)) + 24
		}
	}); err != nil {
		return err
	}
	items, sorted := sized(sb.items, entries), sb.sorted
	hits := sb.hits[:0]
	if whole != nil {
		hits = whole // a basket's entries point into it: no copy
	}
	buf, sbuf, shits := sb.buf, sb.sbuf, sb.shits
	defer func() {
		if whole == nil {
			sb.hits = hits
		}
		sb.items, sb.sorted, sb.buf, sb.sbuf, sb.shits = items, sorted, buf, sbuf, shits
	}()
	for lo := 0; lo < count; {
		hi, used := lo, int64(0)
		for hi < count && (hi == lo || used+size[hi] <= budget) {
			used += size[hi]
			hi++
		}
		items = items[:0]
		if whole == nil {
			hits = hits[:0]
		}
		if used == 0 {
			lo = hi
			continue
		}
		var seq uint32
		var bad error
		if whole != nil {
			// The one basket: every entry, its hits where they lie.
			err = eachForwardBytes(whole, func(doc, rel uint32, off int, h []byte) {
				if int(rel) >= count {
					return
				}
				items = append(items, basketItem{rel: rel, doc: doc, seq: seq, off: uint32(off), n: uint32(len(h) / 2)})
				seq++
			})
		} else {
			err = eachForward(fwdPath, func(doc, rel uint32, h []byte) {
				if int(rel) < lo || int(rel) >= hi {
					return
				}
				if len(hits)+len(h) > 1<<31 {
					bad = fmt.Errorf("sorter: basket over 2 GiB")
					return
				}
				items = append(items, basketItem{rel: rel, doc: doc, seq: seq, off: uint32(len(hits)), n: uint32(len(h) / 2)})
				hits = append(hits, h...)
				seq++
			})
		}
		if err == nil {
			err = bad
		}
		if err != nil {
			return err
		}
		out := sortBasket(items, sorted, lo, hi)
		sorted, items = items, out // two buffers, swapped per basket
		for k := 0; k < len(items); {
			rel := items[k].rel
			j := k
			for j < len(items) && items[j].rel == rel {
				j++
			}
			group := items[k:j]
			k = j
			var nf, ns uint32
			buf, nf = postingsOf(buf[:0], group, hits, nil)
			sbuf, ns = postingsOf(sbuf[:0], group, hits, &shits)
			w.add(rel, buf, nf, sbuf, ns)
		}
		lo = hi
	}
	return nil
}

// readInto reads the file at path, size bytes long, into buf's memory
// when it is large enough.
func readInto(path string, buf []byte, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf = sized(buf, int(size))[:size]
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// sortBasket orders a basket's entries by wordID, then docID, then input
// order: a counting sort on the wordID (the range is the basket's) and a
// stable sort of each word's entries, which mostly arrive in docID order.
func sortBasket(items, buf []basketItem, lo, hi int) []basketItem {
	start := make([]int, hi-lo+1)
	for _, it := range items {
		start[int(it.rel)-lo+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	out := sized(buf, len(items))[:len(items)]
	next := slices.Clone(start[:len(start)-1])
	for _, it := range items {
		r := int(it.rel) - lo
		out[next[r]] = it
		next[r]++
	}
	var tmp []basketItem
	for r := 0; r+1 < len(start); r++ {
		g := out[start[r]:start[r+1]]
		if len(g) < 2 {
			continue
		}
		// Entries of a word arrive as a run of pages in docID order, then a
		// run of anchor entries by target: merge two runs in one pass.
		cut := 1
		for cut < len(g) && g[cut-1].doc <= g[cut].doc {
			cut++
		}
		if cut == len(g) {
			continue
		}
		if slices.IsSortedFunc(g[cut:], func(x, y basketItem) int { return cmpU32(x.doc, y.doc) }) {
			tmp = append(tmp[:0], g...)
			a, b := tmp[:cut], tmp[cut:]
			for k := range g {
				if len(b) == 0 || len(a) > 0 && a[0].doc <= b[0].doc {
					g[k], a = a[0], a[1:]
				} else {
					g[k], b = b[0], b[1:]
				}
			}
			continue
		}
		slices.SortStableFunc(g, func(x, y basketItem) int { return cmpU32(x.doc, y.doc) })
	}
	return out
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// postingsOf writes the postings of a sorted group of forward entries;
// entries of one document are concatenated. With shortOnly non-nil only
// title and anchor hits are kept.
func postingsOf(out []byte, group []basketItem, hits []byte, shortOnly *[]hit.Hit) ([]byte, uint32) {
	var n uint32
	for k := 0; k < len(group); {
		doc := group[k].doc
		j := k
		total := 0
		for j < len(group) && group[j].doc == doc {
			total += int(group[j].n)
			j++
		}
		if shortOnly == nil {
			total = min(total, hit.MaxHits)
			out = hit.AppendInverted(out, doc, total)
			for _, g := range group[k:j] {
				take := min(int(g.n), total)
				out = append(out, hits[g.off:g.off+2*uint32(take)]...)
				total -= take
			}
			n++
		} else {
			hs := (*shortOnly)[:0]
			for _, g := range group[k:j] {
				for i := range int(g.n) {
					if h := hit.At(hits[g.off:], i); isShort(h) && len(hs) < hit.MaxHits {
						hs = append(hs, h)
					}
				}
			}
			*shortOnly = hs
			if len(hs) > 0 {
				out = hit.AppendInverted(out, doc, len(hs))
				out = hit.AppendHits(out, hs)
				n++
			}
		}
		k = j
	}
	return out, n
}

// all yields the members of s below n, in order.
func (s bitset) all(n uint32) func(func(uint32) bool) {
	return func(yield func(uint32) bool) {
		for w, bits := range s {
			for bits != 0 {
				d := uint32(w)*64 + uint32(bits64.TrailingZeros64(bits))
				if d >= n || !yield(d) {
					return
				}
				bits &= bits - 1
			}
		}
	}
}

// sortBarrels runs the sorter over the batch's forward barrels into w, in
// barrel order, and calls done after each. The sorter is CPU-bound and runs
// when the batch's other work is over, so barrels are sorted on several
// goroutines, each into memory, and copied into w in order; a forward
// barrel too large to sort in one basket is sorted in its turn straight
// into w, so memory stays within a few baskets.
func sortBarrels(fwdPath func(bb int) string, count func(bb int) int, budget int64, w *segWriter, done func(bb int)) error {
	workers := min(runtime.GOMAXPROCS(0), 4)
	type result struct {
		out    memOut
		sec    barrelSection
		err    error
		inline bool
		done   chan struct{}
	}
	res := make([]*result, lexicon.Barrels)
	for bb := range res {
		res[bb] = &result{done: make(chan struct{})}
	}
	tokens := make(chan struct{}, workers) // results held, not yet copied
	// Buffers go from a barrel done to the next: the sorters' (one set
	// per sorter running) and the sorted barrels' (copied into w).
	bufs := make(chan *sorterBufs, workers+1)
	outs := make(chan []byte, workers+1)
	stop, fed := make(chan struct{}), make(chan struct{})
	var sorting sync.WaitGroup
	go func() {
		defer close(fed)
		for bb := range lexicon.Barrels {
			r := res[bb]
			if st, err := os.Stat(fwdPath(bb)); err == nil && st.Size()*3 > budget {
				r.inline = true
				close(r.done)
				continue
			}
			select {
			case tokens <- struct{}{}:
			case <-stop:
				return
			}
			sorting.Add(1)
			go func() {
				defer sorting.Done()
				defer close(r.done)
				var sb *sorterBufs
				select {
				case sb = <-bufs:
				default:
					sb = new(sorterBufs)
				}
				select {
				case r.out.buf = <-outs:
				default:
				}
				sw := &segWriter{inv: &r.out}
				r.err = sortBarrel(fwdPath(bb), bb, count(bb), budget, sw, sb)
				r.sec = sw.secs[bb]
				bufs <- sb // never blocks: at most workers sorters hold one
			}()
		}
	}()
	var err error
	for bb := range lexicon.Barrels {
		r := res[bb]
		<-r.done
		if r.inline {
			err = sortBarrel(fwdPath(bb), bb, count(bb), budget, w, nil)
		} else {
			if err = r.err; err == nil {
				w.appendSection(bb, r.sec, r.out.buf)
			}
			select {
			case outs <- r.out.buf[:0]:
			default:
			}
			r.out.buf = nil
			<-tokens
		}
		if err != nil {
			break
		}
		done(bb)
	}
	close(stop)
	<-fed
	sorting.Wait()
	return err
}
