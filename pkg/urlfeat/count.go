package urlfeat

import (
	"sort"
)

// A Counter counts in how many URLs each feature occurs. Its memory grows
// with the number of distinct features only.
type Counter struct {
	counts map[string]*int64
	urls   int64
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter { return &Counter{counts: make(map[string]*int64)} }

// Add counts the features of one URL.
func (c *Counter) Add(f Features) {
	c.urls++
	for i := 0; i < f.Len(); i++ {
		b := f.At(i)
		if p, ok := c.counts[string(b)]; ok { // no allocation on lookup
			*p++
			continue
		}
		n := int64(1)
		c.counts[string(b)] = &n
	}
}

// AddStrings counts the features of one URL given as strings (as a
// record's "features" field carries them). The list must hold each feature
// once, as Extract's does.
func (c *Counter) AddStrings(fs []string) {
	c.urls++
	for _, f := range fs {
		if p, ok := c.counts[f]; ok {
			*p++
			continue
		}
		n := int64(1)
		c.counts[f] = &n
	}
}

// URLs returns the number of URLs counted.
func (c *Counter) URLs() int64 { return c.urls }

// Count is a feature and the number of URLs it occurs in.
type Count struct {
	Feature string
	N       int64
}

// Top returns the features occurring in at least min URLs, most frequent
// first, ties broken by feature name so the order is deterministic.
func (c *Counter) Top(min int64) []Count {
	out := make([]Count, 0, 64)
	for f, p := range c.counts {
		if *p >= min {
			out = append(out, Count{f, *p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Feature < out[j].Feature
	})
	return out
}

// AboveAlpha returns the features seen more than alpha*n times, the
// homework's rule (alpha 0.1 and n 1000: more than 100 times).
func (c *Counter) AboveAlpha(alpha float64, n int64) []Count {
	limit := alpha * float64(n)
	min := int64(limit) + 1 // strictly more than limit
	if min < 1 {
		min = 1
	}
	return c.Top(min)
}
