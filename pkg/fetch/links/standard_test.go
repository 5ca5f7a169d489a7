package links

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/weburl"
)

// urlCase is one entry of the URL Standard's urltestdata.json.
type urlCase struct {
	Input   string  `json:"input"`
	Base    *string `json:"base"`
	Href    string  `json:"href"`
	Hash    string  `json:"hash"`
	Failure bool    `json:"failure"`
}

// loadURLCases reads the web-platform-tests URL data (testdata/conformance,
// with its licence): the cases with a base.
func loadURLCases(t *testing.T) []urlCase {
	t.Helper()
	b, err := os.ReadFile("../../../testdata/conformance/urltestdata.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var out []urlCase
	for _, r := range raw {
		if len(r) > 0 && r[0] == '"' {
			continue // a comment
		}
		var c urlCase
		if err := json.Unmarshal(r, &c); err != nil {
			t.Fatal(err)
		}
		if c.Base != nil {
			out = append(out, c)
		}
	}
	return out
}

// linkExceptions are the cases where a link in HTML legitimately differs
// from the URL parser's answer for the same string, with the reason.
var linkExceptions = map[string]string{
	" on http://example.org/foo/bar":           sameDoc,
	"  \t on http://example.org/foo/bar":       sameDoc,
	"# on http://example.org/foo/bar":          sameDoc,
	"#/ on http://example.org/foo/bar":         sameDoc,
	"#\\ on http://example.org/foo/bar":        sameDoc,
	"#;? on http://example.org/foo/bar":        sameDoc,
	"#β on http://example.org/foo/bar":         sameDoc,
	" on http://user:pass@example.org:21/smth": sameDoc,
	"#link on https://example.org/##link":      sameDoc,
}

// sameDoc: an empty or fragment-only href on a page without <base> is the
// page itself, not an outgoing link.
const sameDoc = "a reference to the page itself is no outgoing link"

// Every case of the URL Standard's test data whose base is an http(s) page
// (cases without a base or on about:blank name no page a link can be on)
// and whose result is an http(s) URL or a failure, written as
// <a href="INPUT"> on the page at the base, gives the Standard's href
// without fragment, or no link for a failure.
func TestLinksURLStandard(t *testing.T) {
	esc := strings.NewReplacer("&", "&amp;", `"`, "&quot;")
	pass, run := 0, 0
	for _, c := range loadURLCases(t) {
		if _, err := weburl.Parse(*c.Base); err != nil {
			continue // not an http(s) page
		}
		if !c.Failure && !strings.HasPrefix(c.Href, "http://") && !strings.HasPrefix(c.Href, "https://") {
			continue // not a link a crawler follows
		}
		run++
		var want []string
		if !c.Failure {
			w := strings.TrimSuffix(c.Href, c.Hash)
			want = []string{strings.TrimSuffix(w, "#")}
		}
		p := Extract([]byte(`<a href="`+esc.Replace(c.Input)+`">`), *c.Base, Options{})
		ok := len(p.Links) == len(want) && (len(want) == 0 || p.Links[0] == want[0])
		reason, listed := linkExceptions[c.Input+" on "+*c.Base]
		switch {
		case ok && listed:
			t.Errorf("%q on %s passes but is listed as an exception (%s)", c.Input, *c.Base, reason)
		case ok:
			pass++
		case !listed:
			t.Errorf("%q on %s: links %q, want %q", c.Input, *c.Base, p.Links, want)
		}
	}
	t.Logf("%d of %d http(s) cases of urltestdata.json pass through a link; %d listed exceptions", pass, run, len(linkExceptions))
	if run < 150 {
		t.Fatalf("only %d cases run", run)
	}
}
