package benchqueries

import (
	"slices"
	"strings"
	"testing"
)

func TestSample(t *testing.T) {
	pages := []Page{
		{"json — JSON encoder", "The json module encodes, and decodes JSON text."},
		{"Growing roses", "Roses need sun; prune (roses) in spring."},
		{"", "!!! ..."},
	}
	a := Sample(pages, 300, 7)
	if len(a) != 300 {
		t.Fatalf("%d queries, want 300", len(a))
	}
	if !slices.Equal(a, Sample(pages, 300, 7)) || slices.Equal(a, Sample(pages, 300, 8)) {
		t.Error("the sample is not a function of the seed")
	}
	titles, sizes := 0, map[int]int{}
	texts := strings.ToLower(pages[0].Text + " " + pages[1].Text)
	for _, q := range a {
		if q == pages[0].Title || q == pages[1].Title {
			titles++
			continue
		}
		if strings.ContainsAny(q, ",;()!.") || q != strings.ToLower(q) {
			t.Errorf("query %q keeps punctuation or capitals", q)
		}
		for _, w := range strings.Fields(q) {
			if !strings.Contains(texts, w) {
				t.Errorf("query %q: %q is in no page", q, w)
			}
		}
		sizes[len(strings.Fields(q))]++
	}
	// A fifth titles, the rest 1 to 3 words (2/5, 1/4 and 3/20 of all).
	if titles < 40 || titles > 80 || sizes[1] < 90 || sizes[2] < 50 || sizes[3] < 25 || len(sizes) != 3 {
		t.Errorf("%d titles, word counts %v", titles, sizes)
	}
}
