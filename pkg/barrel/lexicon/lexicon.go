// Package lexicon is the barrel lexicon of section 4.2.4: every word held in
// memory as one list of words separated by NULs plus an open-addressing hash
// table of indexes into it. The table is saved as is, so a searcher loads the
// lexicon with a few large reads and no rehashing.
//
// A wordID is the barrel number (the word's hash modulo the barrel count) in
// its top bits and the word's rank within that barrel in the low 24 bits, so
// each forward barrel holds a range of wordIDs, as in the paper, and the
// barrels stay balanced as words are added batch after batch.
package lexicon

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Barrels is the number of barrels (64, as in the paper).
const Barrels = 64

// RelBits is the width of the wordID relative to its barrel's first.
const RelBits = 24

// MaxPerBarrel is the number of words a barrel can hold (one relative
// wordID is reserved as the end-of-document mark of forward barrels).
const MaxPerBarrel = 1<<RelBits - 1

// ErrFull is returned when a barrel has no wordID left.
var ErrFull = errors.New("lexicon: barrel full")

// Lexicon maps words to wordIDs.
type Lexicon struct {
	words  []byte   // words separated by NULs
	offs   []uint32 // offs[i]: start of word i in words
	ids    []uint32 // ids[i]: wordID of word i
	table  []uint32 // open addressing: index+1 of a word, 0 empty
	counts [Barrels]uint32
}

// New returns an empty lexicon.
func New() *Lexicon { return &Lexicon{table: make([]uint32, 1024)} }

// Hash is the word hash used for barrels and the table (FNV-1a, 64 bits).
func Hash(w []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range w {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// BarrelOf returns the barrel of a wordID.
func BarrelOf(id uint32) int { return int(id >> RelBits) }

// Rel returns the wordID relative to its barrel's first.
func Rel(id uint32) uint32 { return id & (1<<RelBits - 1) }

// ID builds a wordID.
func ID(barrel int, rel uint32) uint32 { return uint32(barrel)<<RelBits | rel }

// Len returns the number of words.
func (l *Lexicon) Len() int { return len(l.offs) }

// Count returns the number of words in barrel b.
func (l *Lexicon) Count(b int) int { return int(l.counts[b]) }

// Word returns word i (in insertion order) and its wordID.
func (l *Lexicon) Word(i int) ([]byte, uint32) {
	s := l.offs[i]
	e := s
	for e < uint32(len(l.words)) && l.words[e] != 0 {
		e++
	}
	return l.words[s:e], l.ids[i]
}

func (l *Lexicon) find(w []byte, h uint64) (slot int, idx int) {
	mask := uint64(len(l.table) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := l.table[i]
		if v == 0 {
			return int(i), -1
		}
		o := l.offs[v-1]
		if int(o)+len(w) < len(l.words) && l.words[int(o)+len(w)] == 0 && string(l.words[o:int(o)+len(w)]) == string(w) {
			return int(i), int(v - 1)
		}
	}
}

// Lookup returns the wordID of w.
func (l *Lexicon) Lookup(w []byte) (uint32, bool) {
	if len(l.offs) == 0 {
		return 0, false
	}
	_, i := l.find(w, Hash(w))
	if i < 0 {
		return 0, false
	}
	return l.ids[i], true
}

// Index returns the insertion index of a word (for per-word tables), -1 if
// absent.
func (l *Lexicon) Index(w []byte) int {
	if len(l.offs) == 0 {
		return -1
	}
	_, i := l.find(w, Hash(w))
	return i
}

// Add returns the wordID of w, adding it if new. w must not contain NUL.
func (l *Lexicon) Add(w []byte) (uint32, bool, error) {
	h := Hash(w)
	slot, i := l.find(w, h)
	if i >= 0 {
		return l.ids[i], false, nil
	}
	b := int(h % Barrels)
	if l.counts[b] >= MaxPerBarrel {
		return 0, false, ErrFull
	}
	id := ID(b, l.counts[b])
	l.counts[b]++
	l.offs = append(l.offs, uint32(len(l.words)))
	l.ids = append(l.ids, id)
	l.words = append(l.words, w...)
	l.words = append(l.words, 0)
	l.table[slot] = uint32(len(l.offs))
	if len(l.offs)*2 > len(l.table) {
		l.grow()
	}
	return id, true, nil
}

func (l *Lexicon) grow() {
	l.table = make([]uint32, len(l.table)*2)
	mask := uint64(len(l.table) - 1)
	for i := range l.offs {
		w, _ := l.Word(i)
		j := Hash(w) & mask
		for l.table[j] != 0 {
			j = (j + 1) & mask
		}
		l.table[j] = uint32(i + 1)
	}
}

// IndexOfID returns, per barrel, the insertion index of each relative
// wordID: the map from wordIDs to per-word tables.
func (l *Lexicon) IndexOfID() [Barrels][]uint32 {
	var out [Barrels][]uint32
	for b := range out {
		out[b] = make([]uint32, l.counts[b])
	}
	for i, id := range l.ids {
		out[BarrelOf(id)][Rel(id)] = uint32(i)
	}
	return out
}

const magic = "BLEX1\n"

// MarshalBinary encodes the lexicon: header, counts, word list, wordIDs,
// offsets, table, CRC-32C of all before it.
func (l *Lexicon) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, len(magic)+24+len(l.words)+8*len(l.offs)+4*len(l.table)+4*Barrels+4)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(l.words)))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(l.offs)))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(l.table)))
	for _, c := range l.counts {
		b = binary.LittleEndian.AppendUint32(b, c)
	}
	b = append(b, l.words...)
	for _, v := range l.ids {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	for _, v := range l.offs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	for _, v := range l.table {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// UnmarshalBinary decodes and checks a lexicon.
func (l *Lexicon) UnmarshalBinary(b []byte) error {
	bad := func(why string) error { return fmt.Errorf("lexicon corrupt: %s", why) }
	if len(b) < len(magic)+24+4*Barrels+4 || string(b[:len(magic)]) != magic {
		return bad("bad header")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return bad("checksum mismatch")
	}
	p := body[len(magic):]
	nw, no, nt := binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:]), binary.LittleEndian.Uint64(p[16:])
	p = p[24:]
	if nt == 0 || nt&(nt-1) != 0 || no*2 > nt || nw > uint64(len(p)) || no > uint64(len(p)) || nt > uint64(len(p)) ||
		uint64(len(p)) != 4*Barrels+nw+8*no+4*nt {
		return bad("bad sizes")
	}
	var total uint64
	for i := range l.counts {
		l.counts[i] = binary.LittleEndian.Uint32(p[4*i:])
		total += uint64(l.counts[i])
	}
	if total != no {
		return bad("barrel counts")
	}
	p = p[4*Barrels:]
	l.words = p[:nw:nw]
	p = p[nw:]
	l.ids = u32s(p[:4*no])
	l.offs = u32s(p[4*no : 8*no])
	l.table = u32s(p[8*no:])
	for i, o := range l.offs {
		if uint64(o) >= nw || (i > 0 && o <= l.offs[i-1]) {
			return bad("word offsets")
		}
		id := l.ids[i]
		if Rel(id) >= l.counts[BarrelOf(id)%Barrels] || BarrelOf(id) >= Barrels {
			return bad("wordIDs")
		}
	}
	if nw > 0 && l.words[nw-1] != 0 {
		return bad("word list")
	}
	empty := 0
	for _, v := range l.table {
		if uint64(v) > no {
			return bad("hash table")
		}
		if v == 0 {
			empty++
		}
	}
	if empty == 0 {
		return bad("hash table full")
	}
	return nil
}

func u32s(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}
