package weburl

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// agree checks that where the fast path answers, the full parser gives the
// same URL.
func agree(t *testing.T, base *URL, ref string) bool {
	t.Helper()
	var fast *URL
	var ok bool
	var slow *URL
	var err error
	if base == nil {
		fast, ok = fastParse(ref)
		slow, err = slowParse(ref)
	} else {
		fast, ok = base.fastResolve(ref)
		slow, err = base.slowResolve(ref, nil)
	}
	if !ok {
		return false
	}
	if err != nil {
		t.Errorf("%q on %v: fast path gives %q, the parser fails: %v", ref, base, fast, err)
		return true
	}
	f, sl := *fast, *slow
	f.parsed, sl.parsed = nil, nil
	if f != sl {
		t.Errorf("%q on %v: fast path gives %+v, the parser %+v", ref, base, *fast, *slow)
	}
	return true
}

// pieces are the makings of hrefs: plain ones and every character class
// the fast path must leave to the parser.
var pieces = []string{"a", "Z", "0", "9", "/", "/", "?", "#", ".", "..", "./", "../", "%", "%2e", "%41", ":",
	"\\", " ", "\t", "-", "_", "~", "@", "'", "|", "^", "[", "]", "é", "x.test", "sub.x.test", "http://",
	"https://", "HTTP://", "//", "xn--zca", ":80", ":0080", ":443", ":8080", "1.2", "0x7f", "mailto:", "&", "="}

func randomRef(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(8) + 1; n > 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

var bases = []string{"http://site.test/dir/page.html?x=1", "https://site.test/", "http://site.test:8080/a/b/", "http://u:p@site.test/a"}

// The fast path answers the common hrefs and agrees with the parser on
// every one it answers, on the URL Standard's inputs and on 200,000
// generated hrefs.
func TestFastPathAgrees(t *testing.T) {
	for _, c := range loadStandard(t) {
		if c.Base == nil {
			agree(t, nil, c.Input)
			continue
		}
		if b, err := Parse(*c.Base); err == nil {
			agree(t, b, c.Input)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	answered := 0
	for i := 0; i < 200000; i++ {
		ref := randomRef(r)
		b, _ := Parse(bases[i%len(bases)])
		if agree(t, b, ref) {
			answered++
		}
		if agree(t, nil, "http://"+ref) {
			answered++
		}
	}
	if answered < 10000 {
		t.Errorf("the fast path answered only %d generated hrefs", answered)
	}
	// Hrefs of real pages take the fast path.
	page, _ := Parse("https://docs.python.org/3/library/os.html")
	for _, ref := range []string{"../index.html", "os.path.html#module-os.path", "/3/search.html?q=x&check_keywords=yes", "https://www.python.org/", "#top", "?highlight=os"} {
		if _, ok := page.fastResolve(ref); !ok {
			t.Errorf("%q: not on the fast path", ref)
		}
	}
}

func FuzzFastPath(f *testing.F) {
	for _, s := range []string{"../a?b#c", "http://x.test:080/./a/..", "/a/%2e%2E/b", "http://1.2.3.4/", "?q=a%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		for _, bs := range bases {
			b, _ := Parse(bs)
			agree(t, b, ref)
		}
		agree(t, nil, ref)
	})
}

func BenchmarkResolve(b *testing.B) {
	page, _ := Parse("https://docs.python.org/3/library/os.html")
	refs := []string{"../index.html", "os.path.html#module-os.path", "/3/search.html?q=x", "https://www.python.org/", "stdtypes.html#str"}
	b.Run("fast", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			page.Resolve(refs[i%len(refs)])
		}
	})
	b.Run("parser", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			page.slowResolve(refs[i%len(refs)], nil)
		}
	})
	prepared := page.Prepared()
	b.Run("parser-prepared", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			prepared.slowResolve(refs[i%len(refs)], nil)
		}
	})
}
