package opic

import (
	"cmp"
	"container/heap"
	"slices"
)

// An Entry is a page in a ranking or a frontier over one or more states.
type Entry struct {
	URL        string
	Page       Page
	Importance float64
}

// Ranking returns the pages of states, most important first (ties by
// name), at most n of them (all if n <= 0). The states may be the shards
// of one crawl: each gives the pages of its own shard, and importance,
// (history + cash) / total, is over all of them.
func Ranking(states []*State, n int) []Entry {
	var all []Entry
	var sum float64
	for _, s := range states {
		for id := range uint32(s.Len()) {
			if !s.Owns(s.Name(id)) {
				continue
			}
			p := s.Page(id)
			all = append(all, Entry{URL: s.Name(id), Page: p})
			sum += p.History + p.Cash
		}
	}
	// Ranked by history + cash rather than by the quotient, which can
	// round two different pages to one value.
	top := best(all, n, func(e *Entry) float64 { return e.Page.History + e.Page.Cash })
	if sum > 0 {
		for i := range top {
			top[i].Importance = (top[i].Page.History + top[i].Page.Cash) / sum
		}
	}
	return top
}

// Frontier returns the pages of states (each its own shard's) that were
// never visited or were last visited at or before dueBefore (Unix
// seconds), most cash first (ties by name), at most n of them: greedy
// OPIC's next crawl.
func Frontier(states []*State, n int, dueBefore int64) []Entry {
	var due []Entry
	for _, s := range states {
		for id := range uint32(s.Len()) {
			if s.visits[id] != 0 && s.last[id] > dueBefore {
				continue
			}
			if !s.Owns(s.Name(id)) {
				continue
			}
			due = append(due, Entry{URL: s.Name(id), Page: s.Page(id)})
		}
	}
	return best(due, n, func(e *Entry) float64 { return e.Page.Cash })
}

// best returns the n entries with the largest key, largest first, ties by
// URL; all of them if n <= 0. A bounded heap keeps it O(len(all) log n).
func best(all []Entry, n int, key func(*Entry) float64) []Entry {
	less := func(a, b *Entry) int { // -1 if a ranks before b
		if c := cmp.Compare(key(b), key(a)); c != 0 {
			return c
		}
		return cmp.Compare(a.URL, b.URL)
	}
	byRank := func(a, b Entry) int { return less(&a, &b) }
	if n <= 0 || n >= len(all) {
		slices.SortFunc(all, byRank)
		return all
	}
	h := &worstFirst{less: less}
	for i := range all {
		if h.Len() < n {
			heap.Push(h, all[i])
		} else if less(&all[i], &h.e[0]) < 0 {
			h.e[0] = all[i]
			heap.Fix(h, 0)
		}
	}
	slices.SortFunc(h.e, byRank)
	return h.e
}

// worstFirst is a heap whose root is the lowest-ranked entry kept.
type worstFirst struct {
	e    []Entry
	less func(a, b *Entry) int
}

func (h *worstFirst) Len() int           { return len(h.e) }
func (h *worstFirst) Less(i, j int) bool { return h.less(&h.e[i], &h.e[j]) > 0 }
func (h *worstFirst) Swap(i, j int)      { h.e[i], h.e[j] = h.e[j], h.e[i] }
func (h *worstFirst) Push(x any)         { h.e = append(h.e, x.(Entry)) }
func (h *worstFirst) Pop() any {
	x := h.e[len(h.e)-1]
	h.e = h.e[:len(h.e)-1]
	return x
}
