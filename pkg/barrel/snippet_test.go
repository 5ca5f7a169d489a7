package barrel

import (
	"fmt"
	"strings"
	"testing"
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
	defer func() { snippetPrefixWords = prefix }()
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
		if len(gotR.Results) != len(wantR.Results) || len(gotR.Results) > 0 && gotR.Results[0].Snippet != wantR.Results[0].Snippet {
			t.Errorf("%q: search with the prefix %+v\nwhole page %+v", q, gotR.Results, wantR.Results)
		}
		if q != "nowhere" && q != "alpha nowhere" && q != "alpha lemon" && !strings.Contains(got, "<b>"+keys[len(keys)-1]+"</b>") {
			t.Errorf("%q: snippet %q lacks its last word", q, got)
		}
	}
}
