package barrel

import (
	"sync"
	"sync/atomic"
)

// The caches of an open index (a word's lexicon lookup, its document
// frequency, its lists in each segment, the live postings of a list) are
// tables of slots indexed by a hash, an entry taken over by the next of
// its slot. A table's slots are allocated a block at a time, when a
// search first meets one of the block's: an index opened for one query
// (a search command) touches a few blocks, where whole tables, hundreds
// of kilobytes, were allocated and cleared for it and, for pointers,
// scanned by every collection while the index is open.

const slotBlockBits = 8

// slotBlock is a block of a slotTable's slots.
type slotBlock[T any] [1 << slotBlockBits]T

// slotTable is a table of slots of type T, its size given by its first
// use.
type slotTable[T any] struct {
	once   sync.Once
	blocks []atomic.Pointer[slotBlock[T]]
}

// slot returns slot i of a table of 1<<bits slots (bits at least
// slotBlockBits, the same at each call), allocating its block the first
// time.
func (t *slotTable[T]) slot(i uint32, bits int) *T {
	t.once.Do(func() { t.blocks = make([]atomic.Pointer[slotBlock[T]], 1<<(bits-slotBlockBits)) })
	bp := &t.blocks[i>>slotBlockBits]
	b := bp.Load()
	if b == nil {
		bp.CompareAndSwap(nil, new(slotBlock[T])) // searches may allocate it at once: the first kept
		b = bp.Load()
	}
	return &b[i&(1<<slotBlockBits-1)]
}
