package barrel

import (
	"encoding/binary"
	"slices"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// The live document frequency of every word (the number of live documents
// whose full lists hold it), kept exact by construction: a batch adds the
// document counts of its new segment's lists and subtracts, for each
// document it supersedes, the words that document had in its older
// segment. Those words are known without reading the old segment: a
// document still live in an older segment has the same page version and
// the same live anchors as when that segment indexed it (a change of
// either would have re-indexed it), so its old words are its old page's
// words and the words of its anchors live before the batch. Merges drop
// only deleted postings and leave the frequencies alone. A query then
// reads one number per word instead of subtracting every segment's
// deleted postings from its lists.
//
// File "df": magic, then per barrel its word count (uint32) and one
// uint32 per relative wordID.
const dfMagic = "BDF3\n\x00\x00\x00"

type docFreqs [lexicon.Barrels][]uint32

func (d *docFreqs) get(id uint32) uint32 {
	bb, rel := lexicon.BarrelOf(id), lexicon.Rel(id)
	if int(rel) >= len(d[bb]) {
		return 0
	}
	return d[bb][rel]
}

// grow makes room for the lexicon's words.
func (d *docFreqs) grow(lex *lexicon.Lexicon) {
	for bb := range d {
		if n := lex.Count(bb); n > len(d[bb]) {
			d[bb] = append(d[bb], make([]uint32, n-len(d[bb]))...)
		}
	}
}

func encodeDocFreqs(d *docFreqs) []byte {
	n := len(dfMagic)
	for bb := range d {
		n += 4 + 4*len(d[bb])
	}
	b := make([]byte, 0, n)
	b = append(b, dfMagic...)
	for bb := range d {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(d[bb])))
		for _, v := range d[bb] {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
	}
	return b
}

func decodeDocFreqs(b []byte, lex *lexicon.Lexicon) (*docFreqs, error) {
	d := &docFreqs{}
	if len(b) < len(dfMagic) || string(b[:len(dfMagic)]) != dfMagic {
		return nil, corrupt("df: bad header")
	}
	b = b[len(dfMagic):]
	for bb := range d {
		if len(b) < 4 {
			return nil, corrupt("df: truncated")
		}
		n := int(binary.LittleEndian.Uint32(b))
		if n != lex.Count(bb) || len(b) < 4+4*n {
			return nil, corrupt("df: barrel %d holds %d words, the lexicon %d", bb, n, lex.Count(bb))
		}
		d[bb] = u32s(b[4 : 4+4*n])
		b = b[4+4*n:]
	}
	if len(b) != 0 {
		return nil, corrupt("df: trailing bytes")
	}
	return d, nil
}

// wordSets collects (wordID, docID) pairs and counts, per word, the
// distinct documents holding it.
type wordSets []uint64

func (s *wordSets) add(doc uint32, keys []uint64) {
	for _, k := range keys {
		*s = append(*s, k&^0xffffffff|uint64(doc))
	}
}

// counts returns the number of distinct documents per wordID.
func (s wordSets) counts() map[uint32]uint32 {
	slices.Sort(s)
	out := map[uint32]uint32{}
	for i, k := range s {
		if i > 0 && s[i-1] == k {
			continue
		}
		out[uint32(k>>32)]++
	}
	return out
}
