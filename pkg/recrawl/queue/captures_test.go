package queue

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A page keeps the capture of its last payload: a full response becomes
// it, a revisit keeps the capture it refers to (the page's own, or another
// page's of the same batch), and next hands it out in fetch's fields.
func TestCaptures(t *testing.T) {
	const u, v = "http://a.example/news", "http://a.example/copy"
	day := 24 * time.Hour
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{})
	rec := func(url, body string) Fetch {
		t.Helper()
		f, err := ParseFetch(mustRecord(t, fmt.Sprintf(`{"url":%q,%s}`, url, body)))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	capOf := func(i int, url string) Capture {
		t.Helper()
		now := t0.Add(time.Duration(i)*day + 12*time.Hour)
		x := explainOne(t, q, url, now)
		cs, _, err := q.Next(NextOptions{Now: now, N: 10, FixLambda0: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.URL == url && c.Capture != x.Capture {
				t.Errorf("turn %d: next offers %s with %+v, the state holds %+v", i, url, c.Capture, x.Capture)
			}
		}
		return x.Capture
	}
	first := Capture{Digest: "sha1:AAAA", Date: t0.Add(day).Unix(), URI: u, File: "crawl/t1.warc.gz", Offset: 412}
	steps := []struct {
		name string
		body string
		want Capture
	}{
		{"full 200", `"status":200,"fetched_at":"2026-11-02T00:00:00Z","final_url":"` + u + `","digest":"sha1:AAAA","warc_file":"crawl/t1.warc.gz","warc_offset":412`, first},
		// The revisit of turn 3 refers to turn 2's capture: the page
		// keeps that one, not the revisit's own file and date.
		{"revisit 200", `"status":200,"fetched_at":"2026-11-03T00:00:00Z","final_url":"` + u + `","digest":"sha1:AAAA","warc_file":"crawl/t2.warc.gz","warc_offset":9,"warc_type":"revisit","warc_refers_to":"` + u + `","warc_refers_to_date":"2026-11-02T00:00:00Z"`, first},
		{"revisit 304", `"status":304,"fetched_at":"2026-11-04T00:00:00Z","final_url":"` + u + `","digest":"sha1:AAAA","warc_file":"crawl/t3.warc.gz","warc_offset":7,"warc_type":"revisit","warc_refers_to":"` + u + `","warc_refers_to_date":"2026-11-02T00:00:00Z"`, first},
		{"failure", `"status":503,"fetched_at":"2026-11-05T00:00:00Z","warc_file":"crawl/t4.warc.gz","warc_offset":5`, first},
		{"304 not archived", `"status":304,"fetched_at":"2026-11-06T00:00:00Z","digest":"sha1:AAAA"`, first},
		{"same digest not archived", `"status":200,"fetched_at":"2026-11-07T00:00:00Z","digest":"sha1:AAAA"`, first},
		// A revisit of a capture this page does not hold, found nowhere:
		// no capture, rather than one that names the revisit.
		{"revisit of an unknown capture", `"status":200,"fetched_at":"2026-11-08T00:00:00Z","final_url":"` + u + `","digest":"sha1:AAAA","warc_file":"crawl/t7.warc.gz","warc_offset":3,"warc_type":"revisit","warc_refers_to":"http://a.example/gone","warc_refers_to_date":"2026-10-01T00:00:00Z"`, Capture{}},
		{"redirected 200", `"status":200,"fetched_at":"2026-11-09T00:00:00Z","final_url":"http://a.example/news/","redirects":[{"url":"` + u + `","status":301}],"digest":"sha1:BBBB","warc_file":"/w/t8.warc","warc_offset":0`,
			Capture{Digest: "sha1:BBBB", Date: t0.Add(8 * day).Unix(), URI: "http://a.example/news/", File: "/w/t8.warc", Offset: 0}},
		{"changed, not archived", `"status":200,"fetched_at":"2026-11-10T00:00:00Z","digest":"sha1:CCCC"`, Capture{}},
		{"truncated", `"status":200,"fetched_at":"2026-11-11T00:00:00Z","final_url":"` + u + `","digest":"sha1:DDDD","truncated":"length","warc_file":"t10.warc","warc_offset":1`, Capture{}},
		{"digest over 64 bytes", `"status":200,"fetched_at":"2026-11-12T00:00:00Z","final_url":"` + u + `","digest":"sha1:` + strings.Repeat("A", 60) + `","warc_file":"t11.warc","warc_offset":1`, Capture{}},
		{"path over 4 KiB", `"status":200,"fetched_at":"2026-11-13T00:00:00Z","final_url":"` + u + `","digest":"sha1:EEEE","warc_file":"` + strings.Repeat("d/", 2049) + `","warc_offset":1`, Capture{}},
	}
	for i, s := range steps {
		f := rec(u, s.body)
		apply(t, q, i+1, f.At, Batch{Fetches: []Fetch{f}})
		if got := capOf(i+1, u); got != s.want {
			t.Errorf("%s: capture %+v, want %+v", s.name, got, s.want)
		}
	}

	// Within one batch, a revisit of another page's identical payload
	// takes that page's capture, file and all.
	other := rec(v, `"status":200,"fetched_at":"2026-11-20T00:00:00Z","final_url":"`+u+`","digest":"sha1:FFFF","warc_type":"revisit","warc_file":"t20.warc","warc_offset":800,"warc_refers_to":"`+u+`","warc_refers_to_date":"2026-11-20T00:00:00Z"`)
	orig := rec(u, `"status":200,"fetched_at":"2026-11-20T00:00:00Z","final_url":"`+u+`","digest":"sha1:FFFF","warc_file":"t20.warc","warc_offset":100`)
	apply(t, q, 20, orig.At, Batch{Fetches: []Fetch{other, orig}})
	want := Capture{Digest: "sha1:FFFF", Date: orig.At.Unix(), URI: u, File: "t20.warc", Offset: 100}
	if got := capOf(20, v); got != want {
		t.Errorf("revisit of another page: capture %+v, want %+v", got, want)
	}
	if got := capOf(20, u); got != want {
		t.Errorf("the original: capture %+v, want %+v", got, want)
	}
}

// A page of encoding 3 (no capture) reads, without one; encoding 4 keeps
// the capture through a round trip, and a damaged capture is refused.
func TestDecodePageVersion3(t *testing.T) {
	p := &page{Host: "a.example", W: 1, Delta: 0.5, LastFetch: 100, ETag: `"e"`,
		Capture: Capture{Digest: "sha1:AAAA", Date: 90, URI: "http://a.example/", File: "w/1.warc.gz", Offset: 1 << 40}}
	b := p.encode(nil)
	got, err := decodePage(b)
	if err != nil || got.Capture != p.Capture || got.ETag != p.ETag {
		t.Fatalf("version 4: %+v, %v", got, err)
	}
	p.Capture = Capture{}
	b = p.encode(nil)
	v3 := append([]byte{3}, b[1:len(b)-1]...)
	got, err = decodePage(v3)
	if err != nil || got.Capture != (Capture{}) || got.ETag != p.ETag || got.LastFetch != 100 {
		t.Fatalf("version 3: %+v, %v", got, err)
	}
	// A capture cut short, and one with a digest past the bound.
	full := (&page{Host: "a.example", W: 1, Delta: 0.5, Capture: Capture{Digest: "sha1:A", Date: 9, URI: "u", File: "f"}}).encode(nil)
	if _, err := decodePage(full[:len(full)-3]); err == nil {
		t.Error("a cut capture read")
	}
	long := append(slicesClone(b[:len(b)-1]), 65)
	long = append(long, strings.Repeat("x", 65)...)
	if _, err := decodePage(long); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("a 65-byte digest: %v", err)
	}
	var newer *newerPageError
	if _, err := decodePage(append([]byte{5}, b[1:]...)); !errors.As(err, &newer) {
		t.Errorf("version 5: %v", err)
	}
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }
