package crawlorder

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// web is a hand-made graph: URL -> "words | link anchor ; link anchor ...".
type web map[string]*Page

func newWeb(t *testing.T, spec map[string]string) web {
	w := web{}
	for u, s := range spec {
		text, links, _ := strings.Cut(s, "|")
		p := &Page{URL: u, Terms: Terms(text)}
		for _, l := range strings.Split(links, ";") {
			f := strings.Fields(l)
			if len(f) == 0 {
				continue
			}
			lk := Link{URL: f[0]}
			if len(f) > 1 {
				lk.Anchor = f[1]
			}
			if len(f) > 2 {
				lk.Context = strings.Join(f[2:], " ")
			}
			p.Links = append(p.Links, lk)
		}
		w[u] = p
	}
	return w
}

func (w web) Fetch(u string) (*Page, bool) { p, ok := w[u]; return p, ok }

func crawl(t *testing.T, w web, o Order, seeds ...string) ([]string, map[string]Score) {
	t.Helper()
	scores := map[string]Score{}
	res := Crawl(w, seeds, o, CrawlOptions{IndexSize: 100, Trace: func(s Score) { scores[s.URL] = s }})
	return res.Index, scores
}

func topic(t *testing.T, s string) *Topic {
	tp, err := NewTopic(s)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func wantSeq(t *testing.T, got []string, want string) {
	t.Helper()
	if w := strings.Fields(want); !reflect.DeepEqual(got, w) {
		t.Errorf("crawl sequence %v, want %v", got, w)
	}
}

// tree: s links a and b; a links c and d; b links e; c links f; e links g.
var tree = map[string]string{
	"s": "roses garden | a ; b",
	"a": "cars | c ; d",
	"b": "roses | e",
	"c": "cars | f",
	"d": "cars |",
	"e": "roses and tulips | g",
	"f": "roses |",
	"g": "cars |",
}

func TestBFS(t *testing.T) {
	seq, sc := crawl(t, newWeb(t, tree), NewBFS(), "s")
	wantSeq(t, seq, "s a b c d e f g")
	if sc["f"].Depth != 3 || sc["f"].Priority != 0.25 {
		t.Errorf("f: %+v, want depth 3, priority 1/4", sc["f"])
	}
}

// Fish search, D = 2, topic "roses": s is relevant, so a and b keep budget
// 2 and come first (1 + 2/2); a is not, so c and d get 1 (priority 1/2);
// b is, so e keeps 2 (priority 2) and goes before c and d; e is, so g keeps
// 2; c is not and its child f gets 0: the fish dies, f is never fetched.
func TestFish(t *testing.T) {
	seq, sc := crawl(t, newWeb(t, tree), NewFish(topic(t, "roses"), 2), "s")
	wantSeq(t, seq, "s a b e g c d")
	if sc["c"].Depth != 1 || sc["c"].Priority != 0.5 || sc["g"].Priority != 2 {
		t.Errorf("c %+v, g %+v", sc["c"], sc["g"])
	}
}

// Shark search, topic "roses", D = 2, delta 0.5, beta 0.8, gamma 0.5.
// s says nothing of roses (closeness 0, inherited 0, children's budget 1).
// x: anchor "roses" has closeness 1, so context 1: 0.5*0 + 0.5*(0.8+0.2)
// = 0.5. z: anchor "home" 0, context "about roses": both words unseen, so
// equal IDF, cosine 1/sqrt(2): 0.5*0.2*0.7071 = 0.0707. y: 0.
// x is relevant (closeness 1): w inherits 0.5*1 and its anchor "next" has
// nothing: 0.5*0.5 = 0.25, ahead of z. y is not relevant at budget 1, so
// v dies.
func TestShark(t *testing.T) {
	w := newWeb(t, map[string]string{
		"s": "welcome | x roses ; y cars ; z home about roses",
		"x": "roses | w next",
		"y": "cars | v roses",
		"z": "home |",
		"w": "tulips |",
		"v": "roses |",
	})
	seq, sc := crawl(t, w, NewShark(topic(t, "roses"), 2), "s")
	wantSeq(t, seq, "s x w z y")
	near := func(u string, want float64) {
		if math.Abs(sc[u].Priority-want) > 1e-4 {
			t.Errorf("%s: priority %v, want %v (%s)", u, sc[u].Priority, want, sc[u].Why)
		}
	}
	near("x", 0.5)
	near("w", 0.25)
	near("z", 0.1*math.Sqrt(0.5))
	near("y", 0)
}

// Naive best-first, topic "roses": a and b inherit s's closeness (equal:
// a first); a ("cars") gives c 0; b ("roses") gives d 1, so d goes before c.
func TestBestFirst(t *testing.T) {
	w := newWeb(t, map[string]string{
		"s": "roses garden | a ; b",
		"a": "cars | c",
		"b": "roses roses | d",
		"c": "x |", "d": "y |",
	})
	seq, sc := crawl(t, w, NewBestFirst(topic(t, "roses")), "s")
	wantSeq(t, seq, "s a b d c")
	if sc["d"].Priority != 1 || sc["c"].Priority != 0 {
		t.Errorf("d %+v, c %+v", sc["d"], sc["c"])
	}
}

// s links a, b, c; a links c. After s, a, b and c rank alike (a first);
// after a, c is cited twice and goes before b. Breadth first would take b.
var cited = map[string]string{
	"s": "| a ; b ; c",
	"a": "| c",
	"b": "|", "c": "|",
}

func TestPageRank(t *testing.T) {
	seq, _ := crawl(t, newWeb(t, cited), NewPageRank(1), "s")
	wantSeq(t, seq, "s a c b")
}

func TestHITS(t *testing.T) {
	seq, _ := crawl(t, newWeb(t, cited), NewHITS(1), "s")
	wantSeq(t, seq, "s a c b")
}

func TestPageRankSums(t *testing.T) {
	o := NewPageRank(1)
	o.Seed("s")
	o.Visit(&Page{URL: "s", Links: []Link{{URL: "a"}, {URL: "b"}}})
	sc := o.Visit(&Page{URL: "a", Links: []Link{{URL: "s"}}})
	sum := 0.0
	for _, s := range sc {
		sum += s.Priority
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("PageRank sums to %v", sum)
	}
}

// Along links, coef 0.5: s links r then q, a known QLink (priority 1), so q
// goes first; r and q's child x both get 0.5 (r first), r's child y 0.25.
func TestQLinksAlongLinks(t *testing.T) {
	w := newWeb(t, map[string]string{
		"http://h/s": "| http://h/r ; http://h/q",
		"http://h/r": "| http://h/y",
		"http://h/q": "| http://h/x",
		"http://h/x": "|", "http://h/y": "|",
	})
	st, err := NewQLinkStats(nil, map[string]float64{"http://h/q": 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewQLinks(st, AlongLinks, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	seq, sc := crawl(t, w, o, "http://h/s")
	wantSeq(t, seq, "http://h/s http://h/q http://h/r http://h/x http://h/y")
	if sc["http://h/y"].Priority != 0.25 || !strings.Contains(sc["http://h/x"].Why, "along links") {
		t.Errorf("y %+v, x %+v", sc["http://h/y"], sc["http://h/x"])
	}
}

// AlongLinksScores replays fetched pages as 'sekitei order' does, coef
// 0.5: s is a seed (1); r = 0.5 from s; q a QLink (1); r's child y = 0.25
// from r, then q links y too: 0.5 from q beats it; q's child x 0.5.
func TestAlongLinksScores(t *testing.T) {
	w := newWeb(t, map[string]string{
		"http://h/s": "| http://h/r ; http://h/q",
		"http://h/r": "| http://h/y",
		"http://h/q": "| http://h/x ; http://h/y",
	})
	pages := []*Page{w["http://h/s"], w["http://h/r"], w["http://h/q"]}
	sc, err := AlongLinksScores(pages, map[string]float64{"http://h/q": 7}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		p    float64
		from string
	}{"http://h/s": {1, ""}, "http://h/r": {0.5, "http://h/s"}, "http://h/q": {1, ""},
		"http://h/y": {0.5, "http://h/q"}, "http://h/x": {0.5, "http://h/q"}}
	if len(sc) != len(want) {
		t.Errorf("%d scores, want %d: %v", len(sc), len(want), sc)
	}
	for u, x := range want {
		if s := sc[u]; s.Priority != x.p || s.From != x.from {
			t.Errorf("%s: %+v, want priority %v from %q", u, s, x.p, x.from)
		}
	}
	if _, err := AlongLinksScores(pages, nil, 0.5); err != ErrNoQLinks {
		t.Errorf("no QLinks: %v", err)
	}
	if _, err := AlongLinksScores(pages, map[string]float64{"http://h/q": 7}, 1); err == nil {
		t.Error("coefficient 1 taken")
	}
}

// Highest takes the highest score, the first among equals.
func TestHighest(t *testing.T) {
	seg, site, links := Extrapolation{PerSegment, 0.3}, Extrapolation{PerSite, 0.3}, Extrapolation{AlongLinks, 0.4}
	if x, _ := Highest(seg, site, links); x.Mode != AlongLinks {
		t.Errorf("got %v, want links", x)
	}
	if x, _ := Highest(seg, site); x.Mode != PerSegment {
		t.Errorf("tie: got %v, want segment", x)
	}
	if _, ok := Highest(); ok {
		t.Error("none: ok")
	}
}

func segByDir(u string) (string, string) {
	i := strings.LastIndexByte(u, '/')
	return u[:i], "^" + u[len("http://h"):i] + "/[0-9]+$"
}

// Per segment: /news/ has 2 QLinks of 4 known URLs, /print/ none of 4, so
// /news/9 goes before /print/9 although the home page links print first.
func TestQLinksPerSegment(t *testing.T) {
	w := newWeb(t, map[string]string{
		"http://h/":        "| http://h/print/9 ; http://h/news/9",
		"http://h/print/9": "|", "http://h/news/9": "|",
	})
	known := []string{"http://h/news/1", "http://h/news/2", "http://h/news/3", "http://h/news/4",
		"http://h/print/1", "http://h/print/2", "http://h/print/3", "http://h/print/4"}
	st, err := NewQLinkStats(known, map[string]float64{"http://h/news/1": 3, "http://h/news/2": 1}, segByDir)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := NewQLinks(st, PerSegment, 0)
	seq, sc := crawl(t, w, o, "http://h/")
	wantSeq(t, seq, "http://h/ http://h/news/9 http://h/print/9")
	// site rate (2 + 2*g)/(8+2) with g = (2+1)/(8+2) = 0.3: 0.26;
	// news (2 + 2*0.26)/(4+2) = 0.42; print (0 + 0.52)/6.
	if got := sc["http://h/news/9"].Priority; math.Abs(got-0.42) > 1e-9 {
		t.Errorf("news rate %v, want 0.42", got)
	}
	if why := sc["http://h/print/9"].Why; !strings.Contains(why, "^/print/[0-9]+$: 0 QLinks of 4") {
		t.Errorf("print why %q", why)
	}
}

// Per site: b.test has QLinks, a.test none; the seed links a first.
func TestQLinksPerSite(t *testing.T) {
	w := newWeb(t, map[string]string{
		"http://s/":       "| http://a.test/1 ; http://b.test/1",
		"http://a.test/1": "|", "http://b.test/1": "|",
	})
	st, _ := NewQLinkStats([]string{"http://a.test/2", "http://a.test/3", "http://b.test/2", "http://b.test/3"},
		map[string]float64{"http://b.test/2": 1}, nil)
	o, _ := NewQLinks(st, PerSite, 0)
	seq, _ := crawl(t, w, o, "http://s/")
	wantSeq(t, seq, "http://s/ http://b.test/1 http://a.test/1")
}

func TestBadInput(t *testing.T) {
	if _, err := NewTopic("  ... !!! "); err != ErrEmptyTopic {
		t.Errorf("empty topic: %v", err)
	}
	if _, err := NewQLinkStats([]string{"http://h/a"}, nil, nil); err != ErrNoQLinks {
		t.Errorf("no QLinks: %v", err)
	}
	// One URL, one QLink: rates stay finite.
	st, err := NewQLinkStats([]string{"http://h/a"}, map[string]float64{"http://h/a": 1}, segByDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []func(string) (float64, string){st.SiteRate, st.SegmentRate} {
		if r, _ := f("http://other/x"); math.IsNaN(r) || r <= 0 || r >= 1 {
			t.Errorf("rate %v", r)
		}
	}
	if s := topic(t, "roses").Similarity(nil); s != 0 {
		t.Errorf("similarity of no words: %v", s)
	}
}

// Quotas: the crawl skips URLs of a site whose quota is used.
func TestCrawlQuota(t *testing.T) {
	w := newWeb(t, map[string]string{
		"http://a/":  "| http://a/1 ; http://a/2 ; http://b/1",
		"http://a/1": "|", "http://a/2": "|", "http://b/1": "|",
	})
	host := func(u string) string { return u[:len("http://a")] }
	res := Crawl(w, []string{"http://a/"}, NewBFS(), CrawlOptions{IndexSize: 10,
		Quota: map[string]int{"http://a": 2, "http://b": 1}, QuotaKey: host})
	wantSeq(t, res.Index, "http://a/ http://a/1 http://b/1")
	if res.Skipped != 1 {
		t.Errorf("skipped %d, want 1", res.Skipped)
	}
}

func TestQuotaRules(t *testing.T) {
	units := []Unit{{Key: "x", QLinks: 3, Visits: 7}, {Key: "y"}}
	for _, c := range []struct {
		rule string
		want map[string]int
	}{
		{QuotaEqual, map[string]int{"x": 100, "y": 100}},
		{QuotaGreedy, map[string]int{"x": 400, "y": 100}}, // F(7) = 1 + log2 8 = 4
		{QuotaVisits, map[string]int{"x": 400, "y": 100}},
		{QuotaSegments, map[string]int{"x": 300, "y": 100}}, // no QLinks: still MIN_QUOTA
	} {
		got, err := Quotas(c.rule, units, 100)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.rule, got, err, c.want)
		}
	}
	if m, _ := MinQuotaFor(QuotaSegments, units, 800); m != 200 {
		t.Errorf("MinQuotaFor %v, want 200", m)
	}
	if _, err := Quotas(QuotaEqual, units, math.NaN()); err == nil {
		t.Error("NaN MIN_QUOTA accepted")
	}
	if _, err := MinQuotaFor(QuotaEqual, nil, 10); err == nil {
		t.Error("no units accepted")
	}
}
