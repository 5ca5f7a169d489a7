package recrawl

import (
	"math/bits"
	"slices"
)

// selectK reorders s so that s[k] is the element a sort by cmp would put
// there, every element before it sorts before it and every one after it
// after (cmp must be a strict total order: no two elements equal). It is
// quickselect, falling back to a sort when the partitions shrink slowly,
// and costs linear time where a sort would cost n log n: rank keeps only
// the best of each host's candidates and of the slot's.
func selectK[T any](s []T, k int, cmp func(a, b T) int) {
	if k < 0 || k >= len(s) {
		return
	}
	budget := 2 * bits.Len(uint(len(s)))
	lo, hi := 0, len(s) // the k-th lies in s[lo:hi]
	for hi-lo > 16 {
		if budget == 0 {
			slices.SortFunc(s[lo:hi], cmp)
			return
		}
		budget--
		// Median of three as the pivot, moved to s[lo].
		m := lo + (hi-lo)/2
		a, b, c := lo, m, hi-1
		if cmp(s[b], s[a]) < 0 {
			a, b = b, a
		}
		if cmp(s[c], s[b]) < 0 {
			b = c
			if cmp(s[b], s[a]) < 0 {
				b = a
			}
		}
		s[lo], s[b] = s[b], s[lo]
		p := s[lo]
		// Lomuto partition: s[lo+1:i] sorts before p.
		i := lo + 1
		for j := lo + 1; j < hi; j++ {
			if cmp(s[j], p) < 0 {
				s[i], s[j] = s[j], s[i]
				i++
			}
		}
		s[lo], s[i-1] = s[i-1], s[lo]
		switch pos := i - 1; {
		case k == pos:
			return
		case k < pos:
			hi = pos
		default:
			lo = pos + 1
		}
	}
	slices.SortFunc(s[lo:hi], cmp)
}
