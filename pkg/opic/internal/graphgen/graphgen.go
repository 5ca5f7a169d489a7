// Package graphgen generates directed power-law graphs for the tests and
// benchmarks of opic: in- and out-degrees follow the Chung-Lu model with the
// exponents measured on the web (about 2.1 in, 2.7 out), page ids are
// shuffled so that popular pages are scattered in memory as they would be in
// a crawl, and the same seed gives the same graph.
package graphgen

import (
	"math"
	"math/rand/v2"
	"slices"
)

// PowerLaw returns m edges (src[k] -> dst[k]) on n pages. Self-loops and
// duplicates are not removed: they are part of what opic must cope with.
func PowerLaw(n, m int, seed uint64) (src, dst []uint32) {
	rng := rand.New(rand.NewPCG(seed, 0x0b1c))
	in := cumulative(n, 1/(2.1-1))
	out := cumulative(n, 1/(2.7-1))
	permIn := rng.Perm(n)
	permOut := rng.Perm(n)
	src = make([]uint32, m)
	dst = make([]uint32, m)
	for k := range m {
		src[k] = uint32(permOut[pick(out, rng.Float64())])
		dst[k] = uint32(permIn[pick(in, rng.Float64())])
	}
	return src, dst
}

// cumulative returns the normalised cumulative weights (i+10)^-alpha.
func cumulative(n int, alpha float64) []float64 {
	c := make([]float64, n)
	var sum float64
	for i := range c {
		sum += math.Pow(float64(i+10), -alpha)
		c[i] = sum
	}
	for i := range c {
		c[i] /= sum
	}
	return c
}

func pick(c []float64, u float64) int {
	i, _ := slices.BinarySearch(c, u)
	return min(i, len(c)-1)
}
