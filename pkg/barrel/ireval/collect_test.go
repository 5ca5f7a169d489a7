package ireval

import (
	"fmt"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel"
)

// TestCollectOrdersAsTheSearch: the candidates Collect keeps carry the
// coordination tier the search orders by (the share of the query's idf
// a page holds), so MRR re-ranks them as the search ranks them. The
// page holding the rare word and one common word is first for the
// search, ahead of the pages holding the three common words; counting
// the words instead would put it behind them.
func TestCollectOrdersAsTheSearch(t *testing.T) {
	dir := t.TempDir()
	b, err := barrel.NewBuilder(dir, barrel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		page := fmt.Sprintf(`<html><head><title>Tool %d</title></head><body><p>The command line of tool %d takes an option.</p></body></html>`, i, i)
		if err := b.Add(fmt.Sprintf("http://c.test/%d.html", i), []byte(page)); err != nil {
			t.Fatal(err)
		}
		page = fmt.Sprintf(`<html><head><title>Page %d</title></head><body><p>Nothing here %d.</p></body></html>`, i, i)
		if err := b.Add(fmt.Sprintf("http://c.test/other%d.html", i), []byte(page)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Add("http://c.test/configure.html", []byte(`<html><head><title>Configure</title></head><body>
<p>The openssl option names the OpenSSL directory.</p></body></html>`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	idx, err := barrel.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	qs := []Query{{Text: "command line option openssl", Relevant: []string{"configure.html"}}}
	hand := barrel.HandModel(&barrel.DefaultWeights)
	searched, err := Evaluate(qs, 10, func(q string) ([]string, error) {
		r, err := idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true, Literal: true})
		if err != nil {
			return nil, err
		}
		var keys []string
		for _, res := range r.Results {
			keys = append(keys, PathKey(res.URL))
		}
		return keys, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if searched.MRR != 1 {
		t.Fatalf("the search puts configure.html at MRR %v, want first", searched.MRR)
	}
	cs, err := Collect(idx, qs, PathKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || len(cs[0].Keys) < 2 {
		t.Fatalf("collected %+v", cs)
	}
	if got := MRR(cs, &hand); got != searched.MRR {
		t.Errorf("re-ranking the candidates gives MRR@10 %v, the search %v", got, searched.MRR)
	}
}
