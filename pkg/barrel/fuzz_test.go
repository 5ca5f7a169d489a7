package barrel

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/hit"
	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// FuzzDecoders feeds arbitrary bytes to every decoder of index data: posting
// lists, forward entries, the document index, the URL file, the word
// pointers, docinfo and anchors. None may panic; what they accept must be
// consistent.
func FuzzDecoders(f *testing.F) {
	var list []byte
	list = hit.AppendInverted(list, 3, 2)
	list = hit.AppendHits(list, []hit.Hit{hit.Plain(true, 1, 4), hit.Fancy(false, hit.Title, 0)})
	list = hit.AppendInverted(list, 9, 40)
	list = hit.AppendHits(list, make([]hit.Hit, 40))
	f.Add(appendList(nil, list, 2))
	var many []byte
	for d := range uint32(100) {
		many = hit.AppendInverted(many, 3*d, 1)
		many = hit.AppendHits(many, []hit.Hit{hit.Plain(false, 1, int(d))})
	}
	f.Add(appendList(nil, many, 100))
	f.Add(encodeTable(docRecSize, [][]byte{appendDocRec(nil, 3, &DocEntry{Status: StatusFetched, InfoOff: 7})}))
	f.Add(encodeTable(runRec, [][]byte{make([]byte, 16), {1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0}}))
	var secs [lexicon.Barrels]barrelSection
	secs[0] = barrelSection{secBounds: secBounds{fullLen: 6, shortStart: 6, shortLen: 4}, rels: []uint32{3},
		fullOff: []uint64{0, 6}, shortOff: []uint64{0, 4}, fullN: []uint32{1}, shortN: []uint32{1}}
	f.Add(encodeSegPtrs(&secs))
	f.Add(encodeSegPtrs13(&secs))
	f.Add(encodeDocList([]uint32{1, 4, 7}))
	f.Add(appendDocInfo(nil, "http://x.test/", "T", 7))
	var d htmldoc.Doc
	d.Parse([]byte("<p>some text, in   two <b>words</b> or more</p>"), nil)
	f.Add(newTextEncoder().appendRecord(nil, &d))
	f.Add(appendAnchor(nil, 1, 2, 0, "anchor text"))
	f.Fuzz(func(t *testing.T, b []byte) {
		it := newPostingIter(b)
		var prev int64 = -1
		for it.next() {
			if int64(it.doc) <= prev || len(it.hits) != 2*it.n {
				t.Fatalf("posting out of order or wrong size")
			}
			prev = int64(it.doc)
			for j := range it.n {
				h := hit.At(it.hits, j)
				_ = typeOf(h)
				_ = h.Class()
			}
		}
		sk := newPostingIter(b)
		if sk.next() {
			for _, target := range []uint32{sk.doc + 1, sk.doc + 100, 1 << 26} {
				if sk.seek(target) && sk.doc < target {
					t.Fatalf("seek(%d) stopped at %d", target, sk.doc)
				}
			}
		}
		tab := &table{name: "t", data: b}
		if tab.parse() == nil && tab.verify() == nil {
			for i := range tab.count {
				r, err := tab.rec(i)
				if err != nil || len(r) != tab.size {
					t.Fatal("record of a verified table unreadable")
				}
				if tab.size == docRecSize {
					if e, err := decodeDocRec(r); err == nil && (e.Status > StatusLinked || e.Status == StatusNone) {
						t.Fatal("bad status accepted")
					}
				}
				if tab.size >= 8 {
					if j, err := tab.search(binary.LittleEndian.Uint64(r)); err != nil || j > i {
						t.Fatalf("search for record %d's key found %d", i, j)
					}
				}
			}
		}
		var secs [lexicon.Barrels]secBounds
		if p, err := parsePtrs(b, nil, 10, &secs); err == nil {
			for bb := range lexicon.Barrels {
				s := &secs[bb]
				if s.fullStart+s.fullLen > 10 || s.shortStart+s.shortLen > 10 {
					t.Fatal("section out of range accepted")
				}
				if p.blocks && p.n[bb] > 0 {
					// A block checked alone finds each of its words
					// where the barrel's arrays have them.
					arrays := p.data[p.off[bb]:][:blocksLen(p.n[bb])]
					fences := arrays[:8*wordBlocks(p.n[bb])]
					for k := range len(fences) / 8 {
						blk := arrays[blockAt(p.n[bb], k):][:blockLen(p.n[bb], k)]
						if p.checkBlock(bb, s, fences, k, blk, lexicon.MaxPerBarrel) != nil {
							continue
						}
						for j := range (len(blk) - wordBlockEnd) / wordEntryLen {
							rel := binary.LittleEndian.Uint32(blk[wordEntryLen*j:])
							e, ok := blockFind(blk, rel)
							if !ok || e.fullLo > e.fullHi || e.fullHi > s.fullLen || e.shortLo > e.shortHi || e.shortHi > s.shortLen {
								t.Fatalf("word %d of a checked block: %+v, found %v", rel, e, ok)
							}
						}
					}
				}
				a, err := p.loadBarrel(bb, s)
				if err != nil {
					continue
				}
				for i := range a.rels.len() {
					if a.fullOff.at(i) > a.fullOff.at(i+1) || a.fullOff.at(i+1) > uint64(s.fullLen) || i > 0 && a.rels.at(i) <= a.rels.at(i-1) {
						t.Fatal("bad offsets accepted")
					}
				}
			}
		}
		if docs, err := decodeDocList(b, "docs", 10); err == nil {
			for i := range docs.len() {
				if d := docs.at(i); d >= 10 || i > 0 && d <= docs.at(i-1) {
					t.Fatal("bad doc list accepted")
				}
			}
		}
		readDocInfoAt(bytesReaderAt(b), 0, int64(len(b)), 0)
		readDocInfoAt(bytesReaderAt(b), 0, int64(len(b)), math.MaxInt64)
		if t, err := readTextAt(bytesReaderAt(b), 0, int64(len(b))); err == nil {
			t.check()
			t.tailKeys([]string{"some", "text"})
		}
		eachAnchor(b, func(from, to uint32, off uint64, text []byte) error { return nil })
	})
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b)) {
		return 0, errShort
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, errShort
	}
	return n, nil
}

var errShort = corrupt("short read")

// TestSeek checks that seeking with the skip table lands where a linear
// scan does.
func TestSeek(t *testing.T) {
	var postings []byte
	var docs []uint32
	for d := uint32(0); d < 5000; d += 1 + d%7 {
		postings = hit.AppendInverted(postings, d, 1+int(d%40))
		postings = hit.AppendHits(postings, make([]hit.Hit, 1+int(d%40)))
		docs = append(docs, d)
	}
	list := appendList(nil, postings, uint32(len(docs)))
	if n, _ := binary.Uvarint(list); n != uint64((len(docs)+skipEvery-1)/skipEvery) {
		t.Fatalf("%d skip entries for %d postings", n, len(docs))
	}
	for _, step := range []uint32{1, 5, 33, 400, 2000} {
		it := newPostingIter(list)
		it.next()
		for target := it.doc + step; ; target += step {
			ok := it.seek(target)
			i, _ := slices.BinarySearch(docs, target)
			if !ok {
				if i < len(docs) {
					t.Fatalf("step %d: seek(%d) ended, want doc %d", step, target, docs[i])
				}
				break
			}
			if it.doc != docs[i] || it.n != 1+int(it.doc%40) {
				t.Fatalf("step %d: seek(%d) = doc %d (%d hits), want %d", step, target, it.doc, it.n, docs[i])
			}
		}
		if it.err != nil {
			t.Fatal(it.err)
		}
	}
}

// TestDenseSeek: a walk that starts from a list's first posting parsed
// ahead (listStart) and seeks in the list decoded (seekDense, and
// seekDoc, which reads the posting later) stands at each step where the
// plain walk does, through any mix of next and seeks, in lists with a
// skip table and without, with postings of many hits.
func TestDenseSeek(t *testing.T) {
	for _, size := range []int{1, 40, 63, 64, 5000} {
		var postings []byte
		var docs []uint32
		for d := uint32(3); len(docs) < size; d += 1 + d%7 {
			nh := 1 + int(d%45) // 31 and over: an escaped count
			postings = hit.AppendInverted(postings, d, nh)
			postings = hit.AppendHits(postings, make([]hit.Hit, nh))
			docs = append(docs, d)
		}
		list := appendList(nil, postings, uint32(len(docs)))
		st := startOf(list)
		dl := decodeList(list, uint32(len(docs)))
		if !st.valid || dl == nil || !slices.Equal(dl.docs, docs) {
			t.Fatalf("%d postings: start %+v, decoded %v", size, st, dl != nil)
		}
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, uint64(size)))
			plain := newPostingIter(list)
			pok := plain.next()
			dense, dok := st.iter(list)
			dense.dd = dl
			for step := 0; pok || dok; step++ {
				if pok == dok && pok && plain.doc == dense.doc && rng.IntN(2) == 0 {
					// A seek that read no posting (seekDoc): moved on
					// from unread, or read now.
					target := plain.doc + uint32(rng.IntN(60))
					pok, dok = plain.seek(target), dense.seekDoc(target)
					if pok && dok && plain.doc == dense.doc && rng.IntN(2) == 0 {
						pok, dok = plain.next(), dense.next()
					}
				}
				if dok {
					dok = dense.load()
				}
				if pok != dok || pok && (plain.doc != dense.doc || plain.n != dense.n || !bytes.Equal(plain.hits, dense.hits) || !bytes.Equal(plain.raw, dense.raw)) {
					t.Fatalf("%d postings, seed %d, step %d: plain at %d (%v), decoded at %d (%v)", size, seed, step, plain.doc, pok, dense.doc, dok)
				}
				if rng.IntN(3) == 0 {
					pok, dok = plain.next(), dense.next()
					continue
				}
				target := plain.doc + uint32(rng.IntN([]int{3, 40, 300, 3000}[rng.IntN(4)]))
				pok, dok = plain.seek(target), dense.seek(target)
			}
			if plain.err != nil || dense.err != nil {
				t.Fatal(plain.err, dense.err)
			}
		}
	}
}
