package barrel

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// A segment is the inverted barrels of one batch, or of several merged, as
// Lucene keeps its index: a batch writes a new segment instead of rewriting
// the barrels, and a merge policy combines segments of similar size so that
// their number stays logarithmic in the index size. DocIDs are global (one
// document index and lexicon for the whole index), and a document's
// postings live in exactly one segment: when a later batch re-indexes it
// (its page changed, or anchors to it came or went), its docID goes into the
// deletion list of the segment that held it, and a merge drops it.
//
// Files of segment N (immutable once written, except the deletion list):
//
//	seg-N.seg    its lists, word pointers, documents table and block sums
//	             one after the other, then a footer (compoundFooter)
//	seg-N.del.G  the sorted docIDs of those superseded since (generation G)
//
// The four parts of seg-N.seg were four files up to format 10, which a
// segment written then keeps until a merge rewrites it:
//
//	seg-N.inv    per barrel, the full lists then the short lists of the
//	             words the segment holds (the format of appendList)
//	seg-N.ptrs   per barrel: section offsets, lengths and CRC-32C, then the
//	             sorted relative wordIDs with their list offsets and counts
//	             (from format 14 in blocks of 64 words: encodeWordBlocks)
//	seg-N.docs   a table (see table) of the documents whose postings the
//	             segment holds: docID and document-index entry, as the
//	             batch that indexed them saw it
//	seg-N.sums   the CRC-32C of each block of the .inv file (invsums.go)
//
// The document index is these tables: a document's entry is in the newest
// segment holding it (the one where it is live), so a batch writes only the
// entries of the documents it indexes, and a merge carries the live ones.

const (
	segPrefix    = "seg-"
	segPtrsMagic = "BSEG3\n\x00\x00"
	// segBlocksMagic starts the word pointers of format 14 and after: each
	// barrel's word arrays in blocks (wordBlockWords).
	segBlocksMagic = "BSEG4\n\x00\x00"
	docListMagic   = "BDOC2\n\x00\x00"
	secHeader      = 4 + 8 + 8 + 4 + 8 + 8 + 4
)

// segFiles are the extensions of a segment's files, but its deletion
// list: its compound file, or the four files of format 10 and before.
var segFiles = []string{"seg", "inv", "ptrs", "docs", "sums"}

// A compound segment file ends in a footer: where the word pointers, the
// documents table and the block sums begin and where the sums end (the
// lists begin at 0, each part ends where the next begins), the CRC-32C of
// those four offsets, and its magic. Each part keeps its own checks, as
// its own file did. One file a segment instead of four: an index opened
// for one query opens, maps and closes each segment's once, where the
// system calls of four files a segment were a third of the extra cost of
// a query on 35 segments over one on a single segment.
const (
	compoundMagic  = "BSEGC1\n\x00"
	compoundFooter = 4*8 + 4 + len(compoundMagic)
)

// compoundParts are the offsets of a compound file's parts.
type compoundParts struct{ ptrs, docs, sums, end int64 }

func encodeCompoundFooter(p compoundParts) []byte {
	b := make([]byte, 0, compoundFooter)
	for _, v := range []int64{p.ptrs, p.docs, p.sums, p.end} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = binary.LittleEndian.AppendUint32(b, crc(b))
	return append(b, compoundMagic...)
}

// parseCompound checks compound file b's footer and returns its parts'
// offsets.
func parseCompound(b []byte, name string) (compoundParts, error) {
	if len(b) < compoundFooter || string(b[len(b)-len(compoundMagic):]) != compoundMagic {
		return compoundParts{}, corrupt("%s: bad footer", name)
	}
	f := b[len(b)-compoundFooter:]
	if crc(f[:32]) != binary.LittleEndian.Uint32(f[32:]) {
		return compoundParts{}, corrupt("%s: footer checksum mismatch", name)
	}
	var v [4]int64
	for i := range v {
		u := binary.LittleEndian.Uint64(f[8*i:])
		if u > uint64(len(b)-compoundFooter) {
			return compoundParts{}, corrupt("%s: part %d out of range", name, i)
		}
		v[i] = int64(u)
	}
	p := compoundParts{ptrs: v[0], docs: v[1], sums: v[2], end: v[3]}
	if p.ptrs > p.docs || p.docs > p.sums || p.sums > p.end || p.end != int64(len(b)-compoundFooter) {
		return compoundParts{}, corrupt("%s: parts out of order", name)
	}
	return p, nil
}

// SegmentInfo is a segment's entry in the manifest.
type SegmentInfo struct {
	ID      int    `json:"id"`
	Docs    int    `json:"docs"`          // documents it holds postings for
	Deleted int    `json:"deleted"`       // of those, superseded by a later segment
	Del     string `json:"del,omitempty"` // its deletion list file
	Batches int    `json:"batches"`       // batches merged into it
	// InDocStats: the document statistics table holds the lengths of its
	// live documents (docstats.go).
	InDocStats bool `json:"in_doc_stats,omitempty"`
}

// Live is the number of documents the segment answers for.
func (s SegmentInfo) Live() int { return s.Docs - s.Deleted }

func segName(id int, ext string) string { return fmt.Sprintf("%s%06d.%s", segPrefix, id, ext) }

// barrelSection locates one barrel in a segment: where its full and short
// lists lie in the .inv file, and the segment's words of that barrel.
type barrelSection struct {
	secBounds
	rels              []uint32 // sorted relative wordIDs
	fullOff, shortOff []uint64 // len(rels)+1, from the section start
	fullN, shortN     []uint32
}

// secBounds is where a barrel's sections lie in the .inv file, and their
// CRC-32C: what an open segment keeps of a barrelSection (64 of them a
// segment, with no pointer for the collector to follow).
type secBounds struct {
	fullStart, fullLen, shortStart, shortLen int64
	fullCRC, shortCRC                        uint32
}

// wordArrays is a barrel's word arrays as an open segment reads them: in
// place in its mapped ptrs file (the arrays of barrelSection, which a
// segWriter fills).
type wordArrays struct {
	rels              u32le // sorted relative wordIDs
	fullOff, shortOff u64le // rels.len()+1, from the section start
	fullN, shortN     u32le
}

// A ptrs file: magic, one header per barrel (word count, the full and
// short sections' start, length and CRC-32C in the .inv file, and the
// offset and CRC-32C of the barrel's word arrays in this file), the
// headers' CRC-32C, then per barrel its arrays: sorted relative wordIDs,
// full and short list offsets, full and short posting counts (from format
// 14 in blocks, encodeWordBlocks, the header's CRC-32C that of their
// fences). An open reads the headers; a barrel's arrays are read and
// checked the first time a query touches the barrel.
const ptrsHeader = 4 + 8 + 8 + 4 + 8 + 8 + 4 + 8 + 4

func encodeSegPtrs(secs *[lexicon.Barrels]barrelSection) []byte {
	if !writeWordBlocks {
		return encodeSegPtrs13(secs)
	}
	var arrays [][]byte
	for i := range secs {
		arrays = append(arrays, encodeWordBlocks(&secs[i]))
	}
	return encodePtrsHeaders(segBlocksMagic, secs, arrays)
}

// writeWordBlocks makes new segments write their word arrays in blocks
// (format 14); off only in tests that build a format 13 index.
var writeWordBlocks = true

// A barrel's word arrays in blocks (format 14): a fence a block (its
// first relative wordID and its CRC-32C; the fences' CRC-32C is the
// barrel's in the headers), then the blocks, each of up to
// wordBlockWords words' entries (relative wordID, full and short list
// offsets, full and short posting counts) and the full and short offsets
// where its last word's lists end. A word's first lookup in a barrel
// reads the fences and one block (lookupBlock), where the arrays of
// format 13, checked whole, were read whole: 13 KB a barrel on 100,000
// pages in 35 segments, and for one query a command a tenth of its CPU.
const (
	wordBlockWords = 64
	wordEntryLen   = 4 + 8 + 8 + 4 + 4
	wordBlockEnd   = 8 + 8
)

// wordBlocks is the number of blocks of a barrel of n words.
func wordBlocks(n int) int { return (n + wordBlockWords - 1) / wordBlockWords }

// blocksLen is the length of the word arrays in blocks of a barrel of n
// words; blockAt is where block k lies in them, and blockLen its length.
func blocksLen(n int) int  { return 8*wordBlocks(n) + wordEntryLen*n + wordBlockEnd*wordBlocks(n) }
func blockAt(n, k int) int { return 8*wordBlocks(n) + k*(wordEntryLen*wordBlockWords+wordBlockEnd) }
func blockLen(n, k int) int {
	return wordEntryLen*min(wordBlockWords, n-k*wordBlockWords) + wordBlockEnd
}

// encodeWordBlocks writes the word arrays of s in blocks.
func encodeWordBlocks(s *barrelSection) []byte {
	n := len(s.rels)
	if n == 0 {
		return nil
	}
	nb := wordBlocks(n)
	b := make([]byte, 8*nb, blocksLen(n))
	for k := range nb {
		lo, hi := k*wordBlockWords, min(n, (k+1)*wordBlockWords)
		start := len(b)
		for j := lo; j < hi; j++ {
			b = binary.LittleEndian.AppendUint32(b, s.rels[j])
			b = binary.LittleEndian.AppendUint64(b, s.fullOff[j])
			b = binary.LittleEndian.AppendUint64(b, s.shortOff[j])
			b = binary.LittleEndian.AppendUint32(b, s.fullN[j])
			b = binary.LittleEndian.AppendUint32(b, s.shortN[j])
		}
		b = binary.LittleEndian.AppendUint64(b, s.fullOff[hi])
		b = binary.LittleEndian.AppendUint64(b, s.shortOff[hi])
		binary.LittleEndian.PutUint32(b[8*k:], s.rels[lo])
		binary.LittleEndian.PutUint32(b[8*k+4:], crc(b[start:]))
	}
	return b
}

// encodeSegPtrs13 writes the word pointers of format 13: each barrel's
// arrays one after the other, checked whole.
func encodeSegPtrs13(secs *[lexicon.Barrels]barrelSection) []byte {
	var arrays [][]byte
	for i := range secs {
		s := &secs[i]
		var b []byte
		for _, v := range s.rels {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		if len(s.rels) > 0 {
			for _, offs := range [][]uint64{s.fullOff, s.shortOff} {
				for _, v := range offs {
					b = binary.LittleEndian.AppendUint64(b, v)
				}
			}
			for _, ns := range [][]uint32{s.fullN, s.shortN} {
				for _, v := range ns {
					b = binary.LittleEndian.AppendUint32(b, v)
				}
			}
		}
		arrays = append(arrays, b)
	}
	return encodePtrsHeaders(segPtrsMagic, secs, arrays)
}

// encodePtrsHeaders writes a ptrs file of the barrels' arrays, after the
// magic and their headers.
func encodePtrsHeaders(magic string, secs *[lexicon.Barrels]barrelSection, arrays [][]byte) []byte {
	b := append([]byte(nil), magic...)
	off := uint64(len(magic) + ptrsHeader*lexicon.Barrels + 4)
	for i := range secs {
		s := &secs[i]
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s.rels)))
		b = binary.LittleEndian.AppendUint64(b, uint64(s.fullStart))
		b = binary.LittleEndian.AppendUint64(b, uint64(s.fullLen))
		b = binary.LittleEndian.AppendUint32(b, s.fullCRC)
		b = binary.LittleEndian.AppendUint64(b, uint64(s.shortStart))
		b = binary.LittleEndian.AppendUint64(b, uint64(s.shortLen))
		b = binary.LittleEndian.AppendUint32(b, s.shortCRC)
		b = binary.LittleEndian.AppendUint64(b, off)
		sum := arrays[i]
		if magic == segBlocksMagic {
			sum = sum[:8*wordBlocks(len(s.rels))] // the fences
		}
		b = binary.LittleEndian.AppendUint32(b, crc(sum))
		off += uint64(len(arrays[i]))
	}
	b = binary.LittleEndian.AppendUint32(b, crc(b[len(magic):]))
	for _, a := range arrays {
		b = append(b, a...)
	}
	return b
}

// ptrsFile is a ptrs file's headers, its barrels' arrays decoded on demand.
type ptrsFile struct {
	data    []byte
	invSize int64
	blocks  bool // the arrays in blocks (format 14)
	n       [lexicon.Barrels]int
	off     [lexicon.Barrels]uint64
	sum     [lexicon.Barrels]uint32
}

// ptrsHeaderLen is the length of a ptrs file's headers, their checksum
// included.
const ptrsHeaderLen = len(segPtrsMagic) + ptrsHeader*lexicon.Barrels + 4

// parsePtrs checks a ptrs file's headers and fills each section's place in
// the .inv file; the word arrays are left for loadBarrel. head is a copy
// of b's first ptrsHeaderLen bytes (or as many as b has), or nil to read
// them in b.
func parsePtrs(b, head []byte, invSize int64, secs *[lexicon.Barrels]secBounds) (*ptrsFile, error) {
	hdr := ptrsHeaderLen - 4
	if head == nil {
		head = b[:min(len(b), ptrsHeaderLen)]
	}
	if len(b) < hdr+4 || len(head) < hdr+4 || string(head[:len(segPtrsMagic)]) != segPtrsMagic && string(head[:len(segBlocksMagic)]) != segBlocksMagic {
		return nil, corrupt("ptrs: bad header")
	}
	if crc(head[len(segPtrsMagic):hdr]) != binary.LittleEndian.Uint32(head[hdr:]) {
		return nil, corrupt("ptrs: header checksum mismatch")
	}
	p := &ptrsFile{data: b, invSize: invSize, blocks: string(head[:len(segBlocksMagic)]) == segBlocksMagic}
	end := uint64(hdr + 4)
	for i := range secs {
		s, x := &secs[i], head[len(segPtrsMagic)+ptrsHeader*i:]
		n := int(binary.LittleEndian.Uint32(x))
		s.fullStart, s.fullLen = int64(binary.LittleEndian.Uint64(x[4:])), int64(binary.LittleEndian.Uint64(x[12:]))
		s.fullCRC = binary.LittleEndian.Uint32(x[20:])
		s.shortStart, s.shortLen = int64(binary.LittleEndian.Uint64(x[24:])), int64(binary.LittleEndian.Uint64(x[32:]))
		s.shortCRC = binary.LittleEndian.Uint32(x[40:])
		p.off[i], p.sum[i], p.n[i] = binary.LittleEndian.Uint64(x[44:]), binary.LittleEndian.Uint32(x[52:]), n
		for _, r := range [][2]int64{{s.fullStart, s.fullLen}, {s.shortStart, s.shortLen}} {
			if r[0] < 0 || r[1] < 0 || r[0] > invSize || r[1] > invSize-r[0] {
				return nil, corrupt("ptrs: barrel %d section out of range", i)
			}
		}
		if n == 0 && (s.fullLen != 0 || s.shortLen != 0) {
			return nil, corrupt("ptrs: barrel %d has bytes but no words", i)
		}
		if n > lexicon.MaxPerBarrel || p.off[i] != end {
			return nil, corrupt("ptrs: barrel %d arrays out of place", i)
		}
		end += uint64(p.arraysLen(n))
	}
	if end != uint64(len(b)) {
		return nil, corrupt("ptrs: %d bytes, the headers say %d", len(b), end)
	}
	return p, nil
}

// loadBarrel checks and returns barrel i's word arrays, of section s:
// in place, or decoded from their blocks.
func (p *ptrsFile) loadBarrel(i int, s *secBounds) (wordArrays, error) {
	n := p.n[i]
	if n == 0 {
		return wordArrays{}, nil
	}
	rest := p.data[p.off[i] : p.off[i]+uint64(p.arraysLen(n))]
	if p.blocks {
		return p.decodeBlocks(i, s, rest)
	}
	return p.arraysOf(i, s, rest)
}

// arraysLen is the length of the word arrays of a barrel of n words.
func (p *ptrsFile) arraysLen(n int) int {
	switch {
	case n == 0:
		return 0
	case p.blocks:
		return blocksLen(n)
	}
	return 4*n + 2*8*(n+1) + 2*4*n
}

// decodeBlocks checks rest, the arrays in blocks of barrel i (of section
// s), and returns them decoded: each block checked as a lookup checks it
// (checkBlock; the lexicon's bound is arraysErr's), and each beginning
// where the one before ends, so that the words are in order and the
// offsets too, over the barrel.
func (p *ptrsFile) decodeBlocks(i int, s *secBounds, rest []byte) (wordArrays, error) {
	n := p.n[i]
	nb := wordBlocks(n)
	fences := rest[:8*nb]
	if err := p.checkFences(i, fences); err != nil {
		return wordArrays{}, err
	}
	rels, fullN, shortN := make(u32le, 0, 4*n), make(u32le, 0, 4*n), make(u32le, 0, 4*n)
	fullOff, shortOff := make(u64le, 0, 8*(n+1)), make(u64le, 0, 8*(n+1))
	for k := range nb {
		blk := rest[blockAt(n, k):][:blockLen(n, k)]
		if err := p.checkBlock(i, s, fences, k, blk, lexicon.MaxPerBarrel); err != nil {
			return wordArrays{}, err
		}
		m := (len(blk) - wordBlockEnd) / wordEntryLen
		for j := range m {
			e := blk[wordEntryLen*j:]
			if k > 0 && j == 0 {
				// Where the block before ends.
				if string(e[4:12]) != string(fullOff[len(fullOff)-8:]) || string(e[12:20]) != string(shortOff[len(shortOff)-8:]) {
					return wordArrays{}, corrupt("ptrs: barrel %d offsets out of range", i)
				}
			} else {
				fullOff, shortOff = append(fullOff, e[4:12]...), append(shortOff, e[12:20]...)
			}
			rels = append(rels, e[:4]...)
			fullN, shortN = append(fullN, e[20:24]...), append(shortN, e[24:28]...)
		}
		end := blk[wordEntryLen*m:]
		fullOff, shortOff = append(fullOff, end[:8]...), append(shortOff, end[8:16]...)
	}
	return wordArrays{rels: rels, fullOff: fullOff, shortOff: shortOff, fullN: fullN, shortN: shortN}, nil
}

// checkFences checks b, the fences of barrel i.
func (p *ptrsFile) checkFences(i int, b []byte) error {
	if crc(b) != p.sum[i] {
		return corrupt("ptrs: barrel %d checksum mismatch", i)
	}
	return nil
}

// blockOf is the block that may hold relative wordID rel, from a
// barrel's fences (checked): the last whose first word is at or below
// rel, or -1 for none.
func blockOf(fences []byte, rel uint32) int {
	return sort.Search(len(fences)/8, func(k int) bool { return binary.LittleEndian.Uint32(fences[8*k:]) > rel }) - 1
}

// checkBlock checks block k of barrel i (of section s), read into blk,
// as far as one block tells: its checksum and fence, its words in order, below the next
// block's fence and below maxRel (the lexicon's), its offsets in order
// and within the sections.
func (p *ptrsFile) checkBlock(i int, s *secBounds, fences []byte, k int, blk []byte, maxRel uint32) error {
	if len(blk) != blockLen(p.n[i], k) || crc(blk) != binary.LittleEndian.Uint32(fences[8*k+4:]) {
		return corrupt("ptrs: barrel %d checksum mismatch", i)
	}
	if binary.LittleEndian.Uint32(blk) != binary.LittleEndian.Uint32(fences[8*k:]) {
		return corrupt("ptrs: barrel %d words out of order", i)
	}
	limit := uint32(lexicon.MaxPerBarrel)
	if k+1 < len(fences)/8 {
		limit = binary.LittleEndian.Uint32(fences[8*(k+1):])
	}
	m := (len(blk) - wordBlockEnd) / wordEntryLen
	var prevRel uint32
	var prevFull, prevShort uint64
	for j := range m + 1 {
		e := blk[wordEntryLen*j:]
		var full, short uint64
		if j < m {
			full, short = binary.LittleEndian.Uint64(e[4:]), binary.LittleEndian.Uint64(e[12:])
			r := binary.LittleEndian.Uint32(e)
			if j > 0 && r <= prevRel || r >= limit {
				return corrupt("ptrs: barrel %d words out of order", i)
			}
			if r >= maxRel {
				return lexiconErr(i)
			}
			prevRel = r
		} else {
			full, short = binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint64(e[8:]) // the block's end
		}
		if full < prevFull || short < prevShort || full > uint64(s.fullLen) || short > uint64(s.shortLen) {
			return corrupt("ptrs: barrel %d offsets out of range", i)
		}
		prevFull, prevShort = full, short
	}
	return nil
}

// blockFind finds rel in a checked block.
func blockFind(blk []byte, rel uint32) (wordEntry, bool) {
	m := (len(blk) - wordBlockEnd) / wordEntryLen
	j := sort.Search(m, func(j int) bool { return binary.LittleEndian.Uint32(blk[wordEntryLen*j:]) >= rel })
	if j == m || binary.LittleEndian.Uint32(blk[wordEntryLen*j:]) != rel {
		return wordEntry{}, false
	}
	// Its lists end where the next word's begin, or at the block's end
	// offsets after its last word.
	e, next := blk[wordEntryLen*j:], blk[wordEntryLen*(j+1):]
	if j+1 < m {
		next = next[4:]
	}
	return wordEntry{
		fullLo: int64(binary.LittleEndian.Uint64(e[4:])), fullHi: int64(binary.LittleEndian.Uint64(next)),
		shortLo: int64(binary.LittleEndian.Uint64(e[12:])), shortHi: int64(binary.LittleEndian.Uint64(next[8:])),
		nf: binary.LittleEndian.Uint32(e[20:]), ns: binary.LittleEndian.Uint32(e[24:]),
	}, true
}

// arraysOf checks rest, the arrays of barrel i (of section s), and
// returns them, read in place in rest.
func (p *ptrsFile) arraysOf(i int, s *secBounds, rest []byte) (wordArrays, error) {
	n, need := p.n[i], len(rest)
	if crc(rest) != p.sum[i] {
		return wordArrays{}, corrupt("ptrs: barrel %d checksum mismatch", i)
	}
	var a wordArrays
	a.rels = u32le(rest[:4*n])
	q := 4 * n
	a.fullOff = u64le(rest[q : q+8*(n+1)])
	q += 8 * (n + 1)
	a.shortOff = u64le(rest[q : q+8*(n+1)])
	q += 8 * (n + 1)
	a.fullN = u32le(rest[q : q+4*n])
	a.shortN = u32le(rest[q+4*n : need])
	if !a.rels.increasing(lexicon.MaxPerBarrel) {
		return wordArrays{}, corrupt("ptrs: barrel %d words out of order", i)
	}
	if !monotone(a.fullOff, s.fullLen) || !monotone(a.shortOff, s.shortLen) {
		return wordArrays{}, corrupt("ptrs: barrel %d offsets out of range", i)
	}
	return a, nil
}

func encodeDocList(docs []uint32) []byte {
	b := make([]byte, 0, len(docListMagic)+4*len(docs))
	b = append(b, docListMagic...)
	for _, d := range docs {
		b = binary.LittleEndian.AppendUint32(b, d)
	}
	return b
}

// decodeDocList checks a deletion list and returns its docIDs, in place.
func decodeDocList(b []byte, name string, docs uint32) (u32le, error) {
	if len(b) < len(docListMagic) || string(b[:len(docListMagic)]) != docListMagic || (len(b)-len(docListMagic))%4 != 0 {
		return nil, corrupt("%s: bad header or size", name)
	}
	out := u32le(b[len(docListMagic):])
	if !out.increasing(docs) {
		return nil, corrupt("%s: docIDs out of order or range", name)
	}
	return out, nil
}

// segment is an open segment.
type segment struct {
	info     SegmentInfo
	path     string // of the compound file, or of the .inv file
	ptrsName string // the file of its word pointers, for messages
	whole    []byte // the mapped compound file (its parts are in place in it)
	fd       int    // the compound file, kept open when mapped (fdOpen): some parts are read by pread
	fdOpen   bool
	ptrsAt   int64         // where the ptrs part lies in the compound file
	asked    atomic.Uint64 // a bit per barrel a word was looked up in (find)
	invSize  int64
	secs     *[lexicon.Barrels]secBounds
	ptrs     *ptrsFile
	words    [lexicon.Barrels]*wordArrays // in the ptrs file, each once loaded (one query reads a few barrels)
	pmu      sync.Mutex
	pErr     error
	maxRel   [lexicon.Barrels]uint32 // the lexicon's word counts
	dt       *table                  // the documents and their entries
	sums     *invSums                // the .inv file's block checksums (none before format 10)
	del      docBits                 // the deleted ones, one bit a docID
	delList  u32le                   // sorted, in the mapped deletion list
	delMap   []byte
	sumsMap  []byte

	liveOnce sync.Once
	liveWins []atomic.Pointer[liveWin] // the documents not deleted, by window (liveWindow)

	mu       sync.Mutex
	inv      []byte
	ptrsMap  []byte
	mapped   bool
	invReady atomic.Bool // mapped, read without the lock
	checked  [lexicon.Barrels]bool
	err      error

	// A bit per barrel whose word arrays are loaded (secReady), whose
	// sections are mapped and checked (barReady): a query's lookups in a
	// barrel already read take no lock (one lookup per query word and
	// segment).
	secReady, barReady atomic.Uint64
	// Word arrays in blocks (format 14): a bit per barrel whose fences
	// are checked (blkReady), and per barrel a bit per block checked.
	blkReady atomic.Uint64
	blkOK    *[lexicon.Barrels][]atomic.Uint64
}

// mapChecked maps manifest file name from dir and checks it whole.
func mapChecked(dir, name string, gen int, files map[string]FileSum) ([]byte, error) {
	want, found := files[name]
	if !found {
		return nil, corrupt("%s missing from %s", name, manifestName)
	}
	b, err := mapFile(filepath.Join(dir, diskName(name, gen)), want.Size)
	if err != nil {
		return nil, err
	}
	if crc(b) != want.CRC {
		unmap(b)
		return nil, corrupt("%s: checksum mismatch", name)
	}
	return b, nil
}

// unmap releases b, from mapFile: a file above smallFile is a mapping, a
// smaller one memory the collector frees.
func unmap(b []byte) {
	if len(b) > smallFile {
		syscall.Munmap(b)
	}
}

// openSegment maps a segment's files and checks its word pointers'
// headers, its documents table's trailer, and its deletion list and block
// sums whole (small, read in place); its barrels' word arrays are checked
// the first time a query touches the barrel, and its lists by the blocks
// its walks read.
func openSegment(dir string, info SegmentInfo, m *Manifest) (_ *segment, err error) {
	s := &segment{info: info, fd: -1}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if cn := segName(info.ID, "seg"); hasFile(m, cn) {
		err = s.openCompound(dir, cn, m.Files[cn])
	} else {
		err = s.openFiles(dir, m)
	}
	if err != nil {
		return nil, err
	}
	s.maxRel = m.LexCounts
	if info.Del != "" {
		if s.delMap, err = mapChecked(dir, info.Del, m.Generation, m.Files); err != nil {
			return nil, err
		}
		if s.delList, err = decodeDocList(s.delMap, info.Del, m.Docs); err != nil {
			return nil, err
		}
		if s.delList.len() != info.Deleted {
			return nil, corrupt("%s: %d docIDs, manifest says %d", info.Del, s.delList.len(), info.Deleted)
		}
		s.del = delSetOf(s.delList)
	}
	if s.dt.size != docRecSize || s.dt.count != info.Docs {
		return nil, corrupt("%s: %d records of %d bytes, manifest says %d", s.dt.name, s.dt.count, s.dt.size, info.Docs)
	}
	return s, nil
}

// openCompound maps compound file name, of the size and checksum sum,
// and checks the headers of its parts.
func (s *segment) openCompound(dir, name string, sum FileSum) error {
	s.path, s.ptrsName = filepath.Join(dir, name), name
	b, fd, err := openFile(s.path, sum.Size, true)
	if err != nil {
		return err
	}
	s.whole = b
	s.fd, s.fdOpen = fd, fd >= 0
	p, err := parseCompound(b, name)
	if err != nil {
		return err
	}
	s.inv, s.invSize = b[:p.ptrs:p.ptrs], p.ptrs
	s.secs = &[lexicon.Barrels]secBounds{}
	s.ptrsAt = p.ptrs
	ptrs := b[p.ptrs:p.docs:p.docs]
	var head []byte
	if s.fdOpen { // the headers read, not their page touched: an index opened for one query touches few pages of each segment
		buf := scratchBuf(min(len(ptrs), ptrsHeaderLen))
		defer scratchPool.Put(buf)
		if head = *buf; preadFull(s.fd, head, p.ptrs) != nil {
			head = nil // read in place: the mapping reports what is wrong
		}
	}
	if s.ptrs, err = parsePtrs(ptrs, head, s.invSize, s.secs); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if s.sums, err = decodeInvSums(b[p.sums:p.end:p.end], name, s.invSize); err != nil {
		return err
	}
	s.dt = &table{name: name, data: b[p.docs:p.sums:p.sums], inPlace: true}
	if err := s.dt.parse(); err != nil {
		return err
	}
	s.mapped = true
	registerInv(s.inv, s.sums, name)
	s.invReady.Store(true)
	return nil
}

// openFiles opens a segment of four files (format 10 and before): maps
// its word pointers, block sums and documents table; its .inv file is
// mapped the first time a query reads it.
func (s *segment) openFiles(dir string, m *Manifest) (err error) {
	info := s.info
	s.path = filepath.Join(dir, segName(info.ID, "inv"))
	inv, ok := m.Files[segName(info.ID, "inv")]
	if !ok {
		return corrupt("%s missing from %s", segName(info.ID, "inv"), manifestName)
	}
	s.invSize = inv.Size
	pn := segName(info.ID, "ptrs")
	s.ptrsName = pn
	psum, ok := m.Files[pn]
	if !ok {
		return corrupt("%s missing from %s", pn, manifestName)
	}
	if s.ptrsMap, err = mapFile(filepath.Join(dir, pn), psum.Size); err != nil {
		return err
	}
	s.secs = &[lexicon.Barrels]secBounds{}
	if s.ptrs, err = parsePtrs(s.ptrsMap, nil, s.invSize, s.secs); err != nil {
		return fmt.Errorf("%s: %w", pn, err)
	}
	if sn := segName(info.ID, "sums"); hasFile(m, sn) {
		if s.sumsMap, err = mapChecked(dir, sn, m.Generation, m.Files); err != nil {
			return err
		}
		if s.sums, err = decodeInvSums(s.sumsMap, sn, s.invSize); err != nil {
			return err
		}
	} else if m.Format >= formatBlockSums {
		return corrupt("%s missing from %s", sn, manifestName)
	}
	dn := segName(info.ID, "docs")
	sum, ok := m.Files[dn]
	if !ok {
		return corrupt("%s missing from %s", dn, manifestName)
	}
	s.dt, err = openTable(dir, dn, sum)
	return err
}

func hasFile(m *Manifest, name string) bool {
	_, ok := m.Files[name]
	return ok
}

// docBits is a segment's deleted documents, a bit a docID, asked once
// per posting by merges and queries (in constant time where the sorted
// list costs a binary search; the first search on an index asks a
// delCursor instead); nil holds none. The bits are set from the
// sorted list a window of liveWinDocs docIDs at a time, the first time a
// docID of the window is asked (setting every segment's whole at open
// was a seventh of the CPU of one query on a year's index opened for
// it).
type docBits = *delSet

type delSet struct {
	list u32le                     // strictly increasing
	wins []atomic.Pointer[liveWin] // up to the last
}

// delSetOf is the set of the docIDs of list, strictly increasing; nil
// when list is empty.
func delSetOf(list u32le) docBits {
	n := list.len()
	if n == 0 {
		return nil
	}
	return &delSet{list: list, wins: make([]atomic.Pointer[liveWin], list.at(n-1)>>liveWinShift+1)}
}

func (b *delSet) has(d uint32) bool {
	if b == nil || int(d>>liveWinShift) >= len(b.wins) {
		return false
	}
	p := b.wins[d>>liveWinShift].Load()
	if p == nil {
		p = b.window(int(d >> liveWinShift))
	}
	return p[d>>6&(liveWinDocs/64-1)]&(1<<(d&63)) != 0
}

// win returns the window of deletions holding d (the empty one past the
// last deletion, or without any).
func (b *delSet) win(d uint32) *liveWin {
	w := int(d >> liveWinShift)
	if b == nil || w >= len(b.wins) {
		return &emptyLiveWindow
	}
	if p := b.wins[w].Load(); p != nil {
		return p
	}
	return b.window(w)
}

// window sets and returns window w's bits, the first time.
func (b *delSet) window(w int) *liveWin {
	i, _ := b.list.search(uint32(w) << liveWinShift)
	p, any := new(liveWin), false
	for ; i < b.list.len() && int(b.list.at(i)>>liveWinShift) == w; i++ {
		k := b.list.at(i) & (liveWinDocs - 1)
		p[k/64] |= 1 << (k % 64)
		any = true
	}
	if !any {
		p = &emptyLiveWindow
	}
	b.wins[w].CompareAndSwap(nil, p) // searches may set it at once: the first kept
	return b.wins[w].Load()
}

// delCursor tells a walk which of the docIDs it meets a segment has
// deleted, from the sorted deletion list itself, for the first search on
// an index (later ones read the windows of bits of the segment's delSet,
// kept by the open index). A walk asks its docIDs in increasing order,
// so the cursor keeps a run [lo, next) of docIDs none of which is
// deleted, and most answers are one comparison; past the run it steps
// along the list, or gallops where the walk jumps. It allocates nothing:
// the windows cost an index opened for one query 8 KiB for each 65,536
// docIDs its segments' walks reached, a third of the memory the query
// allocated.
type delCursor struct {
	list u32le  // strictly increasing
	i    int    // the first deletion at or above lo
	lo   uint32 // no deletion in [lo, next)
	next uint32
	del  bool // next is deleted (else past the last deletion: math.MaxUint32)
}

func newDelCursor(b docBits) delCursor {
	var c delCursor
	if b != nil {
		c.list = b.list
	}
	return c
}

// deleted reports whether d is deleted; asked in increasing order it
// mostly costs a comparison, in any other order a binary search.
func (c *delCursor) deleted(d uint32) bool {
	return d-c.lo >= c.next-c.lo && c.seek(d) // past [lo, next)
}

// seek moves the cursor to d and reports whether d is deleted.
func (c *delCursor) seek(d uint32) bool {
	if d == c.next && c.del {
		return true
	}
	back := d < c.lo
	c.lo = d
	n := c.list.len()
	var i int
	if !back {
		// Gallop from i: 1, 2, 4, ... deletions ahead, then search the
		// last step.
		lo, step := c.i, 1
		for lo+step < n && c.list.at(lo+step) < d {
			lo += step
			step *= 2
		}
		hi := min(n, lo+step) // list[hi], if any, is at or above d
		j, _ := c.list[4*lo : 4*hi].search(d)
		i = lo + j
	} else {
		i, _ = c.list.search(d)
	}
	c.i, c.next, c.del = i, math.MaxUint32, i < n
	if c.del {
		c.next = c.list.at(i)
	}
	return c.del && c.next == d
}

// mostlyDeleted reports whether at least half of the segment's documents
// are deleted: later batches superseded it.
func (s *segment) mostlyDeleted() bool {
	return s.del != nil && 2*s.info.Deleted >= s.info.Docs
}

// passDeleted is where a query's walk goes from a deleted posting at d-1:
// in a segment mostly deleted, the segment's next live document
// (nextLive, its documents table read a window of docIDs at a time), to
// which the lists seek past the runs of deleted postings; in any other,
// d: the next posting, a deleted one passed by its bit in the deletion
// list. Reading a window of the table cost more than the deleted
// postings it passed there: most of a crawl's segments have a few
// percent of their documents deleted, and one query a command read
// their tables' windows for them.
func (s *segment) passDeleted(d uint32) uint32 {
	if !s.mostlyDeleted() {
		return d
	}
	return s.nextLive(d)
}

// nextLive is the first docID at or after d that the segment holds and
// has not deleted; math.MaxUint32 past the last. Without deletions it is
// d.
func (s *segment) nextLive(d uint32) uint32 {
	if s.del == nil {
		return d
	}
	for w := int(d >> liveWinShift); ; w++ {
		b := s.liveWindow(w)
		switch {
		case b == nil:
			return d // the table is damaged (tableErr says so): no jumps
		case b == &pastLiveWindows:
			return math.MaxUint32
		}
		i := 0
		if w == int(d>>liveWinShift) {
			i = int(d&(liveWinDocs-1)) / 64
			if x := b[i] >> (d % 64); x != 0 {
				return d + uint32(bits.TrailingZeros64(x))
			}
			i++
		}
		for ; i < len(b); i++ {
			if b[i] != 0 {
				return uint32(w<<liveWinShift + i*64 + bits.TrailingZeros64(b[i]))
			}
		}
	}
}

// hasLive reports whether the segment holds d and has not deleted it (a
// damaged table holds none).
func (s *segment) hasLive(d uint32) bool {
	b := s.liveWindow(int(d >> liveWinShift))
	if b == nil || b == &pastLiveWindows {
		return false
	}
	k := d & (liveWinDocs - 1)
	return b[k/64]&(1<<(k%64)) != 0
}

// The segment's live documents, one bit a docID, are read from its
// documents' table a window of liveWinDocs docIDs at a time, the first
// time a walk asks for one: a segment that later batches superseded is
// mostly deleted, and its lists jump from one live document to the next
// instead of walking the deleted postings between; but a query that
// stops at its MaxMatches-th match reads the first windows only (reading
// a year's 36 segments whole was half the CPU of one query on an index
// opened for it).
const (
	liveWinShift = 16
	liveWinDocs  = 1 << liveWinShift
)

type liveWin [liveWinDocs / 64]uint64

// emptyLiveWindow is every window without a live document of the
// segment; pastLiveWindows stands for those past its last document.
var emptyLiveWindow, pastLiveWindows liveWin

// liveWindow returns window w of the segment's live documents, read
// the first time; nil when its table is damaged.
func (s *segment) liveWindow(w int) *liveWin {
	s.liveOnce.Do(s.sizeLive)
	if s.liveWins == nil {
		return nil
	}
	if w >= len(s.liveWins) {
		return &pastLiveWindows
	}
	if b := s.liveWins[w].Load(); b != nil {
		return b
	}
	b, any := new(liveWin), false
	lo := uint64(w) << liveWinShift
	err := s.dt.each(lo, lo+liveWinDocs, func(r []byte) error {
		d := binary.LittleEndian.Uint64(r)
		if !s.del.has(uint32(d)) {
			k := d - lo
			b[k/64] |= 1 << (k % 64)
			any = true
		}
		return nil
	})
	if err != nil {
		return nil
	}
	if !any {
		b = &emptyLiveWindow
	}
	s.liveWins[w].CompareAndSwap(nil, b) // searches may read it at once: the first kept
	return s.liveWins[w].Load()
}

// sizeLive sets liveWins to the windows up to the segment's last docID
// (none when its table is damaged).
func (s *segment) sizeLive() {
	if s.dt.count == 0 {
		s.liveWins = []atomic.Pointer[liveWin]{}
		return
	}
	r, err := s.dt.rec(s.dt.count - 1)
	if err != nil {
		return
	}
	last := binary.LittleEndian.Uint64(r)
	if last > math.MaxUint32 {
		return // a docID out of range: the table is damaged (entry says so)
	}
	s.liveWins = make([]atomic.Pointer[liveWin], last>>liveWinShift+1)
}

// entry returns the entry of doc d as the segment holds it.
func (s *segment) entry(d uint32) (DocEntry, bool, error) {
	i, err := s.dt.search(uint64(d))
	if err != nil || i >= s.dt.count {
		return DocEntry{}, false, err
	}
	r, err := s.dt.rec(i)
	if err != nil || binary.LittleEndian.Uint64(r) != uint64(d) {
		return DocEntry{}, false, err
	}
	e, err := decodeDocRec(r)
	return e, err == nil, err
}

// eachLive calls fn for every live document of the segment (not deleted
// by its deletion list), in docID order.
func (s *segment) eachLive(fn func(d uint32, e DocEntry) error) error {
	return s.eachDoc(func(d uint32, e DocEntry, _ []byte) error {
		if s.del.has(d) {
			return nil
		}
		return fn(d, e)
	})
}

// eachDoc calls fn for every document of the segment, in docID order.
func (s *segment) eachDoc(fn func(d uint32, e DocEntry, rec []byte) error) error {
	for i := range s.dt.count {
		r, err := s.dt.rec(i)
		if err != nil {
			return err
		}
		e, err := decodeDocRec(r)
		if err != nil {
			return fmt.Errorf("%s: %w", s.dt.name, err)
		}
		if err := fn(uint32(binary.LittleEndian.Uint64(r)), e, r); err != nil {
			return err
		}
	}
	return nil
}

func (s *segment) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.inv) > 0 && s.sums != nil {
		unregisterInv(s.inv)
	}
	if s.whole == nil {
		unmap(s.inv)
	}
	s.inv, s.mapped = nil, false
	s.invReady.Store(false)
	s.barReady.Store(0)
	s.dt.close()
	if s.fdOpen {
		syscall.Close(s.fd)
		s.fd, s.fdOpen = -1, false
	}
	// The word arrays, deletion list and sums are read in place: gone
	// with their files' mappings.
	unmap(s.whole)
	unmap(s.ptrsMap)
	unmap(s.delMap)
	unmap(s.sumsMap)
	s.whole, s.ptrsMap, s.delMap, s.sumsMap = nil, nil, nil, nil
}

// barrel returns the full and short sections of barrel bb, mapping the
// segment and checking the sections' CRC-32C the first time.
func (s *segment) barrel(bb int) (full, short []byte, err error) {
	if s.barReady.Load()&(1<<(bb%64)) != 0 {
		sec := &s.secs[bb]
		return s.inv[sec.fullStart : sec.fullStart+sec.fullLen], s.inv[sec.shortStart : sec.shortStart+sec.shortLen], nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.mapLocked(); err != nil {
		return nil, nil, err
	}
	sec := &s.secs[bb]
	full = s.inv[sec.fullStart : sec.fullStart+sec.fullLen]
	short = s.inv[sec.shortStart : sec.shortStart+sec.shortLen]
	if !s.checked[bb] {
		if s.sums != nil { // by blocks, which later walks then find checked
			name := filepath.Base(s.path)
			if err := s.sums.check(s.inv, name, sec.fullStart, sec.fullStart+sec.fullLen); err != nil {
				return nil, nil, err
			}
			if err := s.sums.check(s.inv, name, sec.shortStart, sec.shortStart+sec.shortLen); err != nil {
				return nil, nil, err
			}
		} else if crc(full) != sec.fullCRC || crc(short) != sec.shortCRC {
			return nil, nil, corrupt("%s: barrel %d checksum mismatch", filepath.Base(s.path), bb)
		}
		s.checked[bb] = true
		s.barReady.Or(1 << (bb % 64))
	}
	return full, short, nil
}

// mapLocked maps the .inv file, the first time; s.mu is held.
func (s *segment) mapLocked() error {
	if s.err != nil {
		return s.err
	}
	if !s.mapped {
		s.inv, s.err = mapFile(s.path, s.invSize)
		if s.err != nil {
			return s.err
		}
		s.mapped = true
		if s.sums != nil {
			registerInv(s.inv, s.sums, filepath.Base(s.path))
		}
		s.invReady.Store(true)
	}
	return nil
}

// invData returns the mapped .inv file, unchecked.
func (s *segment) invData() ([]byte, error) {
	if s.invReady.Load() {
		return s.inv, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.mapLocked(); err != nil {
		return nil, err
	}
	return s.inv, nil
}

// listBytes returns bytes lo to hi of the .inv file, a list of barrel
// bb: checked with the whole barrel where the segment has no block sums,
// else by the blocks its walks read, as they read them.
func (s *segment) listBytes(bb int, lo, hi int64) ([]byte, error) {
	if s.sums == nil || s.barReady.Load()&(1<<(bb%64)) != 0 {
		if _, _, err := s.barrel(bb); err != nil {
			return nil, err
		}
		return s.inv[lo:hi], nil
	}
	inv, err := s.invData() // checked by the walks of the list (newPostingIter)
	if err != nil {
		return nil, err
	}
	return inv[lo:hi], nil
}

// sec returns barrel bb's section and word arrays, the arrays checked
// the first time.
func (s *segment) sec(bb int) (*secBounds, *wordArrays, error) {
	if s.secReady.Load()&(1<<(bb%64)) != 0 {
		return &s.secs[bb], s.words[bb], nil
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.pErr != nil {
		return nil, nil, s.pErr
	}
	if s.words[bb] == nil {
		a, err := s.ptrs.loadBarrel(bb, &s.secs[bb])
		if err = s.arraysErr(bb, a, err); err != nil {
			return nil, nil, err
		}
		s.words[bb] = &a
		s.secReady.Or(1 << (bb % 64))
	}
	return &s.secs[bb], s.words[bb], nil
}

// arraysErr is the damage of barrel bb's word arrays a, read with err:
// kept, so that every later lookup in the segment reports it.
func (s *segment) arraysErr(bb int, a wordArrays, err error) error {
	if n := a.rels.len(); err == nil && n > 0 && a.rels.at(n-1) >= s.maxRel[bb] {
		err = lexiconErr(bb)
	}
	if err != nil {
		return s.ptrsErr(err)
	}
	return s.pErr
}

// ptrsErr keeps err, damage to the word pointers, for every later lookup
// in the segment, and returns it naming the file.
func (s *segment) ptrsErr(err error) error {
	s.pErr = fmt.Errorf("%s: %w", s.ptrsName, err)
	return s.pErr
}

func lexiconErr(bb int) error { return corrupt("barrel %d holds a word the lexicon does not", bb) }

// wordEntry is where a word's lists lie in their barrel's sections, and
// their posting counts.
type wordEntry struct {
	fullLo, fullHi, shortLo, shortHi int64
	nf, ns                           uint32
}

func (a *wordArrays) entry(i int) wordEntry {
	return wordEntry{
		fullLo: int64(a.fullOff.at(i)), fullHi: int64(a.fullOff.at(i + 1)),
		shortLo: int64(a.shortOff.at(i)), shortHi: int64(a.shortOff.at(i + 1)),
		nf: a.fullN.at(i), ns: a.shortN.at(i),
	}
}

// find returns the entry of the word of relative ID rel in barrel bb. The
// first lookup in a barrel reads its word arrays (in blocks, its fences
// and one block) by pread into a buffer it reuses (lookupOnce); the
// second reads them in place in the mapping: their blocks, each checked
// once (findInBlocks), or the arrays loaded and kept (sec). One query on
// an index opened for it looks a word up once in each segment, and the
// page faults of the arrays read in place, each mapping the pages around
// it, and their unmapping at close, cost more than the reads.
//
// first reports a lookup by pread: lists reads the word's lists the same
// way.
func (s *segment) find(bb int, rel uint32) (e wordEntry, found, first bool, err error) {
	bit := uint64(1) << (bb % 64)
	if s.fdOpen && s.secReady.Load()&bit == 0 && s.asked.Or(bit)&bit == 0 {
		e, found, err = s.lookupOnce(bb, rel)
		return e, found, true, err
	}
	if s.ptrs.blocks {
		e, found, err = s.findInBlocks(bb, rel)
		return e, found, false, err
	}
	_, a, err := s.sec(bb)
	if err != nil {
		return wordEntry{}, false, false, err
	}
	i, found := a.rels.search(rel)
	if !found {
		return wordEntry{}, false, false, nil
	}
	return a.entry(i), true, false, nil
}

// lookupOnce looks rel up in barrel bb's word arrays read into a buffer
// and checked as loadBarrel checks them (in blocks: lookupBlock).
func (s *segment) lookupOnce(bb int, rel uint32) (wordEntry, bool, error) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.pErr != nil {
		return wordEntry{}, false, s.pErr
	}
	n := s.ptrs.n[bb]
	if n == 0 {
		return wordEntry{}, false, nil
	}
	at := s.ptrsAt + int64(s.ptrs.off[bb])
	if s.ptrs.blocks {
		return s.lookupBlock(bb, rel, at)
	}
	buf := scratchBuf(s.ptrs.arraysLen(n))
	defer scratchPool.Put(buf)
	if err := preadFull(s.fd, *buf, at); err != nil {
		return wordEntry{}, false, fileReadErr(s.path, err)
	}
	a, err := s.ptrs.arraysOf(bb, &s.secs[bb], *buf)
	if err = s.arraysErr(bb, a, err); err != nil {
		return wordEntry{}, false, err
	}
	i, found := a.rels.search(rel)
	if !found {
		return wordEntry{}, false, nil
	}
	return a.entry(i), true, nil
}

// lookupBlock is lookupOnce in word arrays in blocks, at offset at of
// the compound file: it reads the barrel's fences and the block that may
// hold rel, both checked.
func (s *segment) lookupBlock(bb int, rel uint32, at int64) (wordEntry, bool, error) {
	n := s.ptrs.n[bb]
	nb := wordBlocks(n)
	buf := scratchBuf(8*nb + wordEntryLen*wordBlockWords + wordBlockEnd)
	defer scratchPool.Put(buf)
	fences := (*buf)[:8*nb]
	if err := preadFull(s.fd, fences, at); err != nil {
		return wordEntry{}, false, fileReadErr(s.path, err)
	}
	if err := s.ptrs.checkFences(bb, fences); err != nil {
		return wordEntry{}, false, s.ptrsErr(err)
	}
	k := blockOf(fences, rel)
	if k < 0 {
		return wordEntry{}, false, nil
	}
	blk := (*buf)[8*nb:][:blockLen(n, k)]
	if err := preadFull(s.fd, blk, at+int64(blockAt(n, k))); err != nil {
		return wordEntry{}, false, fileReadErr(s.path, err)
	}
	if err := s.ptrs.checkBlock(bb, &s.secs[bb], fences, k, blk, s.maxRel[bb]); err != nil {
		return wordEntry{}, false, s.ptrsErr(err)
	}
	e, found := blockFind(blk, rel)
	return e, found, nil
}

// findInBlocks looks rel up in barrel bb's word arrays in blocks, in
// place in the mapping: the barrel's fences checked the first time, and
// each block the first time a lookup reads it. An open index keeps no
// copy of them (decoded, they would hold 28 bytes a word of each segment
// in memory).
func (s *segment) findInBlocks(bb int, rel uint32) (wordEntry, bool, error) {
	bit := uint64(1) << (bb % 64)
	n := s.ptrs.n[bb]
	if n == 0 {
		return wordEntry{}, false, nil
	}
	arrays := s.ptrs.data[s.ptrs.off[bb]:][:blocksLen(n)]
	fences := arrays[:8*wordBlocks(n)]
	if s.blkReady.Load()&bit == 0 {
		s.pmu.Lock()
		if s.pErr != nil {
			s.pmu.Unlock()
			return wordEntry{}, false, s.pErr
		}
		if s.blkReady.Load()&bit == 0 {
			if err := s.ptrs.checkFences(bb, fences); err != nil {
				err = s.ptrsErr(err)
				s.pmu.Unlock()
				return wordEntry{}, false, err
			}
			if s.blkOK == nil {
				s.blkOK = new([lexicon.Barrels][]atomic.Uint64)
			}
			s.blkOK[bb] = make([]atomic.Uint64, (wordBlocks(n)+63)/64)
			s.blkReady.Or(bit)
		}
		s.pmu.Unlock()
	}
	k := blockOf(fences, rel)
	if k < 0 {
		return wordEntry{}, false, nil
	}
	blk := arrays[blockAt(n, k):][:blockLen(n, k)]
	ok, kb := &s.blkOK[bb][k/64], uint64(1)<<(k%64)
	if ok.Load()&kb == 0 {
		s.pmu.Lock()
		defer s.pmu.Unlock()
		if s.pErr != nil {
			return wordEntry{}, false, s.pErr
		}
		if err := s.ptrs.checkBlock(bb, &s.secs[bb], fences, k, blk, s.maxRel[bb]); err != nil {
			return wordEntry{}, false, s.ptrsErr(err)
		}
		ok.Or(kb)
	}
	e, found := blockFind(blk, rel)
	return e, found, nil
}

// scratchPool holds buffers for bytes read and used at once (the ptrs
// headers, lookupOnce).
var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

// scratchBuf returns a buffer of n bytes from scratchPool, to be put back.
func scratchBuf(n int) *[]byte {
	p := scratchPool.Get().(*[]byte)
	if cap(*p) < n {
		*p = make([]byte, n)
	}
	*p = (*p)[:n]
	return p
}

// list returns the list of wordID id in the short or full barrels of the
// segment, and its posting count (deleted documents included).
func (s *segment) list(id uint32, short bool) ([]byte, uint32, error) {
	bb := lexicon.BarrelOf(id)
	e, found, _, err := s.find(bb, lexicon.Rel(id))
	if err != nil || !found {
		return nil, 0, err
	}
	sec := &s.secs[bb]
	if short {
		l, err := s.listBytes(bb, sec.shortStart+e.shortLo, sec.shortStart+e.shortHi)
		return l, e.ns, err
	}
	l, err := s.listBytes(bb, sec.fullStart+e.fullLo, sec.fullStart+e.fullHi)
	return l, e.nf, err
}

// lists returns the full and short lists of wordID id in the segment,
// and their posting counts (one lookup for both).
func (s *segment) lists(id uint32) (full, short []byte, nf, ns uint32, err error) {
	bb := lexicon.BarrelOf(id)
	e, found, first, err := s.find(bb, lexicon.Rel(id))
	if err != nil || !found {
		return nil, nil, 0, 0, err
	}
	sec := &s.secs[bb]
	read := s.listBytes
	if first {
		read = s.listRead
	}
	if full, err = read(bb, sec.fullStart+e.fullLo, sec.fullStart+e.fullHi); err != nil {
		return nil, nil, 0, 0, err
	}
	if short, err = read(bb, sec.shortStart+e.shortLo, sec.shortStart+e.shortHi); err != nil {
		return nil, nil, 0, 0, err
	}
	return full, short, e.nf, e.ns, nil
}

// listReadMax is the length up to which listRead copies a list.
const listReadMax = 4 << 10

// listRead is listBytes for the lists of a word looked up by pread
// (find): a list of up to listReadMax bytes is read by pread, its blocks
// checked, and copied, so that its pages are not touched (a short list
// costs the fault of the pages around it and their unmapping at close,
// more than the read). A segment copies the lists of the first word it
// looks up in each barrel only: an index kept open (barrel serve) caches
// the lists of its words (wordLists), of which those of one word a barrel
// at most, in each segment, are copies.
func (s *segment) listRead(bb int, lo, hi int64) ([]byte, error) {
	if hi-lo > listReadMax || hi <= lo || s.sums == nil || s.barReady.Load()&(1<<(bb%64)) != 0 {
		return s.listBytes(bb, lo, hi)
	}
	shift := s.sums.shift
	start, end := lo>>shift<<shift, min(((hi-1)>>shift+1)<<shift, s.invSize)
	buf := scratchBuf(int(end - start))
	defer scratchPool.Put(buf)
	if err := preadFull(s.fd, *buf, start); err != nil { // the .inv part starts the compound file
		return nil, fileReadErr(s.path, err)
	}
	if err := s.sums.checkAt(*buf, start, s.ptrsName, lo, hi); err != nil {
		return nil, err
	}
	return append([]byte(nil), (*buf)[lo-start:hi-start]...), nil
}

// segList is a word's full and short lists in one segment and their
// posting counts (deleted documents included): nf and ns are 0 where the
// segment does not hold the word.
type segList struct {
	full, short []byte
	nf, ns      uint32
	// Where the walks of the lists start (listStart): a query's cursors
	// start on their first postings without reading the lists.
	fullAt, shortAt listStart
}

// listStart is an inverted list parsed to its first posting, as
// newPostingIter and a first next leave it, in offsets into the list:
// the skip table from skip, the postings from data, the first posting's
// docID and its end (its hits from hdr) in the postings.
type listStart struct {
	skip, data, end uint32
	doc             uint32
	hdr             uint8
	valid           bool // parsed without damage (else the walk is started again, and meets it)
	ok              bool // the list holds a posting
	// The mapped file whose blocks a walk checks, and the list's offset
	// in it: looked up once (lookupInv), where a cheap query on many
	// segments opens a list in each and looked each up again.
	chk  *mappedInv
	base int64
}

// startOf parses list to its first posting.
func startOf(list []byte) listStart {
	chk, base := lookupInv(list)
	it := newIterIn(list, chk, base)
	ok := it.next()
	if it.err != nil || len(list) > math.MaxUint32 || len(it.raw)-len(it.hits) > math.MaxUint8 {
		return listStart{}
	}
	data := len(list) - len(it.data)
	st := listStart{skip: uint32(data - len(it.skips)), data: uint32(data), valid: true, ok: ok, chk: chk, base: base}
	if ok {
		st.doc, st.end, st.hdr = it.doc, uint32(it.pos), uint8(len(it.raw)-len(it.hits))
	}
	return st
}

// iter is the walk of list (the list st was parsed from) at its first
// posting, as newPostingIter and next leave it, without reading the
// list; and next's answer. ok is false too when st is not valid: the
// caller starts the walk itself.
func (st listStart) iter(list []byte) (it postingIter, ok bool) {
	if !st.valid {
		return postingIter{}, false
	}
	it = postingIter{skips: list[st.skip:st.data:st.data], data: list[st.data:], prev: -1}
	if st.chk != nil { // its header and skip table checked by startOf
		it.chk, it.cbase = st.chk, st.base+int64(st.data)
	}
	if st.ok { // the first posting starts the postings
		it.raw, it.hits = it.data[:st.end], it.data[st.hdr:st.end]
		it.doc, it.n, it.prev, it.pos = st.doc, int(st.end-uint32(st.hdr))/2, int64(st.doc), int(st.end)
	}
	return it, st.ok
}

// wordLists is a word's lists in each segment of an index, in the order
// of idx.segs.
type wordLists struct {
	id   uint32
	segs []segList
	// The lists decoded (denseOf), and the searches that asked for them
	// before.
	dense atomic.Pointer[decoded]
	asks  atomic.Int32
}

// wordListsBits sizes wordLists' cache: 1<<wordListsBits words, each
// entry a segList (56 bytes) a segment.
const wordListsBits = 12

// wordLists returns the lists of word id in each segment of the index. A
// query looks each of its words up in each segment: a binary search of
// the segment's words of the barrel and reads of its offset arrays,
// mostly a cache miss each, which on an index of many segments cost a
// cheap query more than walking its postings. The lookups are cached by
// wordID (a word's entry taken over by the next word of its slot): the
// segments of an open index do not change.
func (idx *Index) wordLists(id uint32) (*wordLists, error) {
	slot := idx.wlSlot(id)
	if e := slot.Load(); e != nil && e.id == id && segShortcuts {
		return e, nil
	}
	e := &wordLists{id: id, segs: make([]segList, len(idx.segs))}
	for k, sg := range idx.segs {
		l := &e.segs[k]
		var err error
		if l.full, l.short, l.nf, l.ns, err = sg.lists(id); err != nil {
			return nil, err
		}
		if l.nf > 0 {
			l.fullAt = startOf(l.full)
		}
		if l.ns > 0 {
			l.shortAt = startOf(l.short)
		}
	}
	if segShortcuts {
		if old := slot.Swap(e); old != nil {
			idx.release(old.dense.Load()) // its decoded lists leave with it
		}
	}
	return e, nil
}

// wlSlot is the slot of word id in wordLists' cache.
func (idx *Index) wlSlot(id uint32) *atomic.Pointer[wordLists] {
	return idx.wlCache.slot((id*0x9e3779b1)>>(32-wordListsBits), wordListsBits) // a wordID's low bits are its place in its barrel: mixed
}

// liveCount is the number of postings of a list whose document is not
// deleted: n less the deleted documents found in it (by seeking, when the
// deletion list is the shorter).
func (s *segment) liveCount(list []byte, n uint32) (uint32, error) {
	if s.del == nil || n == 0 {
		return n, nil
	}
	dead := uint32(0)
	it := newPostingIter(list)
	if s.delList.len() < int(n) {
		for i := range s.delList.len() {
			d := s.delList.at(i)
			if !it.seek(d) {
				break
			}
			if it.doc == d {
				dead++
			}
		}
	} else {
		// The live postings are counted, the runs of deleted documents
		// jumped with the skip table.
		live := uint32(0)
		for ok := it.next(); ok; {
			if s.del.has(it.doc) {
				ok = it.seek(s.nextLive(it.doc + 1))
				continue
			}
			live++
			ok = it.next()
		}
		dead = n - live
	}
	return n - dead, it.err
}

// smallFile is the size up to which mapFile reads a file into memory
// rather than mapping it. A mapping costs its mmap, a page fault for each
// page touched and its munmap (the page tables' teardown): for a file of a
// few pages more than one read of it. An index opened for one query opens
// each segment's compound file and deletion list (four files and the
// deletion list for a segment of format 10, three of them a few pages in a
// small segment): a small segment's are read, not mapped.
const smallFile = 64 << 10

// mapFile maps the file at path read-only, or reads it whole if it is
// small (smallFile); it must hold size bytes. Either is read in place and
// released by unmap. The file is opened by system call: an os.File
// registers with the runtime's poller and sets its descriptor's mode,
// three system calls more a file.
func mapFile(path string, size int64) ([]byte, error) {
	b, _, err := openFile(path, size, false)
	return b, err
}

// openFile is mapFile that, with keep, leaves the file open when it maps
// it and returns its descriptor (else -1): a segment reads some of its
// parts by pread rather than touching their pages (its word pointers'
// headers, lookupOnce, listRead).
func openFile(path string, size int64, keep bool) ([]byte, int, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, -1, corrupt("%s: %v", filepath.Base(path), &os.PathError{Op: "open", Path: path, Err: err})
	}
	kept := false
	defer func() {
		if !kept {
			syscall.Close(fd)
		}
	}()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, -1, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Size != size {
		return nil, -1, corrupt("%s: %d bytes, manifest says %d (truncated?)", filepath.Base(path), st.Size, size)
	}
	if size == 0 {
		return nil, -1, nil
	}
	if size > smallFile {
		b, err := syscall.Mmap(fd, 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil || !keep {
			return b, -1, err
		}
		kept = true
		return b, fd, nil
	}
	b := make([]byte, size)
	if err := preadFull(fd, b, 0); err != nil {
		return nil, -1, fileReadErr(path, err)
	}
	return b, -1, nil
}

// preadFull reads len(b) bytes of fd at off; io.ErrUnexpectedEOF where the
// file ends before.
func preadFull(fd int, b []byte, off int64) error {
	for n := 0; n < len(b); {
		k, err := syscall.Pread(fd, b[n:], off+int64(n))
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return err
		case k == 0:
			return io.ErrUnexpectedEOF
		}
		n += k
	}
	return nil
}

// fileReadErr is err of a read of the file at path: a file shorter than
// its manifest says is damage.
func fileReadErr(path string, err error) error {
	if err == io.ErrUnexpectedEOF {
		return corrupt("%s: shorter than the manifest says (truncated?)", filepath.Base(path))
	}
	return &os.PathError{Op: "read", Path: path, Err: err}
}

// segWriter writes a segment's .inv file barrel by barrel: full lists are
// streamed, the barrel's short lists (a fraction of the size) are held and
// written after them.
type segWriter struct {
	inv   sectionOut
	secs  [lexicon.Barrels]barrelSection
	bb    int
	short []byte
	lbuf  []byte
	full  uint32 // running CRC of the barrel's full section
	base  int64
}

// sectionOut is where a segWriter writes the barrels' sections: the .inv
// file, or memory for a barrel sorted ahead of its turn.
type sectionOut interface {
	Write([]byte) (int, error)
	size() int64
}

// memOut is a sectionOut in memory.
type memOut struct{ buf []byte }

func (m *memOut) Write(b []byte) (int, error) { m.buf = append(m.buf, b...); return len(b), nil }
func (m *memOut) size() int64                 { return int64(len(m.buf)) }

func (w *segWriter) begin(bb int) {
	w.bb, w.short, w.full, w.base = bb, w.short[:0], 0, w.inv.size()
	s := &w.secs[bb]
	s.fullOff, s.shortOff = []uint64{0}, []uint64{0}
}

// add writes one word's lists, given as postings (no skip table yet).
func (w *segWriter) add(rel uint32, full []byte, nf uint32, short []byte, ns uint32) {
	if nf == 0 && ns == 0 {
		return
	}
	s := &w.secs[w.bb]
	w.lbuf = appendList(w.lbuf[:0], full, nf)
	w.inv.Write(w.lbuf)
	w.full = crc32.Update(w.full, castagnoli, w.lbuf)
	w.short = appendList(w.short, short, ns)
	s.rels = append(s.rels, rel)
	s.fullN, s.shortN = append(s.fullN, nf), append(s.shortN, ns)
	s.fullOff = append(s.fullOff, uint64(w.inv.size()-w.base))
	s.shortOff = append(s.shortOff, uint64(len(w.short)))
}

func (w *segWriter) end() {
	s := &w.secs[w.bb]
	if len(s.rels) == 0 {
		s.fullOff, s.shortOff = nil, nil
		s.fullStart, s.shortStart = 0, 0
		return
	}
	s.fullStart, s.fullLen, s.fullCRC = w.base, w.inv.size()-w.base, w.full
	s.shortStart, s.shortLen, s.shortCRC = w.inv.size(), int64(len(w.short)), crc(w.short)
	w.inv.Write(w.short)
}

// appendSection writes barrel bb's section, sorted apart into data with
// offsets from 0, at the end of w.
func (w *segWriter) appendSection(bb int, sec barrelSection, data []byte) {
	base := w.inv.size()
	w.inv.Write(data)
	if len(sec.rels) > 0 {
		sec.fullStart += base
		sec.shortStart += base
	}
	w.secs[bb] = sec
}

func (w *segWriter) words() int {
	n := 0
	for i := range w.secs {
		n += len(w.secs[i].rels)
	}
	return n
}

// mergeSegments writes to w the live postings of segs, barrel by barrel and
// word by word, dropping deleted documents. Live documents of different
// segments are distinct, so the merged lists stay in strict docID order.
func mergeSegments(segs []*segment, w *segWriter) error {
	var fbuf, sbuf []byte
	for bb := range lexicon.Barrels {
		w.begin(bb)
		for _, s := range segs {
			if _, _, err := s.sec(bb); err != nil {
				return err
			}
		}
		pos := make([]int, len(segs))
		for {
			rel := uint32(lexicon.MaxPerBarrel)
			for i, s := range segs {
				if r := s.words[bb].rels; pos[i] < r.len() && r.at(pos[i]) < rel {
					rel = r.at(pos[i])
				}
			}
			if rel == lexicon.MaxPerBarrel {
				break
			}
			var fits, sits []postingIter
			var fdel, sdel []docBits
			for i, s := range segs {
				a := s.words[bb]
				if pos[i] >= a.rels.len() || a.rels.at(pos[i]) != rel {
					continue
				}
				k := pos[i]
				pos[i]++
				full, short, err := s.barrel(bb)
				if err != nil {
					return err
				}
				fits = append(fits, checkedIter(full[a.fullOff.at(k):a.fullOff.at(k+1)]))
				sits = append(sits, checkedIter(short[a.shortOff.at(k):a.shortOff.at(k+1)]))
				fdel, sdel = append(fdel, s.del), append(sdel, s.del)
			}
			var nf, ns uint32
			var err error
			if fbuf, nf, err = mergePostings(fbuf[:0], fits, fdel); err != nil {
				return fmt.Errorf("barrel %d word %d: %w", bb, rel, err)
			}
			if sbuf, ns, err = mergePostings(sbuf[:0], sits, sdel); err != nil {
				return fmt.Errorf("barrel %d word %d: %w", bb, rel, err)
			}
			w.add(rel, fbuf, nf, sbuf, ns)
		}
		w.end()
	}
	return nil
}

// mergePostings appends the postings of its not deleted in docID order.
func mergePostings(out []byte, its []postingIter, dels []docBits) ([]byte, uint32, error) {
	ok := make([]bool, len(its))
	for i := range its {
		ok[i] = its[i].next()
	}
	var n uint32
	last := int64(-1)
	for {
		best := -1
		for i := range its {
			if ok[i] && (best < 0 || its[i].doc < its[best].doc) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		it := &its[best]
		if !dels[best].has(it.doc) {
			if int64(it.doc) <= last {
				return nil, 0, corrupt("segments: docID %d live in two segments", it.doc)
			}
			out = append(out, it.raw...)
			last = int64(it.doc)
			n++
		}
		ok[best] = it.next()
	}
	for i := range its {
		if its[i].err != nil {
			return nil, 0, its[i].err
		}
	}
	return out, n, nil
}

// compoundSegments is whether a commit writes a segment as one compound
// file (format 11); the tests of older formats turn it off to build the
// four files of format 10.
var compoundSegments = true

// segOut writes a new segment: the lists (through w), then the word
// pointers and block sums, then the documents table (through docs).
type segOut struct {
	compound   bool // one file (compoundSegments when it began)
	id         int
	m          *Manifest
	create     func(string) (*genWriter, error)
	writeWhole func(string, []byte) error
	g          *genWriter // the compound file, or the .inv file
	sums       *blockSummer
	w          *segWriter
	parts      compoundParts
	docsFile   *genWriter // the .docs file (four files)
	docs       *tableWriter
}

func newSegOut(id int, m *Manifest, create func(string) (*genWriter, error), writeWhole func(string, []byte) error) (*segOut, error) {
	compound, ext := compoundSegments, "seg"
	if !compound {
		ext = "inv"
	}
	g, err := create(segName(id, ext))
	if err != nil {
		return nil, err
	}
	o := &segOut{compound: compound, id: id, m: m, create: create, writeWhole: writeWhole, g: g, sums: &blockSummer{out: g}}
	o.w = &segWriter{inv: o.sums}
	return o, nil
}

// endLists follows the lists the segWriter wrote with the word pointers
// and starts the documents table.
func (o *segOut) endLists() error {
	if !o.compound {
		sum, err := o.g.finish()
		o.g = nil
		if err != nil {
			return err
		}
		o.m.Files[segName(o.id, "inv")] = sum
		if err := o.writeWhole(segName(o.id, "ptrs"), encodeSegPtrs(&o.w.secs)); err != nil {
			return err
		}
		if err := o.writeWhole(segName(o.id, "sums"), o.sums.file()); err != nil {
			return err
		}
		if o.docsFile, err = o.create(segName(o.id, "docs")); err != nil {
			return err
		}
		o.docs = newTableWriter(o.docsFile, docRecSize)
		return nil
	}
	o.parts.ptrs = o.g.size()
	o.g.Write(encodeSegPtrs(&o.w.secs))
	o.parts.docs = o.g.size()
	o.docs = newTableWriter(partOut{o.g}, docRecSize)
	return o.g.err
}

// partOut writes a part of a compound file: its writer does not finish
// the file.
type partOut struct{ g *genWriter }

func (p partOut) Write(b []byte) (int, error) { return p.g.Write(b) }

// finish ends the documents table and the segment's files, and enters
// them in the manifest.
func (o *segOut) finish() error {
	if !o.compound {
		sum, err := o.docs.finish()
		o.docsFile = nil
		o.m.Files[segName(o.id, "docs")] = sum
		return err
	}
	o.docs.end()
	o.parts.sums = o.g.size()
	o.g.Write(o.sums.file())
	o.parts.end = o.g.size()
	o.g.Write(encodeCompoundFooter(o.parts))
	sum, err := o.g.finish()
	o.g = nil
	o.m.Files[segName(o.id, "seg")] = sum
	return err
}

// abort closes what files are open after a failure (the commit removes
// them).
func (o *segOut) abort() {
	if o.g != nil {
		o.g.finish()
	}
	if o.docsFile != nil {
		o.docsFile.finish()
	}
}
