package barrel

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

// pythonDocs is the Python documentation of Debian's python3.11-doc, a
// package the toolkit's tests depend on (scripts/debian-packages.txt).
const pythonDocs = "/usr/share/doc/python3.11/html"

// TestTitleQueries checks the quality target on real pages: the
// query made of a page's title returns that page first for at least 90% of
// the pages.
func TestTitleQueries(t *testing.T) {
	if _, err := os.Stat(pythonDocs); err != nil {
		t.Fatalf("%s missing (install python3.11-doc, see scripts/deps.sh): %v", pythonDocs, err)
	}
	dir := t.TempDir()
	files, err := HTMLFiles(pythonDocs, "http://docs.test/")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddHTMLFiles(context.Background(), files); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	idx, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if w := os.Getenv("BARREL_TUNE"); w != "" { // tuning aid: JSON of Weights fields
		if err := json.Unmarshal([]byte(w), &DefaultWeights); err != nil {
			t.Fatal(err)
		}
	}
	q := TitleQuality(idx)
	t.Logf("title queries: %d pages, %d first (%.1f%%), %d no title", q.Pages, q.First, 100*q.Ratio(), q.NoTitle)
	for _, m := range q.Misses[:min(len(q.Misses), 10)] {
		t.Logf("miss: %q -> %s", m.Title, m.Got)
	}
	if q.Ratio() < 0.9 {
		t.Errorf("title query puts the page first for %.1f%% of pages, want >= 90%%", 100*q.Ratio())
	}
}
