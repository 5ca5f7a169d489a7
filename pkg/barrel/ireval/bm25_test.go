package ireval

import (
	"math"
	"slices"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
)

func TestBM25(t *testing.T) {
	m := NewBM25(analysis.Options{})
	m.Add("a", "Apples", []byte("apples and pears, apples again"))
	m.Add("b", "Pears", []byte("a pear tree with a long long long long description of pears"))
	m.Add("c", "Plums", []byte("plums only"))
	if got := m.Search("apple", 10); !slices.Equal(got, []string{"a"}) {
		t.Errorf("apple: %q", got)
	}
	// Both pages have pears; the one with three of them wins.
	if got := m.Search("pears", 10); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("pears: %q", got)
	}
	if got := m.Search("zeppelin", 10); len(got) != 0 {
		t.Errorf("zeppelin: %q", got)
	}
	// The score of a one-page term, by hand: tf 1 in "plums only" + title.
	N, df := 3.0, 1.0
	idf := math.Log(1 + (N-df+0.5)/(df+0.5))
	avg := float64(m.total) / N
	want := idf * 2 * 2.2 / (2 + 1.2*(1-0.75+0.75*3/avg))
	got := 0.0
	for _, p := range m.post["plum"] {
		tf := float64(p.tf)
		got += idf * tf * 2.2 / (tf + 1.2*(1-0.75+0.75*float64(m.lens[p.doc])/avg))
	}
	if math.Abs(got-want) > 1e-12 || m.lens[2] != 3 {
		t.Errorf("plum: %v, want %v (length %d)", got, want, m.lens[2])
	}
}
