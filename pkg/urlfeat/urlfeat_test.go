package urlfeat

import (
	"bufio"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func features(t *testing.T, u string) []string {
	t.Helper()
	var e Extractor
	f, err := e.Extract(u)
	if err != nil {
		t.Fatalf("Extract(%q): %v", u, err)
	}
	return f.Strings()
}

func TestEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{"http://lenta.ru/news/2013/09/30/mid", []string{"segments:5",
			"segment_name_0:news", "segment_len_0:4",
			"segment_name_1:2013", "segment_[0-9]_1:1", "segment_len_1:4",
			"segment_name_2:09", "segment_[0-9]_2:1", "segment_len_2:2",
			"segment_name_3:30", "segment_[0-9]_3:1", "segment_len_3:2",
			"segment_name_4:mid", "segment_len_4:3"}},
		// Trailing slash, empty segments and a port change nothing.
		{"http://x.org:8080//a//b/", []string{"segments:2", "segment_name_0:a", "segment_len_0:1", "segment_name_1:b", "segment_len_1:1"}},
		// The root and an empty path have no segments.
		{"http://x.org", []string{"segments:0"}},
		{"http://x.org/?", []string{"segments:0"}},
		// Fragments are ignored, also a '?' inside them.
		{"http://x.org/a#frag?x=1/b", []string{"segments:1", "segment_name_0:a", "segment_len_0:1"}},
		// Percent-decoding as bytes, both cases; the length counts bytes (Я is 2).
		{"http://x.org/%D0%AF%d0%af", []string{"segments:1", "segment_name_0:ЯЯ", "segment_len_0:4"}},
		// Invalid escapes are kept as written.
		{"http://x.org/a%zz%4/%", []string{"segments:2", "segment_name_0:a%zz%4", "segment_len_0:6", "segment_name_1:%", "segment_len_1:1"}},
		// Bytes that are not UTF-8 (cp1251) count one each and print as %XX.
		{"http://x.org/%CC%FD", []string{"segments:1", "segment_name_0:%CC%FD", "segment_len_0:2"}},
		// An encoded slash is decoded before splitting into segments.
		{"http://x.org/AC%2FDC", []string{"segments:2", "segment_name_0:AC", "segment_len_0:2", "segment_name_1:DC", "segment_len_1:2"}},
		// Parameters: no value, empty value, repeated (once), '+' and escapes.
		{"http://x.org/?b&a=&c=1&c=1&c=2&d=x+y%26z&=v&&", []string{"segments:0",
			"param_name:b", "param_name:a", "param_name:c", "param_name:d",
			"param:b", "param:a=", "param:c=1", "param:c=2", "param:d=x y&z"}},
		// Shapes: digits, letters-digits-letters, extension, both.
		{"http://x.org/123/abc45de/file.HTML/x2y.php/a1b2c/7.jpg/.htaccess/end.", []string{"segments:8",
			"segment_name_0:123", "segment_[0-9]_0:1", "segment_len_0:3",
			"segment_name_1:abc45de", "segment_substr[0-9]_1:1", "segment_len_1:7",
			"segment_name_2:file.HTML", "segment_ext_2:HTML", "segment_len_2:9",
			"segment_name_3:x2y.php", "segment_substr[0-9]_3:1", "segment_ext_3:php", "segment_ext_substr[0-9]_3:php", "segment_len_3:7",
			"segment_name_4:a1b2c", "segment_len_4:5",
			"segment_name_5:7.jpg", "segment_ext_5:jpg", "segment_len_5:5",
			"segment_name_6:.htaccess", "segment_ext_6:htaccess", "segment_len_6:9",
			"segment_name_7:end.", "segment_len_7:4"}},
		// Control characters decoded from escapes print as %XX.
		{"http://x.org/a%09b", []string{"segments:1", "segment_name_0:a%09b", "segment_len_0:3"}},
		// Scheme and host case do not matter; userinfo is not part of the path.
		{"HTTPS://user:pw@Example.COM/P", []string{"segments:1", "segment_name_0:P", "segment_len_0:1"}},
	} {
		if got := features(t, tc.url); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.url, got, tc.want)
		}
	}
}

func TestHost(t *testing.T) {
	for u, want := range map[string]string{
		"http://Example.COM:80/":        "example.com",
		"https://example.com:443/":      "example.com",
		"https://example.com:8443/":     "example.com:8443",
		"http://пример.рф/путь":         "xn--e1afmkfd.xn--p1ai",
		"http://xn--e1afmkfd.xn--p1ai/": "xn--e1afmkfd.xn--p1ai",
		"http://[::1]:8080/":            "[::1]:8080",
		"http://u@h.org./":              "h.org",
	} {
		var e Extractor
		if _, err := e.Extract(u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if e.Host() != want {
			t.Errorf("host of %s = %q, want %q", u, e.Host(), want)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, u := range []string{"", "relative/path", "/abs/path", "ftp://x.org/f", "mailto:a@b", "http:/x", "http://", "http://:80/", "http://x/\x01", "javascript:alert(1)", "//x.org/a"} {
		var e Extractor
		if f, err := e.Extract(u); err == nil {
			t.Errorf("Extract(%q) = %q, want an error", u, f.Strings())
		}
	}
}

// reference computes the features the slow, obvious way: regular
// expressions straight from the definition. The fast extractor must agree
// with it on every URL of the bundled data.
var (
	escapeRE = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)
	substrRE = regexp.MustCompile(`^[^\d]+\d+[^\d]+$`)
	digitsRE = regexp.MustCompile(`^[0-9]+$`)
	extRE    = regexp.MustCompile(`\.([^.]+)$`)
)

func refDecode(s string) string {
	return escapeRE.ReplaceAllStringFunc(s, func(m string) string {
		v, _ := strconv.ParseUint(m[1:], 16, 8)
		return string([]byte{byte(v)})
	})
}

func refClean(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r < 0x20 || r == 0x7f {
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:]))
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func reference(u string) []string {
	u, _, _ = strings.Cut(u, "#")
	rest := u[strings.Index(u, "//")+2:]
	path := ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		path = rest[i:]
	}
	path, query, _ := strings.Cut(path, "?")
	var segs []string
	for _, s := range strings.Split(refDecode(path), "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	out := []string{"segments:" + strconv.Itoa(len(segs))}
	seen := map[string]bool{}
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	var pairs []string
	for _, p := range strings.Split(query, "&") {
		if p != "" && p[0] != '=' {
			pairs = append(pairs, p)
		}
	}
	plus := func(s string) string { return refClean(refDecode(strings.ReplaceAll(s, "+", " "))) }
	for _, p := range pairs {
		name, _, _ := strings.Cut(p, "=")
		add("param_name:" + plus(name))
	}
	for _, p := range pairs {
		add("param:" + plus(p))
	}
	for i, s := range segs {
		n := strconv.Itoa(i)
		add("segment_name_" + n + ":" + refClean(s))
		if digitsRE.MatchString(s) {
			add("segment_[0-9]_" + n + ":1")
		}
		sub := substrRE.MatchString(s)
		if sub {
			add("segment_substr[0-9]_" + n + ":1")
		}
		if m := extRE.FindStringSubmatch(s); m != nil {
			add("segment_ext_" + n + ":" + refClean(m[1]))
			if sub {
				add("segment_ext_substr[0-9]_" + n + ":" + refClean(m[1]))
			}
		}
		add("segment_len_" + n + ":" + strconv.Itoa(len(s)))
	}
	return out
}

func bundledURLs(t testing.TB) []string {
	var urls []string
	for _, name := range []string{"lenta.examined", "lenta.general", "wikipedia.examined", "wikipedia.general"} {
		f, err := os.Open("../../testdata/sekitei/urls." + name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			urls = append(urls, sc.Text())
		}
		f.Close()
	}
	return urls
}

func TestAgreesWithRegexpReferenceOnBundledData(t *testing.T) {
	urls := bundledURLs(t)
	if len(urls) < 40000 {
		t.Fatalf("only %d bundled URLs", len(urls))
	}
	// Hand-made URLs exercise what the real ones lack.
	urls = append(urls, "http://a.b/x%2Fy%zz/1a2.b%C3%A9/?q=%FF&r+s=t+u&q=%FF&z", "http://a.b//%41/%e2%82%ac.%31")
	var e Extractor
	for _, u := range urls {
		f, err := e.Extract(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if got, want := f.Strings(), reference(u); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %q\nwant %q", u, got, want)
		}
	}
}

func TestCounterAndSample(t *testing.T) {
	c := NewCounter()
	var e Extractor
	for _, u := range []string{"http://x/a/1", "http://x/a/2", "http://x/b?k=1&k=1"} {
		f, _ := e.Extract(u)
		c.Add(f)
	}
	top := c.Top(2)
	want := []Count{{"segment_len_0:1", 3}, {"segment_[0-9]_1:1", 2}, {"segment_len_1:1", 2}, {"segment_name_0:a", 2}, {"segments:2", 2}}
	if !reflect.DeepEqual(top, want) {
		t.Fatalf("Top(2) = %v\nwant %v", top, want)
	}
	// k=1 repeated in one URL counts once.
	if got := c.Top(1); got[len(got)-1].N != 1 {
		t.Fatalf("Top(1) = %v", got)
	}
	// More than alpha*n: 0.5*4 = 2, so count 3 only.
	if got := c.AboveAlpha(0.5, 4); len(got) != 1 || got[0].N != 3 {
		t.Fatalf("AboveAlpha = %v", got)
	}

	lf, err := ReadLineFile("../../testdata/sekitei/urls.lenta.examined")
	if err != nil {
		t.Fatal(err)
	}
	idx := lf.Sample(1000, rand.New(rand.NewPCG(1, 2)))
	seen := map[int]bool{}
	for _, i := range idx {
		if i < 0 || i >= lf.Len() || seen[i] {
			t.Fatalf("bad or repeated index %d", i)
		}
		seen[i] = true
	}
	if len(idx) != 1000 || lf.Len() != 2000 {
		t.Fatalf("sampled %d of %d", len(idx), lf.Len())
	}
	if all := lf.Sample(5000, rand.New(rand.NewPCG(1, 2))); len(all) != 2000 {
		t.Fatalf("oversized sample has %d", len(all))
	}
}

func TestLineFileEdges(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string][]string{
		"":              {""},
		"a":             {"a"},
		"a\n":           {"a"},
		"a\r\nb":        {"a", "b"},
		"\xEF\xBB\xBFa": {"a"},
		"a\n\nb\n":      {"a", "", "b"},
	} {
		p := dir + "/f"
		os.WriteFile(p, []byte(content), 0o644)
		lf, err := ReadLineFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := 0; i < lf.Len(); i++ {
			got = append(got, lf.Line(i))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: lines %q, want %q", content, got, want)
		}
	}
}

func FuzzExtract(f *testing.F) {
	for _, u := range []string{"http://lenta.ru/news/2013/09/30/mid/", "https://x/a%zz/%C3%A9.jpg?a=1&b&&=c#f", "http://[::1]:80/%", "ftp://x", "http://x/\xff", "http://x?a+b=%2"} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u string) {
		var e Extractor
		feats, err := e.Extract(u)
		if err != nil {
			return
		}
		if feats.Len() == 0 || !strings.HasPrefix(string(feats.At(0)), "segments:") {
			t.Fatalf("%q: no segments feature", u)
		}
		seen := map[string]bool{}
		for _, s := range feats.Strings() {
			if !utf8.ValidString(s) || strings.ContainsAny(s, "\t\n\r") {
				t.Fatalf("%q: feature %q not clean", u, s)
			}
			if seen[s] {
				t.Fatalf("%q: feature %q repeated", u, s)
			}
			seen[s] = true
		}
		if want := reference(u); !reflect.DeepEqual(feats.Strings(), want) {
			t.Fatalf("%q:\n got %q\nwant %q", u, feats.Strings(), want)
		}
	})
}

// The whole-URL features come only with WholeURL, after the homework's, and
// do not depend on the order of the query parameters.
func TestWholeURLFeatures(t *testing.T) {
	var plain, whole Extractor
	whole.WholeURL = true
	for _, c := range []struct {
		url  string
		want []string
	}{
		{"http://a.test/x?b=2&a=1&b=3", []string{"url_len:27", "params:2", "param_names:a,b"}},
		{"http://a.test/x?a=1&b=2", []string{"url_len:23", "params:2", "param_names:a,b"}},
		{"http://a.test/news/", []string{"url_len:19", "params:0", "query_empty:1"}},
		{"http://a.test/?", []string{"url_len:15", "params:0", "query_empty:1"}},
	} {
		pf, err := plain.Extract(c.url)
		if err != nil {
			t.Fatal(err)
		}
		base := pf.Strings()
		wf, err := whole.Extract(c.url)
		if err != nil {
			t.Fatal(err)
		}
		got := wf.Strings()
		if !reflect.DeepEqual(got[:len(base)], base) || !reflect.DeepEqual(got[len(base):], c.want) {
			t.Errorf("%s: %q, want %q then %q", c.url, got, base, c.want)
		}
		for _, f := range base {
			if strings.HasPrefix(f, "url_len:") || strings.HasPrefix(f, "params:") || strings.HasPrefix(f, "query_empty:") {
				t.Errorf("%s: whole-URL feature %q without WholeURL", c.url, f)
			}
		}
	}
}
