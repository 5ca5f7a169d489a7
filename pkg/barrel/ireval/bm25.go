package ireval

import (
	"math"
	"slices"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
)

// BM25 is a plain BM25 ranker (Robertson and Zaragoza, "The Probabilistic
// Relevance Framework: BM25 and Beyond", 2009) over the title and body
// text of pages, analysed as barrel analyses them: the baseline a
// ranking is compared with. It holds everything in memory.
type BM25 struct {
	K1, B float64 // 1.2 and 0.75 by New
	an    *analysis.Analyzer
	keys  []string
	lens  []int
	post  map[string][]posting
	total int
}

type posting struct {
	doc int32
	tf  int32
}

// NewBM25 returns an empty ranker with k1 = 1.2, b = 0.75.
func NewBM25(opt analysis.Options) *BM25 {
	return &BM25{K1: 1.2, B: 0.75, an: analysis.New(opt), post: map[string][]posting{}}
}

// Add indexes a page under key: its title and body are one field.
func (m *BM25) Add(key, title string, body []byte) {
	doc := int32(len(m.keys))
	m.keys = append(m.keys, key)
	tf := map[string]int32{}
	n := 0
	count := func(t analysis.Token) {
		tf[string(t.Term)]++
		if !t.Whole {
			n++
		}
	}
	m.an.Tokens([]byte(title), count)
	m.an.Tokens(body, count)
	for t, c := range tf {
		m.post[t] = append(m.post[t], posting{doc, c})
	}
	m.lens = append(m.lens, n)
	m.total += n
}

// Len is the number of pages.
func (m *BM25) Len() int { return len(m.keys) }

// Search returns the keys of the best n pages for query, best first (ties
// by the order pages were added).
func (m *BM25) Search(query string, n int) []string {
	N := float64(len(m.keys))
	if N == 0 {
		return nil
	}
	avg := float64(m.total) / N
	scores := map[int32]float64{}
	seen := map[string]bool{}
	m.an.Tokens([]byte(query), func(t analysis.Token) {
		term := string(t.Term)
		if seen[term] {
			return
		}
		seen[term] = true
		list := m.post[term]
		df := float64(len(list))
		idf := math.Log(1 + (N-df+0.5)/(df+0.5))
		for _, p := range list {
			tf := float64(p.tf)
			norm := m.K1 * (1 - m.B + m.B*float64(m.lens[p.doc])/avg)
			scores[p.doc] += idf * tf * (m.K1 + 1) / (tf + norm)
		}
	})
	docs := make([]int32, 0, len(scores))
	for d := range scores {
		docs = append(docs, d)
	}
	slices.SortFunc(docs, func(a, b int32) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return int(a - b)
	})
	out := make([]string, 0, min(n, len(docs)))
	for _, d := range docs[:min(n, len(docs))] {
		out = append(out, m.keys[d])
	}
	return out
}
