package barrel

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
)

var ruPages = map[string]string{
	"http://ru.test/1.html": `<html><head><title>Новости</title></head><body><p>Вчера в Москве прошёл дождь.</p></body></html>`,
	"http://ru.test/2.html": `<html><head><title>Праздник</title></head><body><p>Дети нарядили ёлку; ёлка стоит в зале.</p></body></html>`,
	"http://ru.test/3.html": `<html><head><title>API</title></head><body><p>Call <code>PyObject_Size()</code> or <code>os.path.join</code> in the loop.</p></body></html>`,
	"http://ru.test/4.html": `<html><head><title>Sizes</title></head><body><p>The size of an object and the path to join.</p></body></html>`,
}

func urlsOf(rs []Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.URL)
	}
	slices.Sort(out)
	return out
}

// The index and the query are analysed alike: forms of a word meet, ё
// meets е, identifiers match whole and by parts, and a query of stop words
// only still searches them.
func TestAnalysedSearch(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, Options{}, ruPages)
	idx := open(t, dir)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"Москва", []string{"http://ru.test/1.html"}},
		{"москву", []string{"http://ru.test/1.html"}},
		{"елка", []string{"http://ru.test/2.html"}},
		{"ЁЛКИ", []string{"http://ru.test/2.html"}},
		{"the", []string{"http://ru.test/3.html", "http://ru.test/4.html"}},
	} {
		if got := urlsOf(search(t, idx, tc.q)); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.q, got, tc.want)
		}
	}
	// An identifier finds its page first, then pages with some of its parts.
	for _, q := range []string{"pyobject_size", "os.path.join", "PyObject_Size()"} {
		if got := resultURLs(t, idx, q, 10); len(got) == 0 || got[0] != "http://ru.test/3.html" {
			t.Errorf("%q: %q", q, got)
		}
	}
	// A part finds the identifier's page too, and the plain page.
	if got := urlsOf(search(t, idx, "size")); !slices.Equal(got, []string{"http://ru.test/3.html", "http://ru.test/4.html"}) {
		t.Errorf("size: %q", got)
	}
	// The snippet marks the word as written.
	r, err := idx.Search("москва", SearchOptions{N: 1})
	if err != nil || len(r.Results) != 1 || !strings.Contains(r.Results[0].Snippet, "<b>Москве</b>") {
		t.Errorf("snippet: %+v %v", r, err)
	}
}

// An index built with another analysis (or none recorded: one from before
// stemming) is refused with the way out; rebuild converts it; a build
// with another analysis onto an index is refused.
func TestAnalysisRecorded(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, Options{}, ruPages)
	p := filepath.Join(dir, manifestName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	id := analysis.ID(analysis.Options{})
	if !strings.Contains(string(data), `"analysis": "`+id+`"`) {
		t.Fatalf("manifest does not record the analysis %s", id)
	}
	for _, was := range []string{"", "lowercase/0"} {
		old := strings.Replace(string(data), `"analysis": "`+id+`"`, `"analysis": "`+was+`"`, 1)
		if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, try := range []func() error{
			func() error { _, err := Open(dir); return err },
			func() error { _, err := NewBuilder(dir, Options{}); return err },
		} {
			err := try()
			if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "rebuild") || !strings.Contains(err.Error(), id) {
				t.Errorf("index of analysis %q: error %v", was, err)
			}
		}
	}
	if _, err := Rebuild(t.Context(), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := urlsOf(search(t, open(t, dir), "Москва")); !slices.Equal(got, []string{"http://ru.test/1.html"}) {
		t.Errorf("rebuilt index: Москва finds %q", got)
	}
	_, err = NewBuilder(dir, Options{Analysis: analysis.Options{NoStem: true}})
	if err == nil || !strings.Contains(err.Error(), "nostem") {
		t.Errorf("a build without stemming onto a stemmed index: %v", err)
	}
	// An index built without stemming is searched without stemming.
	plain := t.TempDir()
	build(t, plain, Options{Analysis: analysis.Options{NoStem: true}}, ruPages)
	idx := open(t, plain)
	if got := search(t, idx, "Москва"); len(got) != 0 {
		t.Errorf("unstemmed index: Москва finds %q", urlsOf(got))
	}
	if got := urlsOf(search(t, idx, "Москве")); !slices.Equal(got, []string{"http://ru.test/1.html"}) {
		t.Errorf("unstemmed index: Москве finds %q", got)
	}
}
