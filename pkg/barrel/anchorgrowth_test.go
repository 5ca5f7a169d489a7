package barrel

import (
	"fmt"
	"slices"
	"testing"
)

// growthPages: a target page, eight pages linking to it as "alpha", and
// three more linking to it as "zebra", a word no page has.
func growthPages() map[string][]byte {
	pages := map[string][]byte{"http://t.test/": []byte(`<html><head><title>Target</title></head><body>the target page</body></html>`)}
	for i := range 8 {
		pages[fmt.Sprintf("http://p%d.test/", i)] = []byte(fmt.Sprintf(`<html><body>page %d <a href="http://t.test/">alpha</a></body></html>`, i))
	}
	for i := range 3 {
		pages[fmt.Sprintf("http://q%d.test/", i)] = []byte(fmt.Sprintf(`<html><body>other %d <a href="http://t.test/">zebra</a></body></html>`, i))
	}
	return pages
}

// finds reports whether the query finds the target page.
func finds(t *testing.T, dir, q string) bool {
	t.Helper()
	idx := open(t, dir)
	defer idx.Close()
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	r, err := idx.Search(q, SearchOptions{N: 10, NoSnippets: true})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(r.Results, func(x Result) bool { return x.URL == "http://t.test/" })
}

// A page with many anchors is re-indexed for new ones when their count
// passes a power of 1.25; one with few, or any page with AnchorGrowth
// negative, gets each new anchor at once. The index stays consistent
// (Verify counts every word's live documents against the kept document
// frequencies) and, once the page is re-indexed, answers as an index built
// in one go from the same pages.
func TestAnchorGrowth(t *testing.T) {
	pages := growthPages()
	body := func(u string) []byte { return pages[u] }
	first := []string{"http://t.test/"}
	for i := range 8 {
		first = append(first, fmt.Sprintf("http://p%d.test/", i))
	}
	q := func(i int) []string { return []string{fmt.Sprintf("http://q%d.test/", i)} }

	dir := t.TempDir()
	batchOf(t, dir, Options{}, first, body)
	if !finds(t, dir, "alpha") {
		t.Fatal("the first anchors are not indexed at once")
	}
	// 8 anchor records to 9: no power of 1.25 passed (1.25^9 = 7.45,
	// 1.25^10 = 9.31), the target waits.
	if st := batchOf(t, dir, Options{}, q(0), body); st.Waiting != 1 || st.Targets != 0 {
		t.Fatalf("one anchor more of eight: %d waiting, %d re-indexed, want 1 and 0", st.Waiting, st.Targets)
	}
	if finds(t, dir, "zebra") {
		t.Fatal("one anchor more of eight re-indexed the target")
	}
	// 9 to 10 passes 9.31: re-indexed, with both new anchors.
	if st := batchOf(t, dir, Options{}, q(1), body); st.Waiting != 0 || st.Targets != 1 {
		t.Fatalf("a quarter more: %d waiting, %d re-indexed, want 0 and 1", st.Waiting, st.Targets)
	}
	if !finds(t, dir, "zebra") {
		t.Fatal("a quarter more anchors did not re-index the target")
	}
	idx := open(t, dir)
	d, _, err := idx.Lookup("http://t.test/")
	if err != nil {
		t.Fatal(err)
	}
	if e, _, err := idx.doc(d); err != nil || e.Anchors != 10 {
		t.Fatalf("the target's entry holds %d anchors (%v), want 10", e.Anchors, err)
	}
	idx.Close()

	// Re-indexed, it answers as the index of the same pages built at once.
	one := t.TempDir()
	batchOf(t, one, Options{}, append(append(slices.Clone(first), q(0)...), q(1)...), body)
	queries := []string{"zebra", "alpha", "target", "alpha zebra", "page", "other"}
	opt := SearchOptions{N: 10, NoSnippets: true, Weights: &noProx}
	a, b := open(t, dir), open(t, one)
	defer a.Close()
	defer b.Close()
	if got, want := byURL(t, a, queries, opt), byURL(t, b, queries, opt); got != want {
		t.Errorf("re-indexed after waiting, the index answers\n%s\nbuilt at once\n%s", got, want)
	}

	// AnchorGrowth negative: every anchor at once.
	now := t.TempDir()
	batchOf(t, now, Options{AnchorGrowth: -1}, first, body)
	if st := batchOf(t, now, Options{AnchorGrowth: -1}, q(0), body); st.Waiting != 0 || st.Targets != 1 || !finds(t, now, "zebra") {
		t.Fatalf("AnchorGrowth -1: %d waiting, %d re-indexed, want 0 and 1, and the new anchor found", st.Waiting, st.Targets)
	}
}

// The counts of anchors at which a page is re-indexed for them.
func TestAnchorLevels(t *testing.T) {
	var at []int
	for n := 1; n <= 40; n++ {
		if anchorLevel(n-1, DefaultAnchorGrowth) != anchorLevel(n, DefaultAnchorGrowth) {
			at = append(at, n)
		}
	}
	if want := []int{1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 19, 23, 29, 36}; !slices.Equal(at, want) {
		t.Fatalf("re-indexed at %v anchors, want %v", at, want)
	}
	// A batch of several anchors passing one power or more.
	if anchorLevel(10, 0.25) == anchorLevel(20, 0.25) || anchorLevel(24, 0.25) != anchorLevel(28, 0.25) {
		t.Fatal("levels of 10, 20, 24 and 28 anchors")
	}
}
