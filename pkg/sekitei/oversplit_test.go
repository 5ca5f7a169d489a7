package sekitei

import (
	"fmt"
	"testing"
)

// The lecture warns that too fine segments disperse the QLinks: 400 news
// URLs of twelve months, visited alike, are one segment, as a person would
// write it; shop URLs whose parameters come in either order get regexes
// that do not depend on the order, and ?cat=books (all visited) is told
// from ?cat=films (none visited).
func TestNoOversplit(t *testing.T) {
	var ex []Example
	for i := 0; i < 400; i++ {
		ex = append(ex, Example{URL: fmt.Sprintf("http://n.test/news/2026/%d/%d.html", 1+i%12, 1000+i*7), Good: i%5 == 0})
	}
	for i := 0; i < 60; i++ {
		cat := []string{"books", "films"}[i%2]
		ex = append(ex, Example{URL: fmt.Sprintf("http://n.test/shop/?cat=%s&id=%d", cat, i), Good: cat == "books"})
		ex = append(ex, Example{URL: fmt.Sprintf("http://n.test/shop/?id=%d&cat=%s", 100+i, cat), Good: cat == "books"})
	}
	site, err := Build("n.test", ex, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + site.String())
	if len(site.Segments) != 4 {
		t.Fatalf("%d segments, want news, books, films and the rest", len(site.Segments))
	}
	if s := site.Segments[0]; s.Regex != `^/news/2026/[0-9]+/[0-9]+\.html$` || s.URLs != 400 {
		t.Errorf("news: %q with %d URLs", s.Regex, s.URLs)
	}
	for _, c := range []struct {
		url  string
		good int
	}{
		{"http://n.test/shop/?cat=books&id=7", 60},
		{"http://n.test/shop/?id=7&cat=books", 60},
		{"http://n.test/shop/?id=7&cat=films", 0},
	} {
		s, err := site.Assign(c.url)
		if err != nil || s == nil || s.URLs != 60 || s.Good != c.good {
			t.Errorf("%s: segment %+v %v, want one of 60 URLs with %d good", c.url, s, err, c.good)
		}
	}
	// Unvisited alike, the two categories are one segment.
	for i := range ex {
		ex[i].Good = false
	}
	site, _ = Build("n.test", ex, Options{})
	if len(site.Segments) != 3 {
		t.Errorf("without QLinks: %d segments, want news, shop and the rest:\n%s", len(site.Segments), site)
	}
}
