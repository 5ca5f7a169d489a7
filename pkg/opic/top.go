package opic

import (
	"cmp"
	"container/heap"
	"slices"
)

// top returns the n ids with the largest key, largest first, ties by name;
// all of them if n <= 0. A bounded heap keeps it O(len(ids) log n).
func (s *State) top(ids []uint32, n int, key func(uint32) float64) []uint32 {
	less := func(a, b uint32) int { // -1 if a ranks before b
		if c := cmp.Compare(key(b), key(a)); c != 0 {
			return c
		}
		return cmp.Compare(s.names.Name(a), s.names.Name(b))
	}
	if n <= 0 || n >= len(ids) {
		slices.SortFunc(ids, less)
		return ids
	}
	h := &worstFirst{less: less}
	for _, id := range ids {
		if h.Len() < n {
			heap.Push(h, id)
		} else if less(id, h.ids[0]) < 0 {
			h.ids[0] = id
			heap.Fix(h, 0)
		}
	}
	slices.SortFunc(h.ids, less)
	return h.ids
}

// worstFirst is a heap whose root is the lowest-ranked id kept.
type worstFirst struct {
	ids  []uint32
	less func(a, b uint32) int
}

func (h *worstFirst) Len() int           { return len(h.ids) }
func (h *worstFirst) Less(i, j int) bool { return h.less(h.ids[i], h.ids[j]) > 0 }
func (h *worstFirst) Swap(i, j int)      { h.ids[i], h.ids[j] = h.ids[j], h.ids[i] }
func (h *worstFirst) Push(x any)         { h.ids = append(h.ids, x.(uint32)) }
func (h *worstFirst) Pop() any {
	x := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	return x
}
