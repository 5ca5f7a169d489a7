package sekitei

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/record"
)

// TestRuleQuotasTable: each online quota rule on small hosts, the quotas
// worked out by hand in the comments (F(v) = 1 + log2(1 + v); a good URL
// counts as one visit).
func TestRuleQuotasTable(t *testing.T) {
	three := []StateSegment{{URLs: 10, Good: 3}, {URLs: 5, Good: 0}, {URLs: 40, Good: 12}}
	noGood := []StateSegment{{URLs: 30}, {URLs: 10}}
	one := []StateSegment{{URLs: 7, Good: 1}}
	for _, c := range []struct {
		rule      string
		segs      []StateSegment
		site, min int
		want      []int
	}{
		// share: 10 each, the 70 left by good URLs 3:0:12 = 14, 0, 56.
		{"share", three, 100, 10, []int{24, 10, 66}},
		{"", three, 100, 10, []int{24, 10, 66}},
		{"none", three, 100, 10, []int{0, 0, 0}},
		// equal: the host MIN_QUOTA, carried by every segment.
		{"equal", three, 100, 10, []int{10, 10, 10}},
		// greedy: the host F(15) * 10 = (1 + log2 16) * 10 = 50.
		{"greedy", three, 100, 10, []int{50, 50, 50}},
		// visits: F(3) = 3 -> 30; F(0) = 1 -> 10; F(12) = 1 + log2 13 = 4.70 -> 47.
		{"visits", three, 100, 10, []int{30, 10, 47}},
		// segments: #QLinks * 10, at least 10: 30, 10, 120.
		{"segments", three, 100, 10, []int{30, 10, 120}},
		// share without good URLs: 4 each, the 12 left by size 30:10 = 9, 3.
		{"share", noGood, 20, 4, []int{13, 7}},
		{"equal", noGood, 20, 4, []int{4, 4}},
		{"greedy", noGood, 20, 4, []int{4, 4}},
		{"visits", noGood, 20, 4, []int{4, 4}},
		{"segments", noGood, 20, 4, []int{4, 4}},
		// one segment, one QLink: F(1) = 2.
		{"visits", one, 0, 3, []int{6}},
		{"greedy", one, 0, 3, []int{6}},
		{"segments", one, 0, 3, []int{3}},
		{"equal", one, 0, 3, []int{3}},
		{"segments", nil, 0, 3, []int{}},
	} {
		got, err := RuleQuotas(c.rule, c.segs, c.site, c.min)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("RuleQuotas(%q, %v, %d, %d) = %v, %v; want %v", c.rule, c.segs, c.site, c.min, got, err, c.want)
		}
	}
	for _, c := range []struct {
		rule string
		min  int
	}{{"bogus", 10}, {"visits", 0}, {"segments", -1}, {"equal", 0}} {
		if _, err := RuleQuotas(c.rule, three, 100, c.min); err == nil {
			t.Errorf("RuleQuotas(%q, min %d): no error", c.rule, c.min)
		}
	}
	if _, err := RuleQuotas("share", three, 100, 0); err != nil {
		t.Errorf("share with MIN_QUOTA 0: %v", err)
	}
}

// TestDecidePerSite: under a site rule the host's use counts against the
// quota, the segment's own use only against robots.txt's block.
func TestDecidePerSite(t *testing.T) {
	for _, c := range []struct {
		use  SegmentUse
		want Verdict
	}{
		{SegmentUse{HasQuota: true, Quota: 10, Used: 2, PerSite: true, SiteUsed: 9}, Admitted},
		{SegmentUse{HasQuota: true, Quota: 10, Used: 2, PerSite: true, SiteUsed: 10}, OverQuota},
		{SegmentUse{HasQuota: true, Quota: 10, Used: 12, PerSite: true, SiteUsed: 12}, OverQuota},
		{SegmentUse{HasQuota: true, Quota: 10, Used: 12, SiteUsed: 0}, OverQuota},
		{SegmentUse{HasQuota: true, Quota: 10, Used: 5, Refused: 5, PerSite: true, SiteUsed: 5}, RobotsBlocked},
	} {
		if got := Decide(c.use, 5); got != c.want {
			t.Errorf("Decide(%+v) = %v, want %v", c.use, got, c.want)
		}
	}
}

// quotaHost is a host of two segments: 20 news pages (3 of them good, 2
// fetched) and 20 tag pages (none good, 4 fetched).
func quotaHost(t *testing.T) []*record.Record {
	var links []string
	for i := 0; i < 20; i++ {
		links = append(links, fmt.Sprintf("http://q.example/news/%d.html", i), fmt.Sprintf("http://q.example/tag/t%d/", i))
	}
	recs := []*record.Record{fetchRecord(t, "http://q.example/news/0.html", links, ""), fetchRecord(t, "http://q.example/news/1.html", nil, "")}
	for i := 0; i < 4; i++ {
		recs = append(recs, fetchRecord(t, fmt.Sprintf("http://q.example/tag/t%d/", i), nil, ""))
	}
	return recs
}

// admitted counts the candidates a state admits out of 30 new news pages
// and 30 new tag pages, offered alternately.
func admitted(t *testing.T, path, rule string) (news, tags int) {
	t.Helper()
	a, done := readOnlyAdmitter(t, path, rule)
	defer done()
	for i := 100; i < 130; i++ {
		for _, u := range []string{fmt.Sprintf("http://q.example/news/%d.html", i), fmt.Sprintf("http://q.example/tag/t%d/", i)} {
			ad, err := a.Admit(record.New(u))
			if err != nil {
				t.Fatal(err)
			}
			if ad.Verdict == Admitted {
				if strings.Contains(u, "/news/") {
					news++
				} else {
					tags++
				}
			}
		}
	}
	return news, tags
}

// TestQuotaRuleOnline: update sets the quotas by the rule, records it, and
// admit follows it; an update under another rule sets them anew and says
// so; a reader asking for another rule than the state's is refused.
func TestQuotaRuleOnline(t *testing.T) {
	good := &GoodURLs{URLs: []string{"http://q.example/news/3.html", "http://q.example/news/4.html", "http://q.example/news/5.html"}, Digest: "g"}
	for _, c := range []struct {
		rule       string
		news, tags int // admitted of 30 each
	}{
		// segments, MIN_QUOTA 5: news 3*5 = 15 (2 fetched: 13 more), tags 5 (4 fetched: 1 more).
		{"segments", 13, 1},
		// visits: news F(3)*5 = 15 (13 more), tags F(0)*5 = 5 (1 more).
		{"visits", 13, 1},
		// equal: the host 5, already 6 fetched: none.
		{"equal", 0, 0},
		// greedy: the host F(3)*5 = 15, 6 fetched: 9 more, taken alternately news, tag, ...
		{"greedy", 5, 4},
		// none: no quota.
		{"none", 30, 30},
		// share, site quota 40 over news, tags and the rest segment: 5 each,
		// the 25 left all to news (3 good): news 30 (28 more), tags 5 (1 more).
		{"share", 28, 1},
	} {
		path := filepath.Join(t.TempDir(), "s")
		st := openTestState(t, path, StateOptions{SiteQuota: 40, MinQuota: 5, QuotaRule: c.rule})
		if _, err := st.Apply("1", quotaHost(t), good); err != nil {
			t.Fatal(err)
		}
		st.Close()
		news, tags := admitted(t, path, c.rule)
		if news != c.news || tags != c.tags {
			t.Errorf("rule %s: admitted %d news and %d tag pages, want %d and %d", c.rule, news, tags, c.news, c.tags)
		}
		if _, err := OpenState(path, StateOptions{ReadOnly: true, QuotaRule: "bogus"}); err == nil {
			t.Errorf("rule %s: a reader asking for rule bogus opened it", c.rule)
		}
		other := "segments"
		if c.rule == other {
			other = "equal"
		}
		_, err := OpenState(path, StateOptions{ReadOnly: true, QuotaRule: other})
		var se *StateError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "rule "+c.rule) || !strings.Contains(err.Error(), path) {
			t.Errorf("rule %s: a reader asking for %s: %v", c.rule, other, err)
		}
		// The next batch under another rule: quotas set anew, and said.
		st2 := openTestState(t, path, StateOptions{SiteQuota: 40, MinQuota: 5, QuotaRule: other})
		stats, err := st2.Apply("2", nil, good)
		if err != nil || stats.RuleChangedFrom != c.rule {
			t.Errorf("rule %s then %s: %+v %v", c.rule, other, stats, err)
		}
		if r, _ := st2.QuotaRule(); r != other {
			t.Errorf("state records rule %q, want %q", r, other)
		}
		st2.Close()
		n2, t2 := admitted(t, path, other)
		want := map[string][2]int{"segments": {13, 1}, "equal": {0, 0}}[other]
		if n2 != want[0] || t2 != want[1] {
			t.Errorf("rule %s then %s: admitted %d and %d, want %v", c.rule, other, n2, t2, want)
		}
	}
	if _, err := OpenState(filepath.Join(t.TempDir(), "s"), StateOptions{QuotaRule: "visits", MinQuota: 0}); err == nil {
		t.Error("rule visits with MIN_QUOTA 0 opened")
	}
}

// readOnlyAdmitter opens the state at path read-only under rule ("" for
// the state's own) with an admitter over it (robots block 5); done closes
// both, so that the state can be opened for writing again.
func readOnlyAdmitter(t *testing.T, path, rule string) (a *Admitter, done func()) {
	t.Helper()
	ro, err := OpenState(path, StateOptions{ReadOnly: true, QuotaRule: rule})
	if err != nil {
		t.Fatal(err)
	}
	if a, err = NewAdmitter([]*State{ro}, 5); err != nil {
		ro.Close()
		t.Fatal(err)
	}
	return a, func() { a.Close(); ro.Close() }
}
