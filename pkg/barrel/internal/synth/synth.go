// Package synth generates a reproducible synthetic web site for benchmarks:
// pages with a title, headings, bold words, paragraphs and links, their
// words drawn from a Zipf-distributed vocabulary as in real text.
package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Site is a synthetic site of N pages.
type Site struct {
	N     int
	Seed  uint64
	vocab []string
}

// New returns a site of n pages with a vocabulary of v words.
func New(n, v int, seed uint64) *Site {
	rng := rand.New(rand.NewPCG(seed, 1))
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "qua", "bri", "ston", "der", "ph", "al", "en", "or", "ix", "um", "est"}
	seen := map[string]bool{}
	s := &Site{N: n, Seed: seed}
	for len(s.vocab) < v {
		var b strings.Builder
		for k := 1 + rng.IntN(4); k > 0; k-- {
			b.WriteString(syl[rng.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			s.vocab = append(s.vocab, w)
		}
	}
	return s
}

// URL returns the URL of page i.
func (s *Site) URL(i int) string { return fmt.Sprintf("http://site%d.test/p/%d.html", i%50, i) }

type gen struct {
	rng  *rand.Rand
	zipf *rand.Zipf
	s    *Site
}

func (s *Site) gen(i int, salt uint64) *gen {
	rng := rand.New(rand.NewPCG(s.Seed^uint64(i)*0x9E3779B97F4A7C15, salt))
	return &gen{rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, uint64(len(s.vocab)-1)), s: s}
}

func (g *gen) word() string { return g.s.vocab[g.zipf.Uint64()] }

func (g *gen) words(n int, capFirst bool) string {
	var b strings.Builder
	for k := range n {
		if k > 0 {
			b.WriteByte(' ')
		}
		w := g.word()
		if k == 0 && capFirst {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	return b.String()
}

// Page returns the HTML of page i.
func (s *Site) Page(i int) []byte {
	g := s.gen(i, 2)
	var b strings.Builder
	title := g.words(3+g.rng.IntN(5), true)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n", title)
	fmt.Fprintf(&b, "<meta name=\"description\" content=\"%s\"></head>\n<body>\n<h1>%s</h1>\n", g.words(8, true), title)
	for sec := 1 + g.rng.IntN(3); sec > 0; sec-- {
		fmt.Fprintf(&b, "<h2>%s</h2>\n", g.words(2+g.rng.IntN(4), true))
		for p := 1 + g.rng.IntN(3); p > 0; p-- {
			b.WriteString("<p>")
			for sent := 2 + g.rng.IntN(4); sent > 0; sent-- {
				b.WriteString(g.words(6+g.rng.IntN(14), true))
				if g.rng.IntN(4) == 0 {
					fmt.Fprintf(&b, " <b>%s</b>", g.words(1+g.rng.IntN(2), false))
				}
				if g.rng.IntN(3) == 0 {
					j := g.rng.IntN(s.N)
					if g.rng.IntN(2) == 0 { // links favour low pages: a skewed graph
						j = int(float64(s.N) * g.rng.Float64() * g.rng.Float64() * g.rng.Float64())
					}
					fmt.Fprintf(&b, " <a href=\"%s\">%s</a>", s.URL(j), g.words(1+g.rng.IntN(3), false))
				}
				b.WriteString(". ")
			}
			b.WriteString("</p>\n")
		}
	}
	b.WriteString("<ul class=\"nav\">")
	for k := 0; k < 5; k++ {
		j := (i + 1 + k*7919) % s.N
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>", s.URL(j), g.words(2, true))
	}
	b.WriteString("</ul>\n</body></html>\n")
	return []byte(b.String())
}

// Queries returns n queries of 1 to 3 words drawn as users type them: words
// of the same Zipf vocabulary, so most are common and some rare.
func (s *Site) Queries(n int) []string {
	g := s.gen(-1, 3)
	out := make([]string, n)
	for i := range out {
		out[i] = g.words(1+g.rng.IntN(3), false)
	}
	return out
}
