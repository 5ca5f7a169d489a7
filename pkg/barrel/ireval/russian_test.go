package ireval

import (
	"slices"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
)

// Stemming must lift recall on the Russian set, and the set is the same
// for the same seed.
func TestRussianSet(t *testing.T) {
	pages, queries := RussianSet(1, 6)
	if len(pages) != 180 || len(queries) != 30 {
		t.Fatalf("%d pages, %d queries", len(pages), len(queries))
	}
	p2, _ := RussianSet(1, 6)
	if !slices.Equal(pages, p2) {
		t.Error("the set differs for the same seed")
	}
	if !strings.Contains(pages[0].HTML(), "Москв") {
		t.Errorf("first page: %s", pages[0].HTML())
	}
	run := func(opt analysis.Options) Metrics {
		m := NewBM25(opt)
		for _, p := range pages {
			m.Add(p.Path, p.Title, []byte(p.Body))
		}
		met, err := Evaluate(queries, 10, func(q string) ([]string, error) { return m.Search(q, 10), nil })
		if err != nil {
			t.Fatal(err)
		}
		return met
	}
	stem, plain := run(analysis.Options{}), run(analysis.Options{NoStem: true})
	if stem.Recall < 0.9 || plain.Recall > 0.5 || stem.NDCG <= plain.NDCG+0.2 {
		t.Errorf("with stemming %+v, without %+v", stem, plain)
	}
}
