package sekitei

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestBuildRegexLectureExamples(t *testing.T) {
	for _, tc := range []struct {
		subjects []string
		want     string
	}{
		{[]string{"/wiki/File:Spongilla_lacustris.jpg", "/wiki/File:Deve.jpg", "/wiki/File:X1.jpg"}, `^/wiki/File:[^/?]+\.jpg$`},
		{[]string{"/wiki/Category:Roman-era_historians", "/wiki/Category:Poets"}, `^/wiki/Category:[^/?]+$`},
		{[]string{"/news/2013/09/30/mid/", "/news/2011/12/15/nodeal/"}, `^/news/[0-9]+/[0-9]+/[0-9]+/[^/?]+/$`},
		{[]string{"/kid/krapiv/krapiv12", "/kid/krapiv/krapiv7"}, `^/kid/krapiv/krapiv[0-9]+$`},
		{[]string{"/search?q=a&page=2", "/search?q=bb&page=10"}, `^/search\?q=[^&]+&page=[0-9]+$`},
		{[]string{"/a/1", "/a/2/"}, `^/a/[0-9]+/?$`},
		{[]string{"/a/x", "/a/y?z=1"}, `^/a/[^/?]+(?:\?.*)?$`},
		{[]string{"/a", "/a/b/c"}, `^/a(?:/[^/?]+)*$`},
		{[]string{"/", "/"}, `^/$`},
		{[]string{"/w/index.php?title=A(b)", "/w/index.php?title=C+d"}, `^/w/index\.php\?title=[^&]+$`},
	} {
		got, _ := buildRegex(tc.subjects)
		if got != tc.want {
			t.Errorf("buildRegex(%q) = %q, want %q", tc.subjects, got, tc.want)
		}
		m, err := newMatcher(got)
		if err != nil {
			t.Fatalf("%q: %v", got, err)
		}
		for _, s := range tc.subjects {
			if !m.match(s, []rune(s)) {
				t.Errorf("%q does not match its member %q", got, s)
			}
		}
	}
}

func TestSpecificRegexIsTriedFirst(t *testing.T) {
	_, general := buildRegex([]string{"/wiki/A", "/wiki/B"})
	_, specific := buildRegex([]string{"/wiki/File:A.jpg", "/wiki/File:B.jpg"})
	if specific <= general {
		t.Errorf("specificity: File: regex %d, generic %d", specific, general)
	}
}

func TestRequiredLiterals(t *testing.T) {
	for _, tc := range []struct {
		re     string
		prefix string
		lits   []string
	}{
		{`^/news/[0-9]+/[^/?]+/_Printed\.htm$`, "/news/", []string{"/", "/_Printed.htm"}},
		{`^/wiki/File:[^/?]+\.jpg$`, "/wiki/File:", []string{".jpg"}},
		{`^/a/?$`, "/a", nil},
		{`^/a(?:/[^/?]+)*/?(?:\?.*)?$`, "/a", nil},
		{`^/x\?q=[^&]*&p=1$`, "/x?q=", []string{"&p=1"}},
		{`^/a|^/b`, "", nil},
		{`^(?i)/a`, "", nil},
		{`^/ab{2}c`, "/a", []string{"c"}},
		{`.*`, "", nil},
	} {
		p, l := requiredLiterals(tc.re)
		if p != tc.prefix || !reflect.DeepEqual(l, tc.lits) {
			t.Errorf("requiredLiterals(%q) = %q %q, want %q %q", tc.re, p, l, tc.prefix, tc.lits)
		}
	}
}

func TestPrefilterAgreesWithRegexp2(t *testing.T) {
	subjects := []string{"/news/2013/09/30/mid/", "/news/x/_Printed.htm", "/a", "/ab", "/a/b", "/x?q=1&p=1",
		"/abbc", "/wiki/File:a.jpg", "/wiki/File:.jpg", "/", "/A"}
	for _, re := range []string{`^/news/[0-9]+/[^/?]+/_Printed\.htm$`, `^/a/?$`, `^/x\?q=[^&]*&p=1$`, `^/ab{2}c`,
		`^/wiki/File:[^/?]*\.jpg$`, `^/a|^/b`, `^(?i)/a$`, `^/(?:a|b)$`, `.*`} {
		m, err := newMatcher(re)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subjects {
			want, _ := m.re.MatchString(s)
			if got := m.match(s, []rune(s)); got != want {
				t.Errorf("%q on %q: matcher %v, regexp2 %v", re, s, got, want)
			}
		}
	}
}

func TestJaccardDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b []int32
		want float64
	}{
		{nil, nil, 0}, {[]int32{1}, nil, 1}, {[]int32{1, 2}, []int32{2, 3}, 1 - 1.0/3}, {[]int32{1, 2}, []int32{1, 2}, 0},
	} {
		if got := jaccardDistance(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("jaccardDistance(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestBuildSegmentsOfASite(t *testing.T) {
	good, general := siteURLs(t, "lenta")
	ex := examples(good, general)
	s, err := Build("lenta.ru", ex, Options{SiteQuota: 10000, MinQuota: 100})
	if err != nil {
		t.Fatal(err)
	}
	last := s.Segments[len(s.Segments)-1]
	if last.Regex != RestRegex {
		t.Errorf("last segment %q, want the rest %q", last.Regex, RestRegex)
	}
	urls, goods, quota := 0, 0, 0
	for i, seg := range s.Segments {
		if seg.ID != i {
			t.Errorf("segment %d has id %d", i, seg.ID)
		}
		urls += seg.URLs
		goods += seg.Good
		quota += seg.Quota
		if seg.Quota < 100 {
			t.Errorf("segment %d quota %d below the minimum", i, seg.Quota)
		}
	}
	if urls != len(ex) || goods != len(good) || quota != 10000 {
		t.Errorf("counts: urls %d (want %d), good %d (want %d), quotas %d (want 10000)", urls, len(ex), goods, len(good), quota)
	}
	// The most good-dense segment gets more quota than the least.
	hi, lo := s.Segments[0], s.Segments[0]
	for _, seg := range s.Segments {
		if seg.Good > hi.Good {
			hi = seg
		}
		if seg.Good < lo.Good {
			lo = seg
		}
	}
	if hi.Quota <= lo.Quota {
		t.Errorf("quota of %d good URLs: %d; of %d: %d", hi.Good, hi.Quota, lo.Good, lo.Quota)
	}
	// Homework example: a news URL lands in a /news/ segment.
	seg, err := s.Assign("http://lenta.ru/news/2013/09/30/mid/")
	if err != nil || !strings.HasPrefix(seg.Regex, "^/news/") {
		t.Errorf("news URL in segment %+v (%v)", seg, err)
	}
	if p := s.Purity(); p < 0.9 || p > 1 {
		t.Errorf("purity %v", p)
	}
	// Deterministic.
	s2, _ := Build("lenta.ru", ex, Options{SiteQuota: 10000, MinQuota: 100})
	if s.String() != s2.String() {
		t.Error("two builds of the same URLs differ")
	}
}

func TestBuildDegenerateHosts(t *testing.T) {
	if _, err := Build("x", nil, Options{}); !errors.Is(err, ErrNoURLs) {
		t.Errorf("no URLs: %v", err)
	}
	if _, err := Build("x", []Example{{URL: "ftp://x/a", Good: true}, {URL: "relative"}}, Options{}); !errors.Is(err, ErrNoURLs) {
		t.Errorf("only bad URLs: %v", err)
	}
	one, err := Build("x.org", []Example{{URL: "http://x.org/a"}}, Options{SiteQuota: 10, MinQuota: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Segments) != 1 || one.Segments[0].Regex != RestRegex || one.Segments[0].URLs != 1 || one.Segments[0].Quota != 10 {
		t.Errorf("one URL: %+v", one.Segments)
	}
	var ex []Example
	for i := 0; i < 300; i++ {
		ex = append(ex, Example{URL: fmt.Sprintf("http://x.org/item/%d", i), Good: false}, Example{URL: fmt.Sprintf("http://x.org/tag/t%d.html", i), Good: false})
	}
	ex = append(ex, Example{URL: "mailto:a@b", Good: false})
	s, err := Build("x.org", ex, Options{SiteQuota: 1000, MinQuota: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Segments) != 3 || s.Segments[0].URLs != 300 || s.Segments[1].URLs != 300 {
		t.Fatalf("no good URLs: %v", s)
	}
	if s.Segments[0].Quota+s.Segments[1].Quota+s.Segments[2].Quota != 1000 || s.Segments[0].Quota != s.Segments[1].Quota {
		t.Errorf("without good URLs quotas follow size: %+v", s.Segments)
	}
}

func TestSetQuotasRule(t *testing.T) {
	s := &Site{Segments: []Segment{{Good: 30, URLs: 100}, {Good: 10, URLs: 100}, {Good: 0, URLs: 100}}}
	s.SetQuotas(1000, 100)
	got := []int{s.Segments[0].Quota, s.Segments[1].Quota, s.Segments[2].Quota}
	if !reflect.DeepEqual(got, []int{100 + 525, 100 + 175, 100}) {
		t.Errorf("quotas %v", got)
	}
	s.SetQuotas(10, 100) // minimum above the share: lowered to Q/k
	if q := s.Segments[0].Quota + s.Segments[1].Quota + s.Segments[2].Quota; q != 10 {
		t.Errorf("quotas add to %d, want 10", q)
	}
	s.SetQuotas(0, 100)
	if s.Segments[0].Quota != 0 {
		t.Error("site quota 0 gives quotas")
	}
}

func TestLongURLs(t *testing.T) {
	long := "http://x.org/a/" + strings.Repeat("b", 300_000) + "/c?" + strings.Repeat("q=1&", 20_000)
	var ex []Example
	for i := 0; i < 50; i++ {
		ex = append(ex, Example{URL: fmt.Sprintf("http://x.org/a/%d/c", i), Good: i%2 == 0})
	}
	ex = append(ex, Example{URL: long, Good: true})
	s, err := Build("x.org", ex, Options{})
	if err != nil {
		t.Fatal(err)
	}
	seg, err := s.Assign(long)
	if err != nil || seg == nil {
		t.Fatalf("long URL: %v %v", seg, err)
	}
	m, _, err := Train([]string{long, "http://x.org/a/1/c"}, []string{"http://x.org/z", long + "x"}, TrainOptions{Quota: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewFilter(m, 0, 0).Decide(long); err != nil {
		t.Fatal(err)
	}
}
