package opic

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkTreePop is the greedy policy's fixed cost: take the page with
// most cash and lower its key, over pages whose top moves about at random.
func BenchmarkTreePop(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		keys := make([]float64, n)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range keys {
			keys[i] = rng.Float64()
		}
		t := newMaxTree(keys)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				i := t.top()
				keys[i] = 0
				t.lowered(i)
				if keys[t.top()] < 0.01 {
					for i := range keys {
						keys[i] = rng.Float64()
					}
					t.build()
				}
			}
		})
	}
}
