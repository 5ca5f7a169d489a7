package barrel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

// TestSnippetPrefix (words Snowball leaves as they are, so that they are
// their own keys) checks that looking at a big page's start first gives
// the snippet a whole parse gives: query words near the start, only past
// the prefix, in a window straddling its end, all in the prefix but their
// window running past it, in no one window, partly absent, and absent.
func TestSnippetPrefix(t *testing.T) {
	words := make([]string, 12000)
	for i := range words {
		words[i] = fmt.Sprintf("filler%d", i%97)
	}
	words[10], words[15] = "alpha", "bravo"
	words[snippetPrefixWords-3], words[snippetPrefixWords+5] = "quartz", "zebra"
	words[7000], words[7003] = "kiwi", "lemon"
	words[snippetPrefixWords-15], words[snippetPrefixWords-10] = "mango", "papaya" // the window runs past the prefix
	var body strings.Builder
	for i := 0; i < len(words); i += 10 { // paragraphs: text nodes, as real pages have
		body.WriteString("<p>" + strings.Join(words[i:i+10], " ") + "</p>\n")
	}
	page := "<html><head><title>Big</title></head><body>" + body.String() + "</body></html>"
	dir := t.TempDir()
	build(t, dir, Options{}, map[string]string{"http://s.test/big.html": page})
	idx := open(t, dir)
	doc := uint32(0)
	for ; doc < uint32(idx.Docs()); doc++ {
		if u, _, err := idx.Info(doc); err == nil && u == "http://s.test/big.html" {
			break
		}
	}
	prefix := snippetPrefixWords
	defer func() { snippetPrefixWords, storedSnippets = prefix, true }()
	for _, q := range []string{"alpha bravo", "kiwi lemon", "quartz zebra", "mango papaya", "alpha lemon", "alpha nowhere", "nowhere"} {
		keys := strings.Fields(q)
		snippetPrefixWords = prefix
		got, err := idx.Snippet(doc, keys)
		if err != nil {
			t.Fatal(err)
		}
		snippetPrefixWords = 0
		want, err := idx.Snippet(doc, keys)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%q: with the prefix %q\nwhole page %q", q, got, want)
		}
		// Search's snippets stop at the words the body holds (a partial
		// match holds fewer than the query's): the same as a whole parse.
		// And the same as the stored text gives (kiwi and lemon lie past
		// hit.MaxPlainPos, found by their stored hashes).
		storedSnippets = false
		snippetPrefixWords = prefix
		gotR, err := idx.Search(q, SearchOptions{N: 1})
		if err != nil {
			t.Fatal(err)
		}
		snippetPrefixWords = 0
		wantR, err := idx.Search(q, SearchOptions{N: 1})
		if err != nil {
			t.Fatal(err)
		}
		storedSnippets = true
		textR, err := idx.Search(q, SearchOptions{N: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(gotR.Results) != len(wantR.Results) || len(gotR.Results) > 0 && gotR.Results[0].Snippet != wantR.Results[0].Snippet {
			t.Errorf("%q: search with the prefix %+v\nwhole page %+v", q, gotR.Results, wantR.Results)
		}
		if len(textR.Results) != len(wantR.Results) || len(textR.Results) > 0 && textR.Results[0].Snippet != wantR.Results[0].Snippet {
			t.Errorf("%q: search with the stored text %+v\nwhole page %+v", q, textR.Results, wantR.Results)
		}
		if q != "nowhere" && q != "alpha nowhere" && q != "alpha lemon" && !strings.Contains(got, "<b>"+keys[len(keys)-1]+"</b>") {
			t.Errorf("%q: snippet %q lacks its last word", q, got)
		}
	}
}

// TestSnippetFromText compares the snippets cut from the stored text with
// those of a parse of the stored page, over a synthetic site's pages and
// queries and pages written to catch the edges: identifiers, a word only
// in the title, text before the first word, a page of no words, a query
// word at the first hit position past hit.MaxPlainPos.
func TestSnippetFromText(t *testing.T) {
	dir := t.TempDir()
	site := synth.New(300, 2000, 3)
	buildSynth(t, dir, site, 300)
	long := strings.Repeat("filler ", 4093) + "edge one two three four five edge2"
	build(t, dir, Options{}, map[string]string{
		"http://e.test/ident.html": `<html><head><title>Sizes</title></head><body><p>Call PyObject_Size(o) -- or os.path.join(a, b) -- to size it up.</p></body></html>`,
		"http://e.test/title.html": `<html><head><title>Quokka</title></head><body><p>A page whose body never says the title's word.</p></body></html>`,
		"http://e.test/lead.html":  `<html><body>  ...  «(42)»  <p>Lead text   with   spaces, and marks!</p></body></html>`,
		"http://e.test/empty.html": `<html><head><title>Empty quokka</title></head><body><script>var x = 1</script></body></html>`,
		"http://e.test/long.html":  `<html><body><p>` + long + `</p></body></html>`,
	})
	idx := open(t, dir)
	if _, err := idx.Search("quokka", SearchOptions{N: 10, NoSnippets: true}); err != nil || idx.repo != nil || idx.text != nil {
		t.Fatalf("a search without snippets opened the repository or the text (%v)", err)
	}
	if err := idx.views(); err != nil || idx.text == nil {
		t.Fatalf("no text file (%v)", err)
	}
	defer func() { storedSnippets = true }()
	queries := append(site.Queries(300), "pyobject_size", "size path", "quokka", "lead marks", "edge", "edge edge2", "filler edge2")
	compared := 0
	for _, q := range queries {
		storedSnippets = true
		got := search(t, idx, q)
		storedSnippets = false
		want := search(t, idx, q)
		if len(got) != len(want) {
			t.Fatalf("%q: %d results, %d parsed", q, len(got), len(want))
		}
		for i := range got {
			if g, w := got[i].Snippet, want[i].Snippet; g != w {
				t.Errorf("%q: %s: snippet from the text\n%q\nparsed\n%q", q, got[i].URL, g, w)
			}
			compared++
		}
	}
	if compared < 1000 {
		t.Fatalf("only %d snippets compared", compared)
	}
	// The edges say what they should.
	for q, want := range map[string]string{
		"pyobject_size": "Call <b>PyObject</b>_<b>Size</b>(o)", // the whole and its parts
		"quokka":        "A page whose body never says",
		"lead marks":    "42)» <b>Lead</b> text with spaces, and <b>marks</b>",
		"edge edge2":    "<b>edge</b> one two three four five <b>edge2</b>",
	} {
		r, err := idx.Search(q, SearchOptions{N: 1})
		if err != nil || len(r.Results) == 0 {
			t.Fatalf("%q: %v %v", q, r, err)
		}
		if !strings.Contains(r.Results[0].Snippet, want) {
			t.Errorf("%q: snippet %q, want it to hold %q", q, r.Results[0].Snippet, want)
		}
	}
}

// TestFormat3Index opens an index written by format 3 (no stored text,
// testdata/format3), searches it with snippets made by parsing, and adds a
// batch to it: it becomes format 5 with its zlib repository kept, its old
// pages keep their snippets and the new pages' come from their stored text.
func TestFormat3Index(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	if err := os.CopyFS(dir, os.DirFS("testdata/format3")); err != nil {
		t.Fatal(err)
	}
	site := synth.New(40, 300, 7) // the pages testdata/format3 holds
	queries := site.Queries(40)
	idx, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.views(); err != nil {
		t.Fatal(err)
	}
	if m := idx.Manifest(); m.Format != formatNoText || idx.text != nil {
		t.Fatalf("format %d, text %v", m.Format, idx.text)
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, q := range queries {
		r, err := idx.Search(q, SearchOptions{N: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range r.Results {
			before[q+" "+x.URL] = x.Snippet
		}
	}
	idx.Close()
	if len(before) < 40 {
		t.Fatalf("only %d results", len(before))
	}
	build(t, dir, Options{}, map[string]string{"http://new.test/a.html": "<html><body><p>A new page of the upgraded index: " + strings.Join(queries[:5], " ") + "</p></body></html>"})
	idx = open(t, dir)
	m := idx.Manifest()
	if m.Format != formatNumber || m.TextFrom == 0 || m.Text == 0 || m.RepoCodec != CodecZlib {
		t.Fatalf("after a batch: format %d, text from %d, %d bytes of text, codec %q (want zlib kept)", m.Format, m.TextFrom, m.Text, m.RepoCodec)
	}
	if d, ok, err := idx.Lookup("http://new.test/a.html"); err != nil || !ok {
		t.Fatalf("the new page: %v %v", ok, err)
	} else if _, body, err := idx.Page(d); err != nil || !strings.Contains(string(body), "A new page") {
		t.Fatalf("the new page's stored copy: %v", err)
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	newFound := false
	for _, q := range queries {
		r, err := idx.Search(q, SearchOptions{N: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range r.Results {
			if x.URL == "http://new.test/a.html" {
				newFound = newFound || strings.Contains(x.Snippet, "<b>")
				continue
			}
			if w, ok := before[q+" "+x.URL]; ok && w != x.Snippet {
				t.Errorf("%q %s: snippet %q, before the upgrade %q", q, x.URL, x.Snippet, w)
			}
		}
	}
	if !newFound {
		t.Error("the new page's snippet marks no query word")
	}
}
