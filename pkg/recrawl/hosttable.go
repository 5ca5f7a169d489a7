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
	sink  uint32           // what touch loaded (kept, so that the load is made)
}

type hostSlot struct {
	key [3]uint64 // the host's bytes, zero-padded, little-endian
	n   uint32    // length + 1; 0: empty slot
	idx int32
}

// hostWords returns the host's bytes as three zero-padded words.
func hostWords(host string) (w [3]uint64) {
	var b [hostKeyMax]byte
	copy(b[:], host)
	w[0] = binary.LittleEndian.Uint64(b[0:])
	w[1] = binary.LittleEndian.Uint64(b[8:])
	w[2] = binary.LittleEndian.Uint64(b[16:])
	return w
}

func hostHash(w *[3]uint64, n int) uint64 {
	const k0, k1, k2 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
	hi, lo := bits.Mul64(w[0]^k0, w[1]^k1)
	h := hi ^ lo
	hi, lo = bits.Mul64(h^w[2], k2^uint64(n))
	return hi ^ lo
}

// find returns host's index, or -1 and the slot where it would go.
func (t *hostTable) find(host string) (idx int32, slot int) {
	if len(host) > hostKeyMax {
		if i, ok := t.long[host]; ok {
			return i, -1
		}
		return -1, -1
	}
	if len(t.slots) == 0 {
		return -1, -1
	}
	w := hostWords(host)
	n := uint32(len(host)) + 1
	mask := len(t.slots) - 1
	for i := int(hostHash(&w, len(host))) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.n == 0 {
			return -1, i
		}
		if s.n == n && s.key == w {
			return s.idx, i
		}
	}
}

// touch loads the slot where finding host starts, and does nothing else:
// called as soon as a page's host is known, it brings the slot into the
// cache while the rest of the page is read, so that the find that follows
// does not wait for memory (recrawl rank's input streams through the
// cache and evicts the table between two pages of one host).
// It returns the slot's index, for the host's other columns to be touched
// too (an empty or another host's slot gives some index, no harm).
func (t *hostTable) touch(host string) int {
	if len(host) > hostKeyMax || len(t.slots) == 0 {
		return 0
	}
	w := hostWords(host)
	s := &t.slots[int(hostHash(&w, len(host)))&(len(t.slots)-1)]
	t.sink += s.n
	return int(s.idx)
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
	prefetch(unsafe.Pointer(&t.slots[int(hostHash(&w, len(host)))&(len(t.slots)-1)]))
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
	i := int(hostHash(&w, len(host))) & mask
	for t.slots[i].n != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = hostSlot{key: w, n: uint32(len(host)) + 1, idx: idx}
	t.n++
}

func (t *hostTable) grow() {
	old := t.slots
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
