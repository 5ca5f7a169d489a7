package recrawl

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

var fuzzNow = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

func TestParsePage(t *testing.T) {
	opt := &PageOptions{Now: fuzzNow}
	good := `{"url":"http://A.example/x","weight":2,"change_rate":"0.5","last_fetch":"2026-11-20T00:00:00Z","host_rate":10}`
	rec, err := record.Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePage(rec, opt)
	if err != nil {
		t.Fatal(err)
	}
	if p.Host != "a.example" || p.W != 2 || p.Delta != 0.5 || p.Tau != 1 || p.HostRate != 10 {
		t.Errorf("parsed %+v", p)
	}
	for line, want := range map[string]string{
		`{"url":"http://a.example/","change_rate":0}`:                                     "must be positive",
		`{"url":"http://a.example/","change_rate":-2}`:                                    "must be positive",
		`{"url":"http://a.example/","change_rate":"NaN"}`:                                 "not a finite number",
		`{"url":"http://a.example/"}`:                                                     `missing "change_rate"`,
		`{"url":"http://a.example/","change_rate":1,"weight":0}`:                          "weight must be positive",
		`{"url":"http://a.example/","change_rate":1,"weight":"x"}`:                        "not a finite number",
		`{"url":"http://a.example/","change_rate":1,"last_fetch":"2027-01-01T00:00:00Z"}`: "in the future",
		`{"url":"http://a.example/","change_rate":1,"last_fetch":17}`:                     "not an RFC 3339 time",
		`{"url":"http://a.example/","change_rate":1,"host_rate":-1}`:                      "host_rate",
		`{"url":"relative/path","change_rate":1}`:                                         "no host",
	} {
		rec, err := record.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParsePage(rec, opt); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", line, err, want)
		}
	}
	// A missing last_fetch is a page never fetched: the highest value.
	rec, _ = record.Parse([]byte(`{"url":"http://a.example/","change_rate":2}`))
	if p, err := ParsePage(rec, opt); err != nil || !math.IsInf(p.Tau, 1) || Freshness.Value(p.W, p.Delta, p.Tau) != 0.5 {
		t.Errorf("never fetched: %+v %v", p, err)
	}
}

// FuzzParsePage feeds arbitrary lines through the record parser and the
// page parser: nothing panics, and an accepted page has only finite,
// positive numbers, so no NaN can reach rank's or solve's output.
func FuzzParsePage(f *testing.F) {
	for _, s := range []string{
		`{"url":"http://a.example/x","weight":2,"change_rate":0.5,"last_fetch":"2026-11-20T00:00:00Z","host_rate":10}`,
		`{"url":"http://a.example/","change_rate":"NaN"}`,
		`{"url":"http://a.example/","change_rate":1e308,"weight":1e-308}`,
		`{"url":"http://a.example/","change_rate":1,"last_fetch":"2026-11-21T00:00:00.000000001Z"}`,
		`{"url":"http://a.example/","change_rate":1,"importance":3}`,
		`{"url":"http://[::1]:80/","change_rate":"1"}`,
		`http://plain.example/line`,
		`{"url":1}`,
		`{"url":"http://a.example/","change_rate":1,"host_rate":"Infinity"}`,
		"\xff\xfe{",
	} {
		f.Add(s)
	}
	opt := &PageOptions{Now: fuzzNow, DefaultChangeRate: 0}
	opt2 := &PageOptions{Now: fuzzNow, DefaultChangeRate: 0.3, WeightField: "importance"}
	f.Fuzz(func(t *testing.T, line string) {
		rec, err := record.Parse([]byte(line))
		if err != nil {
			return
		}
		for _, o := range []*PageOptions{opt, opt2} {
			p, err := ParsePage(rec, o)
			if err != nil {
				continue
			}
			ok := func(v float64) bool { return v > 0 && !math.IsNaN(v) && !math.IsInf(v, 0) }
			if !ok(p.W) || !ok(p.Delta) || !(p.Tau >= 0) || p.HostRate < 0 || math.IsNaN(p.HostRate) || math.IsInf(p.HostRate, 0) || p.Host == "" {
				t.Fatalf("accepted a bad page %+v from %q", p, line)
			}
			for _, obj := range []Objective{Freshness, Harmonic} {
				if v := obj.Value(p.W, p.Delta, p.Tau); math.IsNaN(v) || v < 0 {
					t.Fatalf("V = %v for %+v", v, p)
				}
			}
		}
	})
}

// plainHostCases are URLs on both sides of plainHost's fast path: every
// one must give urlx.Host's host, or be left to it.
var plainHostCases = []string{
	"https://a.example/x", "http://a.example", "http://a.example?q", "http://a.example#f",
	"https://h2201.example/p/0", "http://1.2.3.4/", "http://0x7f.1/", "http://-a-.b-/",
	"http://.example/", "http://a.example./", "http://a..b/", "http:///x", "https://",
	"http://A.example/", "HTTP://a.example/", "http://a.example:80/", "https://a.example:443/x",
	"http://a.example:8080/", "http://u:p@a.example/", "http://@a.example/", "http://[::1]/",
	"http://b\u00fccher.example/", "http://xn--bcher-kva.example/", "http://%62.example/",
	"http://a.example/\x01", "http://a.example/x\x7f", "http://a\x00.example/", "http://a.example\\x",
	"http://a_b.example/", "ftp://a.example/", "http:a.example", "//a.example/", "http://a.example/%zz",
	"http://a.example/\u00e9\u2028", "https://a.example /x",
}

// TestPlainHost checks the fast path against urlx.Host, the general one:
// where it answers, the host is the same; it answers for the plain URLs.
func TestPlainHost(t *testing.T) {
	answered := 0
	for _, u := range plainHostCases {
		h, ok := plainHost(u)
		want, err := urlx.Host(u)
		if !ok {
			continue
		}
		answered++
		if err != nil || h != want {
			t.Errorf("plainHost(%q) = %q; urlx.Host = %q, %v", u, h, want, err)
		}
	}
	for _, u := range []string{"https://a.example/x", "http://a.example", "https://h2201.example/p/0", "http://a.example/\u00e9"} {
		if h, ok := plainHost(u); !ok || h == "" {
			t.Errorf("plainHost(%q) left a plain URL to the general path", u)
		}
	}
	if answered == 0 || answered == len(plainHostCases) {
		t.Errorf("plainHost answered %d of %d cases: the cases do not reach both paths", answered, len(plainHostCases))
	}
}

// FuzzPlainHost: on any URL, the fast path gives urlx.Host's host or none.
func FuzzPlainHost(f *testing.F) {
	for _, u := range plainHostCases {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u string) {
		h, ok := plainHost(u)
		if !ok {
			return
		}
		if want, err := urlx.Host(u); err != nil || h != want {
			t.Fatalf("plainHost(%q) = %q; urlx.Host = %q, %v", u, h, want, err)
		}
	})
}

// checkPageReader holds PageReader to record.Parse and ParsePage, the way
// rank read its pages before it: the same page, or the same error, for
// every line and both weight fields.
func checkPageReader(t *testing.T, readers []*PageReader, line []byte) {
	t.Helper()
	for _, pr := range readers {
		var want PageInput
		rec, werr := record.Parse(line)
		if werr == nil {
			want, werr = ParsePage(rec, pr.opt)
		}
		got, err := pr.Read(line)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("%q: error %v, want %v", line, err, werr)
		}
		if err == nil && got != want && !(math.IsNaN(got.Tau) && math.IsNaN(want.Tau)) {
			t.Fatalf("%q: page %+v, want %+v", line, got, want)
		}
	}
}

func pageReaders() []*PageReader {
	// The third adds to pages that hold some hosts, short and long: its
	// touches of their table (AddsTo) must change no page.
	ps := &Pages{}
	for i := 0; i < 2000; i++ {
		ps.HostIndex(fmt.Sprintf("h%d.example", i))
	}
	ps.HostIndex("a.example")
	ps.HostIndex("a-host-name-longer-than-24-bytes.example")
	added := NewPageReader(&PageOptions{Now: fuzzNow, DefaultChangeRate: 0.1})
	added.AddsTo(ps)
	// The fourth's weight field is a time field too: the scanner reads
	// both kinds of the one value.
	return []*PageReader{NewPageReader(&PageOptions{Now: fuzzNow}),
		NewPageReader(&PageOptions{Now: fuzzNow, DefaultChangeRate: 0.3, WeightField: "importance", DefaultWeight: 2}),
		added, NewPageReader(&PageOptions{Now: fuzzNow, DefaultChangeRate: 0.3, WeightField: "last_fetch"})}
}

// PageReader reads the pages of scripts/recrawl-genpages.sh's kind, and
// every line of TestParsePage's and FuzzParsePage's kinds, as ParsePage does.
func TestPageReaderAsParsePage(t *testing.T) {
	readers := pageReaders()
	lines := bytes.Split(bytes.TrimSpace(genPageRecords(20_000)), []byte("\n"))
	for _, s := range []string{
		`{"url":"http://A.example/x","weight":2,"change_rate":"0.5","last_fetch":"2026-11-20T00:00:00Z","host_rate":10}`,
		`{"url":"http://a.example/","change_rate":0}`, `{"url":"http://a.example/","change_rate":"NaN"}`,
		`{"url":"http://a.example/"}`, `{"url":"http://a.example/","change_rate":1,"weight":"x"}`,
		`{"url":"http://a.example/","change_rate":1,"last_fetch":"2027-01-01T00:00:00Z"}`,
		`{"url":"http://a.example/","change_rate":1,"last_fetch":17}`, `{"url":"relative/path","change_rate":1}`,
		`{"url":"http://a.example/","host":"B.Example","change_rate":1,"importance":3,"weight":4}`,
		`{"url":"http://a.example/","change_rate":1,"change_rate":-1,"host_rate":null}`,
		`{"url":"http://a.example/\u00e9","change_rate":1,"weight":"1e-3"}`, `{"url":"http://a.example/",}`,
		`{"\u0075rl":"http://a.example/","change_rate":1}`, "{\"url\":\"http://a.example/\xff\",\"change_rate\":1}",
		`http://plain.example/line`, `{"url":1}`, `   `, `{"url":"http://b.example/","change_rate":2,"last_fetch":null}`,
		`{"url":"https:\/\/esc.example\/p","change_rate":1}`, `{"url":"https://u.example/\u00e9t\u00e9","change_rate":1}`,
		`{"url":"https://u.example/été","change_rate":1,"last_fetch":"2026-11-20T10:00:00.25Z"}`,
		`{"url":"https://p.example:8443/","change_rate":1,"last_fetch":"1700-01-01T00:00:00Z"}`,
		`{"url":"https://a.example/","change_rate":1,"last_fetch":"2026-11-21T00:00:00Z"}`,
		`{"url":"https://a.example/","change_rate":1,"last_fetch":"2026-11-21T00:00:01Z"}`,
		`{"url":"https://a.example/","change_rate":1,"last_fetch":"2026-11-20T00:00:00+01:00"}`,
		`{"change_rate":1,"weight":2,"x":{"url":"https://in.example/"},"url":"https://a.example./"}`,
		`{"url":"https://a.example/","change_rate":1e-3,"weight":2e0,"host_rate":"5"}`,
		`{"url":"https://a.example/","host":"","change_rate":1}`, `{"url":"https://a.example/","host":3,"change_rate":1}`,
		`{"url":"https://","change_rate":1}`, `{"url":"","change_rate":1}`,
	} {
		lines = append(lines, []byte(s))
	}
	taken := 0
	for _, line := range lines {
		checkPageReader(t, readers, line)
		if readers[0].scan.Scan(line) {
			taken++
		}
	}
	if taken < 20_000 {
		t.Errorf("the scanner took %d lines, want every generated one", taken)
	}
}

func FuzzPageReader(f *testing.F) {
	f.Add([]byte(`{"url":"http://a.example/x","weight":2,"change_rate":0.5,"last_fetch":"2026-11-20T00:00:00Z","host_rate":10}`))
	f.Add([]byte(`{"url":"http://a.example/","change_rate":1,"importance":3,"host":"X"}`))
	f.Add([]byte(`http://plain.example/line`))
	readers := pageReaders()
	f.Fuzz(func(t *testing.T, line []byte) { checkPageReader(t, readers, line) })
}
