package recrawl

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// hostKeyMax is the longest host kept in a hostTable slot itself; longer
// hosts (rare) go to a map.
const hostKeyMax = 24

// A hostTable maps host names to their indexes. A host of up to 24 bytes
// is kept in its slot of an open-addressed table, zero-padded, with its
// length and index, so that finding it reads one 32-byte slot (one cache
// line): recrawl rank looks up every page's host while streaming its
// input, which evicts the table between two pages of one host, and a Go
// map's lookup took three cache misses (control word, slot, key bytes).
type hostTable struct {
	slots []hostSlot
	n     int              // hosts in slots
	long  map[string]int32 // hosts over hostKeyMax bytes
	// hint is the last host prefetched and the slot where finding it
	// starts (hintN 0: none), and last the last host found and its index:
	// a page's host is prefetched, then touched and added, and each of
	// those would otherwise hash it again.
	hintW, lastW [3]uint64
	hintN, lastN uint32
	hintSlot     int
	lastIdx      int32
}

type hostSlot struct {
	key [3]uint64 // the host's bytes, zero-padded, little-endian
	n   uint32    // length + 1; 0: empty slot
	idx int32
}

// hostWords returns the host's bytes (at most hostKeyMax) as three
// zero-padded words. A host of eight bytes or more is read a word at a
// time, its last bytes from the word that ends the host, shifted: no
// copy whose bytes are read back as words before the copy is done.
func hostWords(host string) (w [3]uint64) {
	n := len(host)
	if n < 8 {
		var b [8]byte
		copy(b[:], host)
		w[0] = binary.LittleEndian.Uint64(b[:])
		return w
	}
	b := unsafe.Slice(unsafe.StringData(host), n)
	for i := 0; i+8 <= n; i += 8 {
		w[i/8] = binary.LittleEndian.Uint64(b[i:])
	}
	if r := n % 8; r != 0 {
		w[n/8] = binary.LittleEndian.Uint64(b[n-8:]) >> (8 * (8 - r))
	}
	return w
}

func hostHash(w *[3]uint64, n int) uint64 {
	const k0, k1, k2 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
	hi, lo := bits.Mul64(w[0]^k0, w[1]^k1)
	h := hi ^ lo
	hi, lo = bits.Mul64(h^w[2], k2^uint64(n))
	return hi ^ lo
}

// home returns the slot where finding the host of words w and length
// n-1 starts (the table has slots).
func (t *hostTable) home(w *[3]uint64, n uint32) int {
	if n == t.hintN && *w == t.hintW {
		return t.hintSlot
	}
	return int(hostHash(w, int(n-1))) & (len(t.slots) - 1)
}

// find returns host's index, or -1.
func (t *hostTable) find(host string) int32 {
	if len(host) > hostKeyMax {
		if i, ok := t.long[host]; ok {
			return i
		}
		return -1
	}
	if len(t.slots) == 0 {
		return -1
	}
	w := hostWords(host)
	n := uint32(len(host)) + 1
	if n == t.lastN && w == t.lastW {
		return t.lastIdx
	}
	mask := len(t.slots) - 1
	for i := t.home(&w, n); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.n == 0 {
			return -1
		}
		if s.n == n && s.key == w {
			t.lastW, t.lastN, t.lastIdx = w, n, s.idx
			return s.idx
		}
	}
}

// prefetch starts bringing in the slot where finding host starts, and
// goes on without waiting for it (see prefetch_amd64.go): called with the
// host of a line about to be read, it lets the lookups that follow the
// reading of the line find the slot in the cache.
func (t *hostTable) prefetch(host string) {
	if len(host) > hostKeyMax || len(t.slots) == 0 {
		return
	}
	w := hostWords(host)
	n := uint32(len(host)) + 1
	i := int(hostHash(&w, len(host))) & (len(t.slots) - 1)
	t.hintW, t.hintN, t.hintSlot = w, n, i
	prefetch(unsafe.Pointer(&t.slots[i]))
}

// add adds a host not in the table under index idx.
func (t *hostTable) add(host string, idx int32) {
	if len(host) > hostKeyMax {
		if t.long == nil {
			t.long = make(map[string]int32)
		}
		t.long[host] = idx
		return
	}
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	w := hostWords(host)
	mask := len(t.slots) - 1
	i := t.home(&w, uint32(len(host))+1)
	for t.slots[i].n != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = hostSlot{key: w, n: uint32(len(host)) + 1, idx: idx}
	t.n++
}

func (t *hostTable) grow() {
	old := t.slots
	t.hintN = 0 // its slot is the old table's
	t.slots = make([]hostSlot, max(1024, 2*len(old)))
	mask := len(t.slots) - 1
	for _, s := range old {
		if s.n == 0 {
			continue
		}
		i := int(hostHash(&s.key, int(s.n-1))) & mask
		for t.slots[i].n != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}
