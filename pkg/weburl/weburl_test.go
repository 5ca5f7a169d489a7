package weburl

import (
	"errors"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/internal/urltestdata"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
)

type standardCase = urltestdata.Case

// loadStandard returns the http(s) cases of the URL Standard's test data:
// those whose result is an http(s) URL, and the failures of an http(s)
// base or input.
func loadStandard(t testing.TB) []standardCase {
	t.Helper()
	all, err := urltestdata.Load()
	if err != nil {
		t.Fatal(err)
	}
	var out []standardCase
	for _, c := range all {
		if isHTTPCase(c) {
			out = append(out, c)
		}
	}
	return out
}

func isHTTPCase(c standardCase) bool {
	if !c.Failure {
		return strings.HasPrefix(c.Href, "http://") || strings.HasPrefix(c.Href, "https://")
	}
	if c.Base != nil {
		return strings.HasPrefix(*c.Base, "http:") || strings.HasPrefix(*c.Base, "https:")
	}
	in := strings.ToLower(strings.TrimLeft(c.Input, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
	return strings.HasPrefix(in, "http:") || strings.HasPrefix(in, "https:")
}

// parseCase runs a case as a crawler meets it: an absolute seed, or an
// href on the page at base.
func parseCase(c standardCase) (*URL, error) {
	if c.Base == nil {
		return Parse(c.Input)
	}
	b, err := Parse(*c.Base)
	if err != nil {
		return nil, err
	}
	return b.Resolve(c.Input)
}

// Every http(s) case of the URL Standard's test data passes: the URL
// serialised (href without fragment) and each component as the Standard
// gives it, or a failure where it expects one.
func TestURLStandard(t *testing.T) {
	cases := loadStandard(t)
	pass := 0
	for _, c := range cases {
		u, err := parseCase(c)
		switch {
		case c.Failure && err == nil:
			t.Errorf("%q on %v: got %q, the Standard says failure", c.Input, base(c), u)
		case c.Failure && !errors.Is(err, ErrInvalid):
			t.Errorf("%q on %v: error %v is not ErrInvalid", c.Input, base(c), err)
		case c.Failure:
			pass++
		case err != nil:
			t.Errorf("%q on %v: %v, the Standard gives %q", c.Input, base(c), err, c.Href)
		default:
			want := strings.TrimSuffix(c.Href, c.Hash)
			if c.Hash == "" {
				want = strings.TrimSuffix(want, "#")
			}
			got := []string{u.String(), u.Host, u.Hostname, u.Port, u.Path, search(u)}
			exp := []string{want, c.Host, c.Hostname, c.Port, c.Pathname, c.Search}
			ok := true
			for i := range got {
				if got[i] != exp[i] {
					ok = false
					t.Errorf("%q on %v: component %d = %q, the Standard gives %q", c.Input, base(c), i, got[i], exp[i])
				}
			}
			if ok {
				pass++
			}
		}
	}
	t.Logf("%d of %d http(s) cases of urltestdata.json pass", pass, len(cases))
	if len(cases) < 400 {
		t.Fatalf("only %d http(s) cases read", len(cases))
	}
}

func search(u *URL) string {
	if u.RawQuery == "" {
		return ""
	}
	return "?" + u.RawQuery
}

func base(c standardCase) string {
	if c.Base == nil {
		return "no base"
	}
	return *c.Base
}

// The cases the crawler met on real pages, each as a browser resolves it.
func TestResolveLinks(t *testing.T) {
	page, err := Parse("http://site.test/dir/page.html?x=1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ref, want string }{
		{`\path\x`, "http://site.test/path/x"},
		{`/ok\sub`, "http://site.test/ok/sub"},
		{"///other.test/x", "http://other.test/x"},
		{"/a\tb\nc", "http://site.test/abc"},
		{"/100%", "http://site.test/100%"},
		{"/q?b=2&a=1", "http://site.test/q?b=2&a=1"},
		{"http://0x7f.1/", "http://127.0.0.1/"},
		{"http://256/", "http://0.0.1.0/"},
		{"http://site.test:000080/", "http://site.test/"},
		{"http://ẞ.com/", "http://xn--zca.com/"},
		{"//[0:0::1]:8080/", "http://[::1]:8080/"},
		{"?y=2", "http://site.test/dir/page.html?y=2"},
		{"", "http://site.test/dir/page.html?x=1"},
		{"a/../b|c^d", "http://site.test/dir/b|c%5Ed"},
	} {
		u, err := page.Resolve(c.ref)
		if err != nil || u.String() != c.want {
			t.Errorf("%q: got %v, %v; want %q", c.ref, u, err, c.want)
		}
	}
	for _, ref := range []string{"mailto:a@b.test", "javascript:void(0)", "ftp://x.test/"} {
		if _, err := page.Resolve(ref); !errors.Is(err, ErrScheme) {
			t.Errorf("%q: %v, want ErrScheme", ref, err)
		}
	}
	for _, ref := range []string{"http://a b/", "http://[::1/", "http://x.test:99999/"} {
		if _, err := page.Resolve(ref); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", ref, err)
		}
	}
}

// A relative reference's query is encoded in the page's encoding, its
// path in UTF-8, as browsers do.
func TestResolveInEncoding(t *testing.T) {
	page, _ := Parse("http://site.test/")
	for _, c := range []struct {
		ref, want string
		enc       interface{}
	}{
		{"/поиск?q=привет", "http://site.test/%D0%BF%D0%BE%D0%B8%D1%81%D0%BA?q=%EF%F0%E8%E2%E5%F2", charmap.Windows1251},
		{"/search?q=привет", "http://site.test/search?q=%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82", nil},
		{"/s?q=日本", "http://site.test/s?q=%93%FA%96{", japanese.ShiftJIS},
		{"/s?q=€", "http://site.test/s?q=%26%238364%3B", charmap.KOI8R},
		{"/s?q=a b'c", "http://site.test/s?q=a%20b%27c", charmap.Windows1251},
	} {
		var u *URL
		var err error
		switch e := c.enc.(type) {
		case *charmap.Charmap:
			u, err = page.ResolveIn(c.ref, e)
		case nil:
			u, err = page.ResolveIn(c.ref, nil)
		default:
			u, err = page.ResolveIn(c.ref, japanese.ShiftJIS)
		}
		if err != nil || u.String() != c.want {
			t.Errorf("%q: got %v, %v; want %q", c.ref, u, err, c.want)
		}
	}
}

func TestNetURL(t *testing.T) {
	u, err := Parse("http://user:p%40ss@site.test:8080/a|b/100%?q=1&r={x}")
	if err != nil {
		t.Fatal(err)
	}
	n := u.NetURL()
	if got, want := n.RequestURI(), "/a|b/100%?q=1&r={x}"; got != want {
		t.Errorf("RequestURI = %q, want %q", got, want)
	}
	if n.Host != "site.test:8080" || n.User.Username() != "user" {
		t.Errorf("host %q user %v", n.Host, n.User)
	}
	if pw, _ := n.User.Password(); pw != "p@ss" {
		t.Errorf("password %q", pw)
	}
	back, err := FromNetURL(n)
	if err != nil || back.String() != u.String() {
		t.Errorf("FromNetURL: %v, %v; want %q", back, err, u)
	}
}

func BenchmarkParse(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Parse("http://Lenta.RU:80/news/2013/09/30/./mid/?utm_source=rss&from=rss&id=%7e1")
	}
}
