package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShellOnExamplePages applies the rule of --render auto to the pages of
// the JavaScript test site and to real documentation pages.
func TestShellOnExamplePages(t *testing.T) {
	site := filepath.Join("..", "..", "testdata", "jssite")
	for name, want := range map[string]bool{
		"index.html": true, "a.html": true, "c.html": true, "e.html": true, "f.html": true,
		"static1.html": false, "static2.html": false,
	} {
		page, err := os.ReadFile(filepath.Join(site, name))
		if err != nil {
			t.Fatal(err)
		}
		if got, why := Shell(page); got != want {
			t.Errorf("%s: Shell = %v (%s), want %v", name, got, why, want)
		}
	}
	// The Python documentation (Debian's python3.11-doc): static pages,
	// scripts included; none is a shell, search.html included (a noscript
	// asking for JavaScript, 104 words, but 16 links).
	docs, _ := filepath.Glob("/usr/share/doc/python3.11/html/*/*.html")
	top, _ := filepath.Glob("/usr/share/doc/python3.11/html/*.html")
	docs = append(docs, top...)
	if len(docs) == 0 {
		t.Skip("python3.11-doc is not installed (scripts/deps.sh installs it)")
	}
	shells := 0
	for _, p := range docs {
		page, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if s, why := Shell(page); s {
			shells++
			t.Errorf("%s judged a shell: %s", p, why)
		}
	}
	t.Logf("%d Python docs pages, %d shells", len(docs), shells)
}

func TestShellRule(t *testing.T) {
	for _, c := range []struct {
		name, page string
		want       bool
	}{
		{"no scripts, no text", `<html><body><div id="app"></div></body></html>`, false},
		{"mount point and bundle", `<html><body><div id="root"></div><script src="/main.js"></script></body></html>`, true},
		{"next.js mount filled by the server", `<html><body><div id="__next"><p>` + strings.Repeat("word ", 80) + `</p></div><script src="/x.js"></script></body></html>`, false},
		{"few links, few words, a script", `<html><body><p>Hello there</p><a href="/x">x</a><script>boot()</script></body></html>`, true},
		{"noscript asking for JavaScript, some text", `<html><body><noscript>Please enable JavaScript.</noscript><p>` + strings.Repeat("word ", 120) + `</p>` + strings.Repeat(`<a href="/p">p</a>`, 9) + `<script src="/a.js"></script></body></html>`, true},
		{"noscript asking for JavaScript, many links", `<html><body><noscript>Please enable JavaScript.</noscript><p>` + strings.Repeat("word ", 120) + `</p>` + strings.Repeat(`<a href="/p">p</a>`, 10) + `<script src="/a.js"></script></body></html>`, false},
		{"empty mount point, many links", `<html><body><nav>` + strings.Repeat(`<a href="/p">p</a>`, 12) + `</nav><div id="app"></div><script src="/a.js"></script></body></html>`, false},
		{"many links first, then an empty mount point", `<html><body>` + strings.Repeat(`<a href="/p">p</a>`, 10) + `<div id="app"></div><script src="/a.js"></script></body></html>`, false},
		{"many words first, then a noscript", `<html><body><p>` + strings.Repeat("word ", 200) + `</p><noscript>Enable JavaScript</noscript><script src="/a.js"></script></body></html>`, false},
		{"an article with a script", `<html><body><p>` + strings.Repeat("word ", 300) + `</p><a href="/a">a</a><script>track()</script></body></html>`, false},
		{"javascript: links do not count", `<html><body>` + strings.Repeat(`<a href="javascript:go()">go</a>`, 5) + `<script>x()</script></body></html>`, true},
	} {
		if got, why := Shell([]byte(c.page)); got != c.want {
			t.Errorf("%s: Shell = %v (%s), want %v", c.name, got, why, c.want)
		}
		// Shell stops reading once the signs decide; the whole page's
		// signs decide the same.
		if got, why := Measure([]byte(c.page)).Shell(); got != c.want {
			t.Errorf("%s: Measure(...).Shell = %v (%s), want %v", c.name, got, why, c.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for s, want := range map[string]Mode{"never": Never, "": Never, "auto": Auto, "ALWAYS": Always} {
		if m, err := ParseMode(s); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseMode("sometimes"); err == nil {
		t.Error("ParseMode(sometimes): no error")
	}
}
