package recrawl

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSelectK checks quickselect against a full sort: on inputs with many
// equal values (ties broken by index, as rank does), sorted, reversed and
// random, s[k] is the sorted k-th and s[:k] holds exactly the k before it.
func TestSelectK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		n := rng.IntN(300) + 1
		if trial%100 == 0 {
			n = 20000
		}
		vals := make([]float64, n)
		levels := rng.IntN(n) + 1
		for i := range vals {
			vals[i] = float64(rng.IntN(levels))
		}
		byValue := func(a, b int32) int {
			if c := cmp.Compare(vals[b], vals[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		}
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(i)
		}
		switch trial % 3 {
		case 1:
			slices.SortFunc(s, byValue)
		case 2:
			slices.SortFunc(s, func(a, b int32) int { return byValue(b, a) })
		default:
			rng.Shuffle(n, func(i, j int) { s[i], s[j] = s[j], s[i] })
		}
		want := slices.Clone(s)
		slices.SortFunc(want, byValue)
		k := rng.IntN(n)
		selectK(s, k, byValue)
		if s[k] != want[k] {
			t.Fatalf("n %d k %d: s[k] = %d, sorted %d", n, k, s[k], want[k])
		}
		head := slices.Clone(s[:k])
		slices.SortFunc(head, byValue)
		if !slices.Equal(head, want[:k]) {
			t.Fatalf("n %d k %d: the first k are not the k best", n, k)
		}
		for _, x := range s[k+1:] {
			if byValue(x, s[k]) < 0 {
				t.Fatalf("n %d k %d: %d after the k-th sorts before it", n, k, x)
			}
		}
	}
}
