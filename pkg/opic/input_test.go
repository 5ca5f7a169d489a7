package opic

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	for _, c := range []struct {
		line  string
		kind  Kind
		url   string
		links []string
		err   string
	}{
		{"a\tb", EdgeItem, "a", []string{"b"}, ""},
		{" http://x/a \t http://x/b\r", EdgeItem, "http://x/a", []string{"http://x/b"}, ""},
		{"http://x/", PageItem, "http://x/", nil, ""},
		{`{"url":"http://x/","links":["http://y/","","http://z/"],"n":1}`, RecordItem, "http://x/", []string{"http://y/", "http://z/"}, ""},
		{`{"url":"http://x/","status":301,"final_url":"http://x/home"}`, RecordItem, "http://x/", []string{"http://x/home"}, ""},
		{`{"url":"http://x/","links":null}`, RecordItem, "http://x/", nil, ""},
		{"a\tb\tc", 0, "", nil, "3 fields"},
		{"\tb", 0, "", nil, "empty source"},
		{"a\t", 0, "", nil, "empty source or target"},
		{`{"url":"http://x/","links":"http://y/"}`, 0, "", nil, "not a list of strings"},
		{`{"url":"http://x/","links":[1,2]}`, 0, "", nil, "not a list of strings"},
		{`{"links":["http://y/"]}`, 0, "", nil, `no "url"`},
		{`{"url":"http://x/","fetched_at":"yesterday"}`, 0, "", nil, "fetched_at"},
		{`{"url": broken`, 0, "", nil, "JSON"},
		{"not a url", 0, "", nil, "not a URL line"},
		{"http//x/", 0, "", nil, "not a URL line"},
		{"http://x/\x01\x02", 0, "", nil, "control character"},
		{"http://x/\xff\xfe", 0, "", nil, "invalid UTF-8"},
		{"a\x00\tb", 0, "", nil, "edge source"},
		{"a\tb\xc3", 0, "", nil, "edge target"},
	} {
		it, err := ParseLine([]byte(c.line))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one with %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil || it.Kind != c.kind || it.URL != c.url || fmt.Sprint(it.Links) != fmt.Sprint(c.links) {
			t.Errorf("%q: %v %q %q %v, want %v %q %q", c.line, it.Kind, it.URL, it.Links, err, c.kind, c.url, c.links)
		}
	}
	it, _ := ParseLine([]byte(`{"url":"http://x/","fetched_at":"2026-11-01T10:00:00Z"}`))
	if it.FetchedAt.Unix() != fetchedAt("2026-11-01T10:00:00Z").Unix() {
		t.Errorf("fetched_at %v", it.FetchedAt)
	}
}

// Self-loops and repeated links change nothing: the graph is a set of links
// without self-loops, as PageRank takes it.
func TestSelfLoopsAndDuplicatesCountOnce(t *testing.T) {
	build := func(lines string) *State {
		s := New(0.85)
		for _, l := range strings.Split(lines, "\n") {
			it, err := ParseLine([]byte(l))
			if err != nil {
				t.Fatal(err)
			}
			s.AddItem(it)
		}
		s.Compact()
		s.Reset()
		s.Run(Greedy, Stop{Steps: 500}, 0)
		return s
	}
	clean := build("a\tb\nb\tc\nc\ta\nc\tb")
	noisy := build("a\tb\na\ta\na\tb\nb\tc\nb\tb\nc\ta\nc\tb\nc\tb\n{\"url\":\"c\",\"links\":[\"b\",\"c\",\"a\"]}")
	if noisy.Edges() != 4 {
		t.Errorf("%d links, want 4", noisy.Edges())
	}
	for _, name := range []string{"a", "b", "c"} {
		i, _ := clean.Lookup(name)
		j, _ := noisy.Lookup(name)
		if clean.Page(i) != noisy.Page(j) {
			t.Errorf("page %s: %+v with noise, %+v without", name, noisy.Page(j), clean.Page(i))
		}
	}
}

// A link to a page never seen as a source makes the page known; with no
// links of its own it passes its cash to the virtual page (a dangling page)
// and stays in the frontier until fetched.
func TestLinksToUnknownPages(t *testing.T) {
	s := New(0.85)
	visitA := Item{Kind: RecordItem, URL: "http://a/", Links: []string{"http://new/"}, HasLinks: true, FetchedAt: fetchedAt("2026-11-01T00:00:00Z")}
	applyBatch(s, visitA)
	id, ok := s.Lookup("http://new/")
	if !ok || s.Len() != 2 {
		t.Fatalf("unknown target not added: %d pages", s.Len())
	}
	// The first batch's visit had no cash to give; at its end the virtual
	// page shared the total of 1 over the two pages known.
	if p := s.Page(id); p.Visits != 0 || p.Cash != 0.5 {
		t.Errorf("new page %+v: want no visit and cash 1/2", p)
	}
	// a hands 0.85 of its 1/2 to the new page, the rest to both.
	visitA.FetchedAt = fetchedAt("2026-11-02T00:00:00Z")
	applyBatch(s, visitA)
	if p := s.Page(id); !close(p.Cash, 0.5+0.425+0.0375) {
		t.Errorf("new page's cash %g, want %g", p.Cash, 0.5+0.425+0.0375)
	}
	due := Frontier([]*State{s}, 10, fetchedAt("2026-11-02T00:00:00Z").Unix()-1)
	if len(due) != 1 || due[0].URL != "http://new/" {
		t.Errorf("frontier %v, want only the new page", due)
	}
	s.Compact()
	s.Reset()
	s.Run(Random, Stop{Steps: 1000}, 3)
	var sum float64
	for _, v := range s.Importance() {
		sum += v
	}
	if !close(sum, 1) {
		t.Errorf("importance sums to %g", sum)
	}
}

func TestEmptyGraph(t *testing.T) {
	s := New(0.85)
	s.Compact()
	s.Reset()
	if n := s.Run(Greedy, Stop{Until: 1e-3}, 0); n != 0 {
		t.Errorf("%d visits on an empty graph", n)
	}
	if imp := s.Importance(); len(imp) != 0 {
		t.Errorf("importance %v", imp)
	}
	if r := Ranking([]*State{s}, 10); len(r) != 0 {
		t.Errorf("ranked %v", r)
	}
	data, _ := s.MarshalBinary()
	var u State
	if err := u.UnmarshalBinary(data); err != nil || u.Len() != 0 {
		t.Errorf("empty state round trip: %v", err)
	}
}

// A hub with thousands of links spreads its cash evenly over them.
func TestPageWithThousandsOfLinks(t *testing.T) {
	s := New(0.85)
	hub := s.AddPage([]byte("hub"))
	var links []uint32
	for i := range 5000 {
		links = append(links, s.AddPage(fmt.Appendf(nil, "p%d", i)))
	}
	s.SetLinks(hub, links)
	s.Settle()
	before := s.Page(links[0]).Cash
	c := s.Page(hub).Cash
	s.Visit(hub, 100)
	for _, l := range links {
		if got, want := s.Page(l).Cash, before+0.85*c/5000+0.15*c/5001; !close(got, want) {
			t.Fatalf("page %d: cash %g, want %g", l, got, want)
		}
	}
	if len(s.Links(hub)) != 5000 {
		t.Errorf("%d links", len(s.Links(hub)))
	}
}

// A fetch without links (a 304 Not Modified, a failed fetch) keeps the
// links the page had; an explicit empty list clears them.
func TestRecordWithoutLinksKeepsLinks(t *testing.T) {
	s := New(0.85)
	parse := func(line string) Item {
		it, err := ParseLine([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	applyBatch(s, parse(`{"url":"http://a/","status":200,"fetched_at":"2026-11-01T00:00:00Z","links":["http://b/","http://c/"]}`))
	a, _ := s.Lookup("http://a/")
	applyBatch(s, parse(`{"url":"http://a/","status":304,"fetched_at":"2026-11-02T00:00:00Z"}`))
	if n := len(s.Links(a)); n != 2 {
		t.Errorf("after a 304: %d links, want the 2 known", n)
	}
	applyBatch(s, parse(`{"url":"http://a/","status":500,"fetched_at":"2026-11-03T00:00:00Z","error":"server error"}`))
	if n := len(s.Links(a)); n != 2 {
		t.Errorf("after a failed fetch: %d links, want the 2 known", n)
	}
	if v := s.Page(a).Visits; v != 3 {
		t.Errorf("%d visits, want 3", v)
	}
	applyBatch(s, parse(`{"url":"http://a/","status":200,"fetched_at":"2026-11-04T00:00:00Z","links":[]}`))
	if n := len(s.Links(a)); n != 0 {
		t.Errorf("after an empty list: %d links, want 0", n)
	}
}

// Random binary input is errors per line, not pages: each line fails and no
// item reaches the graph.
func TestParseLineRandomBinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<16)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	lines := bytes.Split(buf, []byte{'\n'})
	for _, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if it, err := ParseLine(l); err == nil {
			t.Errorf("%q: parsed as %v %q, want an error", l, it.Kind, it.URL)
		}
	}
	if len(lines) < 100 {
		t.Fatalf("only %d lines", len(lines))
	}
}
