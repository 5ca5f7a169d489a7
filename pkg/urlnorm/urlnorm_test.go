package urlnorm

import (
	"errors"
	"testing"

	"github.com/sekitei/crawlkit/pkg/urlx"
	"github.com/sekitei/crawlkit/pkg/weburl"
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"HTTP://Example.COM:80/a/./b/../c", "http://example.com/a/c"},
		{"https://example.com:443", "https://example.com/"},
		{"http://example.com:8080/", "http://example.com:8080/"},
		{"http://example.com/%7euser/%7Efoo", "http://example.com/~user/~foo"},
		{"http://example.com/%d0%bf%D1%80", "http://example.com/%D0%BF%D1%80"},
		{"http://example.com/p?", "http://example.com/p"},
		{"http://example.com/p?#frag", "http://example.com/p"},
		{"http://example.com/a%2Fb", "http://example.com/a%2Fb"}, // an encoded slash is data
		{"http://example.com/%41%42%2e", "http://example.com/AB."},
		{"http://example.com/a/b/../../../c", "http://example.com/c"},
		{"http://example.com/a/./b/.", "http://example.com/a/b/"},
		{"http://example.com/a/..", "http://example.com/"},
		{"http://example.com/a b/\"q\"", "http://example.com/a%20b/%22q%22"},
		{"http://example.com/путь", "http://example.com/%D0%BF%D1%83%D1%82%D1%8C"},
		{"http://example.com/100%", "http://example.com/100%25"},
		{"http://пример.рф/путь", "http://xn--e1afmkfd.xn--p1ai/%D0%BF%D1%83%D1%82%D1%8C"},
		{"http://%D0%BF%D1%80%D0%B8%D0%BC%D0%B5%D1%80.%D1%80%D1%84/", "http://xn--e1afmkfd.xn--p1ai/"},
		{"http://ПРИМЕР.РФ:8080/", "http://xn--e1afmkfd.xn--p1ai:8080/"},
		{"http://Example.com./", "http://example.com/"},
		{"http://user:pw@example.com/", "http://example.com/"},
		{"http://[::1]:80/", "http://[::1]/"},
		{"http://example.com/?b=2&a=1&b=1", "http://example.com/?a=1&b=2&b=1"},
		{"http://example.com/?PHPSESSID=abc&id=3", "http://example.com/?id=3"},
		{"http://example.com/?id=3&utm_source=x&utm_medium=y&gclid=1&msclkid=2", "http://example.com/?id=3"},
		// sid is the story id of PHP-Nuke and Slashcode sites, session_id a
		// conference's talk: kept.
		{"http://example.com/?id=3&utm_source=x&sid=1", "http://example.com/?id=3&sid=1"},
		{"http://example.com/?session_id=7&sessionid=8", "http://example.com/?session_id=7&sessionid=8"},
		// What the URL Standard does first: backslashes, IPv4 forms, tabs.
		{"http://example.com\\a\\b", "http://example.com/a/b"},
		{"http://0x7f.1/", "http://127.0.0.1/"},
		{"http://exa\tmple.com/a\nb", "http://example.com/ab"},
		{"http://example.com/a/%2e%2E/b", "http://example.com/b"},
		{"http://example.com/?id=3&&", "http://example.com/?id=3"},
		{"http://example.com/a;jsessionid=ABC?x=1", "http://example.com/a?x=1"},
		{"http://example.com/?q=a%26b&q2=%7e+x", "http://example.com/?q=a%26b&q2=~+x"},
		{"http://example.com/?q=%zz", "http://example.com/?q=%25zz"},
	} {
		got, err := Normalize(c.in)
		if err != nil || got != c.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		// Idempotent: a normal form is its own normal form.
		if again, err := Normalize(got); err != nil || again != got {
			t.Errorf("Normalize(%q) = %q, not idempotent", got, again)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, in := range []string{"", "ftp://x/", "/relative", "http://", "http://:80/", "http://a b/", "http://x.test:8o/", "http://x\x01y/"} {
		if got, err := Normalize(in); err == nil {
			t.Errorf("Normalize(%q) = %q, want an error", in, got)
		}
	}
	if _, err := Normalize("http://a b/"); !errors.Is(err, weburl.ErrInvalid) {
		t.Errorf("space in host: %v", err)
	}
	if _, err := Normalize("mailto:x@y"); !errors.Is(err, urlx.ErrScheme) {
		t.Errorf("mailto: %v", err)
	}
}

func TestOptions(t *testing.T) {
	n := New(Options{StripParams: []string{"ref", "track*"}, KeepQueryOrder: true})
	got, _ := n.Normalize("http://x.test/?z=1&ref=2&Tracking=3&sid=4&a=5")
	if want := "http://x.test/?z=1&sid=4&a=5"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	none := New(Options{StripParams: []string{}})
	got, _ = none.Normalize("http://x.test/a;jsessionid=1?utm_source=x")
	if want := "http://x.test/a;jsessionid=1?utm_source=x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// PHP-Nuke's articles differ only by sid: two pages, two keys.
func TestPHPNukeStoryIDs(t *testing.T) {
	a, err1 := Normalize("http://nuke.test/modules.php?name=News&file=article&sid=123")
	b, err2 := Normalize("http://nuke.test/modules.php?name=News&file=article&sid=124")
	if err1 != nil || err2 != nil || a == b {
		t.Errorf("sid=123 -> %q, %v; sid=124 -> %q, %v: want two keys", a, err1, b, err2)
	}
	if want := "http://nuke.test/modules.php?file=article&name=News&sid=123"; a != want {
		t.Errorf("got %q, want %q", a, want)
	}
}

func TestSiteParams(t *testing.T) {
	m := map[string][]string{}
	for _, spec := range []string{"shop.test=sort,view*", "Shop.test=ref"} {
		if err := ParseSiteParams(m, spec); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"shop.test", "=a", "http://shop.test/=a"} {
		if err := ParseSiteParams(m, bad); err == nil {
			t.Errorf("ParseSiteParams(%q): no error", bad)
		}
	}
	n := New(Options{SiteParams: m})
	for _, c := range []struct{ in, want string }{
		{"http://shop.test/list?sort=asc&page=2&viewmode=grid&ref=x&utm_source=y", "http://shop.test/list?page=2"},
		{"http://www.shop.test/list?sort=asc&page=2", "http://www.shop.test/list?page=2"},
		{"http://other.test/list?sort=asc&page=2", "http://other.test/list?page=2&sort=asc"},
		{"http://notshop.test/list?sort=asc", "http://notshop.test/list?sort=asc"},
	} {
		if got, err := n.Normalize(c.in); err != nil || got != c.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// The variants of one page that a crawl met: each set has one normal form.
func TestVariantsFold(t *testing.T) {
	sets := [][]string{
		{"http://Site.test/~ann/?b=2&a=1", "http://site.test/%7Eann/?a=1&b=2", "http://site.test:80/%7eann/./?a=1&b=2&PHPSESSID=9", "http://SITE.test/x/../~ann/?a=1&b=2#top"},
		{"http://site.test/%d0%b0", "http://site.test/%D0%B0", "http://site.test/а", "http://site.test/%d0%b0?"},
	}
	for _, set := range sets {
		first, _ := Normalize(set[0])
		for _, v := range set[1:] {
			if got, _ := Normalize(v); got != first {
				t.Errorf("%q -> %q, but %q -> %q", v, got, set[0], first)
			}
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Normalize("http://Lenta.RU:80/news/2013/09/30/./mid/?utm_source=rss&from=rss&id=%7e1")
	}
}
