package crawlorder

import (
	"errors"
	"math"
	"sort"

	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
)

// Terms returns the lower-cased words of text, cut by barrel's tokenizer so
// that a page's words here are the words the index holds.
func Terms(text string) []string { return htmldoc.Words(text) }

// ErrEmptyTopic is returned for a topic without a single word.
var ErrEmptyTopic = errors.New("the topic has no words (give a text or example pages with letters or digits)")

// A Topic is what the topic orders measure closeness to: a bag of words
// from a text or from example pages. IDF comes from the pages seen so far
// (Observe), so closeness adapts to the crawl's own vocabulary.
type Topic struct {
	tf    map[string]float64
	df    map[string]int
	pages int
}

// NewTopic builds a topic from the words of texts (a query, or the text of
// example pages).
func NewTopic(texts ...string) (*Topic, error) {
	t := &Topic{tf: map[string]float64{}, df: map[string]int{}}
	for _, s := range texts {
		for _, w := range Terms(s) {
			t.tf[w]++
		}
	}
	if len(t.tf) == 0 {
		return nil, ErrEmptyTopic
	}
	return t, nil
}

// Observe counts a fetched page's words into the document frequencies.
func (t *Topic) Observe(terms []string) {
	seen := map[string]bool{}
	for _, w := range terms {
		if !seen[w] {
			seen[w] = true
			t.df[w]++
		}
	}
	t.pages++
}

// idf is smoothed so that it is positive and finite from the first page on.
func (t *Topic) idf(w string) float64 {
	return math.Log(float64(1+t.pages)/float64(1+t.df[w])) + 1
}

// Similarity is the cosine between the TF-IDF vectors of terms and the
// topic, in [0, 1]; 0 for no words.
func (t *Topic) Similarity(terms []string) float64 {
	if len(terms) == 0 {
		return 0
	}
	tf := map[string]float64{}
	for _, w := range terms {
		tf[w]++
	}
	// Sums in sorted word order: float addition depends on order, and a
	// crawl must be the same every run.
	var dot, nt, np float64
	for _, w := range sortedWords(tf) {
		c := tf[w]
		x := c * t.idf(w)
		np += x * x
		if q, ok := t.tf[w]; ok {
			dot += x * q * t.idf(w)
		}
	}
	for _, w := range t.Words() {
		y := t.tf[w] * t.idf(w)
		nt += y * y
	}
	if dot == 0 || np == 0 || nt == 0 {
		return 0
	}
	return clamp01(dot / math.Sqrt(np*nt))
}

// Words returns the topic's words, sorted.
func (t *Topic) Words() []string { return sortedWords(t.tf) }

func sortedWords(m map[string]float64) []string {
	ws := make([]string, 0, len(m))
	for w := range m {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	return ws
}

func clamp01(v float64) float64 {
	switch {
	case math.IsNaN(v) || v < 0:
		return 0
	case v > 1:
		return 1
	}
	return v
}
