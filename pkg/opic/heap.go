package opic

// cashHeap is an indexed 4-ary max-heap of page ids keyed by cash (in the
// offset form of State.cash: a uniform shift of all keys keeps the order).
// Keys are kept next to the ids so that a comparison touches one cache line;
// pos maps an id to its slot so that a page's key can be raised in place.
// A 4-ary heap is shallower than a binary one and its children share a line.
type cashHeap struct {
	items []heapItem
	pos   []uint32
}

type heapItem struct {
	key float64
	id  uint32
}

func (h *cashHeap) init(keys []float64) {
	h.items = make([]heapItem, len(keys))
	h.pos = make([]uint32, len(keys))
	for i, k := range keys {
		h.items[i] = heapItem{k, uint32(i)}
		h.pos[i] = uint32(i)
	}
	for i := len(h.items)/4 + 1; i >= 0; i-- {
		if i < len(h.items) {
			h.down(i)
		}
	}
}

// push adds id with key; id must be the next new id.
func (h *cashHeap) push(id uint32, key float64) {
	h.items = append(h.items, heapItem{key, id})
	h.pos = append(h.pos, uint32(len(h.items)-1))
	h.up(len(h.items) - 1)
}

func (h *cashHeap) top() uint32 { return h.items[0].id }

// raise sets the key of id to key, which must not be lower than before.
func (h *cashHeap) raise(id uint32, key float64) {
	i := int(h.pos[id])
	h.items[i].key = key
	h.up(i)
}

// lower sets the key of id to key, which must not be higher than before.
func (h *cashHeap) lower(id uint32, key float64) {
	i := int(h.pos[id])
	h.items[i].key = key
	h.down(i)
}

func (h *cashHeap) up(i int) {
	it := h.items[i]
	for i > 0 {
		p := (i - 1) >> 2
		if h.items[p].key >= it.key {
			break
		}
		h.items[i] = h.items[p]
		h.pos[h.items[i].id] = uint32(i)
		i = p
	}
	h.items[i] = it
	h.pos[it.id] = uint32(i)
}

func (h *cashHeap) down(i int) {
	n := len(h.items)
	it := h.items[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		best := c
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if h.items[j].key > h.items[best].key {
				best = j
			}
		}
		if h.items[best].key <= it.key {
			break
		}
		h.items[i] = h.items[best]
		h.pos[h.items[i].id] = uint32(i)
		i = best
	}
	h.items[i] = it
	h.pos[it.id] = uint32(i)
}

// shift adds d to every key; the order does not change.
func (h *cashHeap) shift(d float64) {
	for i := range h.items {
		h.items[i].key += d
	}
}
