package directives

import (
	"reflect"
	"testing"
)

func TestSet(t *testing.T) {
	for _, c := range []struct {
		name   string
		metas  [][2]string
		header []string
		want   []string
	}{
		{"meta noindex", [][2]string{{"robots", "noindex"}}, nil, []string{"noindex"}},
		{"meta NONE", [][2]string{{"ROBOTS", " NONE "}}, nil, []string{"nofollow", "noindex"}},
		{"meta for us", [][2]string{{"crawlkit", "nofollow"}, {"googlebot", "noindex"}}, nil, []string{"nofollow"}},
		{"meta all", [][2]string{{"robots", "index, follow, all"}}, nil, nil},
		{"header", nil, []string{"noindex, nofollow"}, []string{"nofollow", "noindex"}},
		{"header for us", nil, []string{"CrawlKit: noarchive, nosnippet"}, []string{"noarchive", "nosnippet"}},
		{"header for another", nil, []string{"googlebot: noindex", "otherbot: none"}, nil},
		{"header unavailable_after", nil, []string{"unavailable_after: 25 Jun 2010 15:00:00 PST"}, nil},
		{"header max-snippet", nil, []string{"max-snippet: 0, noimageindex"}, []string{"noimageindex"}},
		{"both merge", [][2]string{{"robots", "nofollow"}}, []string{"noindex"}, []string{"nofollow", "noindex"}},
		{"other meta", [][2]string{{"description", "noindex"}}, nil, nil},
	} {
		s := For("crawlkit")
		for _, m := range c.metas {
			s.Meta(m[0], m[1])
		}
		s.Header(c.header)
		if got := s.List(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestParseRefresh(t *testing.T) {
	for _, c := range []struct {
		in     string
		delay  int
		target string
		ok     bool
	}{
		{"0; url=http://x.test/a", 0, "http://x.test/a", true},
		{"0;URL='/b'", 0, "/b", true},
		{`5 ; url = "/c d" `, 5, "/c d", true},
		{"3", 3, "", true},
		{"1.5, /e", 1, "/e", true},
		{"0; /f", 0, "/f", true},
		{"url=/g", 0, "", false},
		{"", 0, "", false},
		{"10x", 0, "", false},
	} {
		d, tg, ok := ParseRefresh(c.in)
		if d != c.delay || tg != c.target || ok != c.ok {
			t.Errorf("%q: %d %q %v, want %d %q %v", c.in, d, tg, ok, c.delay, c.target, c.ok)
		}
	}
}
