package userquery_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/userquery"
)

func TestCheck(t *testing.T) {
	many := strings.Repeat("garden ", 10000)
	for _, tc := range []struct {
		name, raw, text string
		terms           int
		problem         string // a substring of the one problem; "" for none
	}{
		{"plain", "json encoder", "json encoder", 2, ""},
		{"spaces kept inside, trimmed outside", "  json   encoder ", "json   encoder", 2, ""},
		{"identifier counts its parts", "os.path.join", "os.path.join", 3, ""},
		{"cyrillic", "Москва ёлка", "Москва ёлка", 2, ""},
		{"empty", "", "", 0, "empty query"},
		{"blank", " \t ", "", 0, "empty query"},
		{"punctuation", "?! -- ...", "?! -- ...", 0, "only punctuation"},
		{"10,000 words", many, strings.TrimSpace(strings.Repeat("garden ", userquery.MaxTerms)), userquery.MaxTerms,
			"10000 terms, clipped to the first 32"},
		{"one long term", strings.Repeat("a", 5000), strings.Repeat("a", userquery.MaxBytes), 1, "5000 bytes, clipped to 1024"},
		{"invalid UTF-8", "json \xff\xfe encoder", "json \uFFFD encoder", 2, "invalid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := userquery.Check(tc.raw)
			if q.Text != tc.text || q.Terms != tc.terms {
				t.Errorf("Check(%.40q) = %.60q with %d terms, want %.60q with %d", tc.raw, q.Text, q.Terms, tc.text, tc.terms)
			}
			switch {
			case tc.problem == "" && !q.OK():
				t.Errorf("problems %q, want none", q.Problems)
			case tc.problem != "" && (len(q.Problems) != 1 || !strings.Contains(q.Problems[0], tc.problem)):
				t.Errorf("problems %q, want one with %q", q.Problems, tc.problem)
			}
		})
	}
}

// A clipped multi-byte text is cut at a character boundary.
func TestCheckClipsAtCharacter(t *testing.T) {
	q := userquery.Check(strings.Repeat("ё", 1000))
	if !utf8.ValidString(q.Text) || len(q.Text) > userquery.MaxBytes || len(q.Text) < userquery.MaxBytes-1 {
		t.Fatalf("clipped to %d bytes, valid %v", len(q.Text), utf8.ValidString(q.Text))
	}
}

// testIndex builds a small index of pages about gardens and json.
func testIndex(t testing.TB) *barrel.Index {
	dir := t.TempDir()
	b, err := barrel.NewBuilder(dir, barrel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{
		"http://docs.test/json.html":  "<title>json encoder and decoder</title><p>The json module encodes the data of a program.</p>",
		"http://docs.test/roses.html": "<title>Growing roses</title><p>Roses in a rock garden: gravel and moss, and the roses of Москва.</p>",
		"http://docs.test/moss.html":  "<title>Moss</title><p>Moss grows in the garden between stones.</p>",
	}
	for _, u := range []string{"http://docs.test/json.html", "http://docs.test/roses.html", "http://docs.test/moss.html"} {
		if err := b.Add(u, []byte("<html><head>"+pages[u][:strings.Index(pages[u], "<p>")]+"</head><body>"+pages[u][strings.Index(pages[u], "<p>"):]+"</body></html>")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	idx, err := barrel.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	return idx
}

// FuzzSearch runs any query line through Check and Search: no panic, no
// error, no more results than asked, and a checked query within the
// bounds. The seeds are the bad queries a batch must survive.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{"garden", "json encoder", "", " ", "the of and a", "?!.,;:--", "\xff\xfe\xfd",
		"garden \xc3\x28 roses", strings.Repeat("garden moss ", 5000), strings.Repeat("x", 70000),
		"Москва", "os.path.join", "\x00\x01", "<b>garden</b>", "\"garden\" OR -moss"} {
		f.Add(s)
	}
	idx := testIndex(f)
	f.Fuzz(func(t *testing.T, raw string) {
		q := userquery.Check(raw)
		if q.Terms > userquery.MaxTerms || len(q.Text) > userquery.MaxBytes || !utf8.ValidString(q.Text) {
			t.Fatalf("Check(%.60q) = %.60q: %d terms, %d bytes", raw, q.Text, q.Terms, len(q.Text))
		}
		if q.Terms == 0 && q.OK() {
			t.Fatalf("Check(%.60q): no terms and no problem", raw)
		}
		hung := time.AfterFunc(5*time.Second, func() { panic(fmt.Sprintf("Search(%q) hung", q.Text)) })
		resp, err := idx.Search(q.Text, barrel.SearchOptions{N: 2})
		hung.Stop()
		var qe *barrel.QueryError
		if errors.As(err, &qe) {
			return // malformed query syntax: an error to show, not a failure
		}
		if err != nil {
			t.Fatalf("Search(%.60q): %v", q.Text, err)
		}
		if len(resp.Results) > 2 {
			t.Fatalf("Search(%.60q): %d results for N=2", q.Text, len(resp.Results))
		}
		for _, r := range resp.Results {
			if !strings.HasPrefix(r.URL, "http://docs.test/") {
				t.Fatalf("Search(%.60q): result %s", q.Text, fmt.Sprint(r.URL))
			}
		}
	})
}

// The seeds' answers: the good ones find their page, the bad ones are
// answered empty or clipped, never refused.
func TestSeedAnswers(t *testing.T) {
	idx := testIndex(t)
	for raw, want := range map[string]string{
		"json encoder":                        "http://docs.test/json.html",
		"garden \xc3\x28 roses":               "http://docs.test/roses.html",
		strings.Repeat("gravel roses ", 5000): "http://docs.test/roses.html",
		"?!.,;:--":                            "",
		"":                                    "",
	} {
		q := userquery.Check(raw)
		resp, err := idx.Search(q.Text, barrel.SearchOptions{N: 1, NoSnippets: true})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(resp.Results) > 0 {
			got = resp.Results[0].URL
		}
		if got != want {
			t.Errorf("%.40q: first %q, want %q", raw, got, want)
		}
	}
}
