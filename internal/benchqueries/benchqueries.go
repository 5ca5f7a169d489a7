// Package benchqueries samples a query set for latency benchmarks from the
// pages of an index: what people type is a page's title (a known-item
// search) or a few words of its text, so a fifth of the queries are
// titles and the rest one to three consecutive words of a page's text,
// lower-cased. The sample is a pure function of the pages and the seed.
package benchqueries

import (
	"math/rand/v2"
	"strings"
	"unicode"
)

// Page is one page's title and visible text.
type Page struct {
	Title, Text string
}

// Sample returns n queries drawn from pages with the seed.
func Sample(pages []Page, n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0x62617272656c))
	words := make([][]string, len(pages))
	for i, p := range pages {
		for _, f := range strings.Fields(p.Text) {
			w := strings.ToLower(strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
			words[i] = append(words[i], w) // "" keeps the gap a dropped token leaves
		}
	}
	var out []string
	for tries := 0; len(out) < n && tries < 100*n; tries++ {
		i := rng.IntN(len(pages))
		switch k := rng.IntN(20); {
		case k < 4:
			if t := strings.Join(strings.Fields(pages[i].Title), " "); t != "" {
				out = append(out, t)
			}
		default:
			size := 1
			if k >= 12 {
				size = 2
			}
			if k >= 17 {
				size = 3
			}
			if len(words[i]) < size {
				continue
			}
			start := rng.IntN(len(words[i]) - size + 1)
			run := words[i][start : start+size]
			ok := true
			for _, w := range run {
				ok = ok && w != ""
			}
			if ok {
				out = append(out, strings.Join(run, " "))
			}
		}
	}
	return out
}
