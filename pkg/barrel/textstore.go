package barrel

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"io"
	"slices"
	"sort"

	"github.com/klauspost/compress/s2"

	"github.com/sekitei/crawlkit/pkg/barrel/hit"
	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
)

// The text file keeps each indexed page's extracted text, so that a
// snippet is cut from it without parsing the stored HTML again (a big
// page's parse costs tens of milliseconds; a snippet from the text, tens
// of microseconds). Each word is stored with the text before it, spaces
// collapsed, as the snippet shows it, in chunks of textChunkWords words
// compressed apart with S2 (zstd's fastest level stores a fifth less of
// the Python docs' text, but costs three times S2's CPU when indexing),
// so a snippet decodes one or two chunks, not the page. A plain hit gives
// the position of a word only up to hit.MaxPlainPos; for the words after
// it the record holds a small index of its own: per term (and per
// identifier a word begins) a CRC-32C of it and its positions, so that a
// query word's later places are found without analysing the text again.
// (Two terms of one hash would mark a wrong word: one chance in 2^32 per
// term of a page.)
//
// A record: total length, CRC-32C of the rest (as docinfo's), then uvarint
// the page's word count, uvarint the words stored, per chunk uvarint its
// compressed length and the S2 block; then the tail index: uvarint the
// number of terms, per term its hash and the offset of its positions (4
// bytes each, by hash), then the positions: per term uvarint their number
// and their gaps (uvarints). A chunk is, per word, uvarint length and the
// text before the word, uvarint length and the word.
const textChunkWords = 1024

// maxTextWords is how many of a page's words its record keeps: a snippet
// does not look past them.
const maxTextWords = 1 << 20

// maxTextRecord bounds a record read back (a damaged length is reported,
// not allocated).
const maxTextRecord = 256 << 20

// termHash is the hash of a term in a record's tail index.
func termHash(t []byte) uint32 { return crc(t) }

// textEncoder is a worker's encoder of text records.
type textEncoder struct {
	raw, z, gap []byte
	terms       map[uint32][]int32 // tail index being built
	hs          []uint32
}

func newTextEncoder() *textEncoder { return &textEncoder{terms: map[uint32][]int32{}} }

// appendRecord appends the text record of d to b.
func (e *textEncoder) appendRecord(b []byte, d *htmldoc.Doc) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	n := min(len(d.Words), maxTextWords)
	b = binary.AppendUvarint(b, uint64(len(d.Words)))
	b = binary.AppendUvarint(b, uint64(n))
	clear(e.terms)
	add := func(t []byte, j int) {
		h := termHash(t)
		if l := e.terms[h]; len(l) == 0 || l[len(l)-1] != int32(j) {
			e.terms[h] = append(l, int32(j))
		}
	}
	for c := 0; c < n; c += textChunkWords {
		r := e.raw[:0]
		for j := c; j < min(n, c+textChunkWords); j++ {
			w := &d.Words[j]
			e.gap = e.gap[:0]
			if j > 0 {
				e.gap = appendCollapsed(e.gap, d.Text[d.Words[j-1].End:w.Start])
			}
			r = binary.AppendUvarint(r, uint64(len(e.gap)))
			r = append(r, e.gap...)
			r = binary.AppendUvarint(r, uint64(w.End-w.Start))
			r = append(r, d.Text[w.Start:w.End]...)
			if j >= hit.MaxPlainPos {
				add(d.Key(w), j)
				if whole := d.Whole(w); whole != nil {
					add(whole, j)
				}
			}
		}
		e.raw = r
		e.z = s2.Encode(e.z[:cap(e.z)], r)
		b = binary.AppendUvarint(b, uint64(len(e.z)))
		b = append(b, e.z...)
	}
	e.hs = e.hs[:0]
	for h := range e.terms {
		e.hs = append(e.hs, h)
	}
	slices.Sort(e.hs)
	b = binary.AppendUvarint(b, uint64(len(e.hs)))
	dir := len(b)
	b = append(b, make([]byte, 8*len(e.hs))...)
	lists := len(b)
	for i, h := range e.hs {
		binary.LittleEndian.PutUint32(b[dir+8*i:], h)
		binary.LittleEndian.PutUint32(b[dir+8*i+4:], uint32(len(b)-lists))
		ps := e.terms[h]
		b = binary.AppendUvarint(b, uint64(len(ps)))
		prev := int32(0)
		for _, p := range ps {
			b = binary.AppendUvarint(b, uint64(p-prev))
			prev = p
		}
	}
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-8))
	binary.LittleEndian.PutUint32(b[start+4:], crc(b[start+8:]))
	return b
}

// pageText is a text record read back.
type pageText struct {
	words  int      // the page's words
	stored int      // words kept
	chunks [][]byte // compressed
	dir    []byte   // the tail index: hash and offset per term
	lists  []byte   // its positions
}

// readTextAt reads the text record at off.
func readTextAt(f io.ReaderAt, off, limit int64) (*pageText, error) {
	rec, err := readRecordAt(f, textName, off, limit, nil)
	if err != nil {
		return nil, err
	}
	body := rec[8:]
	bad := func() (*pageText, error) { return nil, corrupt("%s at %d: bad record", textName, off) }
	words, k := binary.Uvarint(body)
	if k <= 0 {
		return bad()
	}
	body = body[k:]
	stored, k := binary.Uvarint(body)
	if k <= 0 || stored > words || stored > maxTextWords {
		return bad()
	}
	body = body[k:]
	t := &pageText{words: int(words), stored: int(stored)}
	for c := 0; c < t.stored; c += textChunkWords {
		zl, k := binary.Uvarint(body)
		if k <= 0 || zl > uint64(len(body)-k) {
			return bad()
		}
		t.chunks = append(t.chunks, body[k:k+int(zl)])
		body = body[k+int(zl):]
	}
	nt, k := binary.Uvarint(body)
	if k <= 0 || nt > uint64(len(body)-k)/8 {
		return bad()
	}
	t.dir, t.lists = body[k:k+8*int(nt)], body[k+8*int(nt):]
	return t, nil
}

// each calls fn for the stored words [from, to) (to at most t.stored), in
// order, with the text before each; the bytes are valid only during the
// call.
func (t *pageText) each(from, to int, fn func(j int, gap, word []byte)) error {
	var raw []byte
	for c := from / textChunkWords; c*textChunkWords < to; c++ {
		var err error
		if n, err := s2.DecodedLen(t.chunks[c]); err != nil || n > maxTextRecord {
			return corrupt("%s: chunk %d: bad length", textName, c)
		}
		if raw, err = s2.Decode(raw[:cap(raw)], t.chunks[c]); err != nil {
			return corrupt("%s: chunk %d: %v", textName, c, err)
		}
		rest := raw
		for j := c * textChunkWords; j < min(to, (c+1)*textChunkWords); j++ {
			gap, r, ok := uvarintBytes(rest)
			var word []byte
			if ok {
				word, rest, ok = uvarintBytes(r)
			}
			if !ok {
				return corrupt("%s: chunk %d: bad word %d", textName, c, j)
			}
			if j >= from {
				fn(j, gap, word)
			}
		}
	}
	return nil
}

// span returns the stored words [from, to).
func (t *pageText) span(from, to int) ([]snippetWord, error) {
	out := make([]snippetWord, 0, max(0, to-from))
	err := t.each(from, to, func(_ int, gap, word []byte) {
		out = append(out, snippetWord{bytes.Clone(gap), bytes.Clone(word)})
	})
	return out, err
}

// tailKeys lists the places of the query's keys past hit.MaxPlainPos,
// from the record's tail index, as parsedKeys does for a parsed page.
func (t *pageText) tailKeys(keys []string) ([]keyAt, error) {
	var at []keyAt
	n := len(t.dir) / 8
	for k, q := range keys {
		h := termHash([]byte(q))
		i := sort.Search(n, func(m int) bool { return binary.LittleEndian.Uint32(t.dir[8*m:]) >= h })
		if i == n || binary.LittleEndian.Uint32(t.dir[8*i:]) != h {
			continue
		}
		err := t.positions(i, func(p int32) { at = append(at, keyAt{p, int32(k)}) })
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(at, func(a, b keyAt) int { return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.key, b.key)) })
	return at, nil
}

// positions calls fn for each position of term i of the tail index.
func (t *pageText) positions(i int, fn func(int32)) error {
	bad := corrupt("%s: bad tail index", textName)
	off := int(binary.LittleEndian.Uint32(t.dir[8*i+4:]))
	if off >= len(t.lists) {
		return bad
	}
	l := t.lists[off:]
	cnt, c := binary.Uvarint(l)
	if c <= 0 || cnt > uint64(len(l)) {
		return bad
	}
	l = l[c:]
	p := uint64(0)
	for range cnt {
		g, c := binary.Uvarint(l)
		if c <= 0 {
			return bad
		}
		l, p = l[c:], p+g
		if p < hit.MaxPlainPos || p >= uint64(t.stored) {
			return bad
		}
		fn(int32(p))
	}
	return nil
}

// check decodes every chunk and every term of the tail index.
func (t *pageText) check() error {
	if err := t.each(0, t.stored, func(int, []byte, []byte) {}); err != nil {
		return err
	}
	for i := range len(t.dir) / 8 {
		if i > 0 && binary.LittleEndian.Uint32(t.dir[8*i:]) <= binary.LittleEndian.Uint32(t.dir[8*i-8:]) {
			return corrupt("%s: tail index out of order", textName)
		}
		if err := t.positions(i, func(int32) {}); err != nil {
			return err
		}
	}
	return nil
}

// uvarintBytes splits a uvarint-prefixed byte string off b.
func uvarintBytes(b []byte) (s, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}
