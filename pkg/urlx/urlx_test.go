package urlx

import (
	"errors"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for raw, want := range map[string]Parts{
		"http://a.b/c/d?e=f#g":         {Scheme: "http", Host: "a.b", Path: "/c/d", RawQuery: "e=f", HasQuery: true},
		"HTTPS://u:p@A.B:8443":         {Scheme: "https", Host: "A.B:8443"},
		"http://a.b?x":                 {Scheme: "http", Host: "a.b", RawQuery: "x", HasQuery: true},
		"http://a.b#f?not-query":       {Scheme: "http", Host: "a.b"},
		"http://[::1]:80/p":            {Scheme: "http", Host: "[::1]:80", Path: "/p"},
		"http://a.b/with space/%zz?q=": {Scheme: "http", Host: "a.b", Path: "/with space/%zz", RawQuery: "q=", HasQuery: true},
	} {
		got, err := Split(raw)
		if err != nil || got != want {
			t.Errorf("Split(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for raw, want := range map[string]error{
		"":              ErrEmpty,
		"a/b":           ErrRelative,
		"/a":            ErrRelative,
		"//a.b/c":       ErrRelative,
		"ftp://a.b/":    ErrScheme,
		"mailto:x@y":    ErrScheme,
		"http:a.b":      ErrNoHost,
		"http://":       ErrNoHost,
		"http://:80/":   ErrNoHost,
		"http://u@/":    ErrNoHost,
		"http://a.b/\n": ErrControl,
	} {
		if _, err := Split(raw); !errors.Is(err, want) {
			t.Errorf("Split(%q) error %v, want %v", raw, err, want)
		}
	}
}

// Split agrees with net/url on the parts of well-formed URLs.
func TestSplitAgreesWithNetURL(t *testing.T) {
	for _, raw := range []string{
		"http://example.com/a/b.html?x=1&y=%20#top", "https://EXAMPLE.com:8443/", "http://a.b", "http://a.b/?",
		"http://user@a.b/p;params?q", "http://a.b/%D0%AF/?%41=%42",
	} {
		p, err := Split(raw)
		if err != nil {
			t.Fatal(raw, err)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(raw, err)
		}
		if p.Host != u.Host || p.Path != u.EscapedPath() && p.Path != u.RawPath || p.RawQuery != u.RawQuery || p.HasQuery != (u.ForceQuery || u.RawQuery != "") {
			t.Errorf("%s: %+v vs net/url host %q path %q query %q", raw, p, u.Host, u.EscapedPath(), u.RawQuery)
		}
	}
}

func TestNormalizeHost(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"http", "Example.COM"}:       "example.com",
		{"http", "example.com:80"}:    "example.com",
		{"https", "example.com:443"}:  "example.com",
		{"http", "example.com:443"}:   "example.com:443",
		{"http", "Bücher.DE"}:         "xn--bcher-kva.de",
		{"http", "xn--bcher-kva.de."}: "xn--bcher-kva.de",
		{"http", "%d0%bf%d1%80%d0%b8%d0%bc%d0%b5%d1%80.%D1%80%D1%84:8080"}: "xn--e1afmkfd.xn--p1ai:8080",
		{"http", "пример.рф"}:                                              "xn--e1afmkfd.xn--p1ai",
		{"http", "[::1]:80"}:                                               "[::1]",
		{"http", "[::1]:8080"}:                                             "[::1]:8080",
		{"http", "127.0.0.1:8080"}:                                         "127.0.0.1:8080",
		{"http", "lenta.ru"}:                                               "lenta.ru",
		{"http", "ru.wiki-pedia.org."}:                                     "ru.wiki-pedia.org",
		{"http", "a_b.org"}:                                                "a_b.org",
	} {
		if got := NormalizeHost(in[0], in[1]); got != want {
			t.Errorf("NormalizeHost(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

// HasControl, eight bytes at a time, agrees with the byte by byte test for
// every byte value at every place of strings up to 19 bytes, among bytes
// just above and below the limits (borrows must not leak).
func TestHasControl(t *testing.T) {
	slow := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < ' ' || s[i] == 0x7f {
				return true
			}
		}
		return false
	}
	for _, fill := range []byte{' ', '!', 'a', 0x7e, 0x80, 0xff} {
		for n := 0; n < 20; n++ {
			for at := 0; at < n; at++ {
				for c := 0; c < 256; c++ {
					b := make([]byte, n)
					for i := range b {
						b[i] = fill
					}
					b[at] = byte(c)
					if got, want := HasControl(string(b)), slow(string(b)); got != want {
						t.Fatalf("HasControl(%q) = %v, want %v", b, got, want)
					}
				}
			}
		}
	}
}

// SplitPrintable gives Split's parts and errors for every printable ASCII
// URL, generated from pieces of every part of a URL.
func TestSplitPrintableMatchesSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	pieces := []string{"http", "HTTPS", "ftp", ":", "//", "/", "a.b", "X.Y:80", "u:p@", "@", "?", "#", "&", "=", "%41", " ", "x", "[::1]"}
	for i := 0; i < 100_000; i++ {
		var b strings.Builder
		for n := rng.IntN(10); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		u := b.String()
		p, err := Split(u)
		q, qerr := SplitPrintable(u)
		if p != q || err != qerr {
			t.Fatalf("%q: Split %+v, %v; SplitPrintable %+v, %v", u, p, err, q, qerr)
		}
	}
}
