package queue

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
	"github.com/sekitei/crawlkit/pkg/record"
)

// The validators of a page's last successful fetch are kept for the next
// one's conditional request: a 200 replaces them (a validator it lacks is
// dropped), a 304 keeps them and takes the ones it carries, a failure or a
// redirected fetch does not leave the URL with another URL's validators,
// and next hands them out with the page.
func TestValidators(t *testing.T) {
	const u = "http://a.example/news"
	day := 24 * time.Hour
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{})
	fetch := func(i int, status int, digest, etag, lm string) ApplyStats {
		at := t0.Add(time.Duration(i) * day)
		return apply(t, q, i, at, Batch{Fetches: []Fetch{{URL: u, Host: "a.example", At: at, Status: status,
			Digest: digest, ETag: etag, LastModified: lm}}})
	}
	next := func(i int) Candidate {
		t.Helper()
		cs, _, err := q.Next(NextOptions{Now: t0.Add(time.Duration(i)*day + 12*time.Hour), N: 10, FixLambda0: true})
		if err != nil || len(cs) != 1 || cs[0].URL != u {
			t.Fatalf("turn %d: next %+v %v", i, cs, err)
		}
		return cs[0]
	}
	const lm1, lm2 = "Sat, 01 Nov 2026 00:00:00 GMT", "Mon, 03 Nov 2026 00:00:00 GMT"
	steps := []struct {
		name                   string
		status                 int
		digest, etag, lm       string
		wantETag, wantLM       string
		wantFetches, wantChngs int
	}{
		{"first 200", 200, "sha1:A", `"v1"`, lm1, `"v1"`, lm1, 1, 0},
		{"304 without validators", 304, "", "", "", `"v1"`, lm1, 2, 0},
		{"304 with a new ETag", 304, "", `"v1b"`, "", `"v1b"`, lm1, 3, 0},
		{"changed 200", 200, "sha1:B", `"v2"`, lm2, `"v2"`, lm2, 4, 1},
		{"failed fetch", 503, "", `"junk"`, "", `"v2"`, lm2, 4, 1},
		{"200 with Last-Modified only", 200, "sha1:B", "", lm2, "", lm2, 5, 1},
		{"ETag with a line break", 200, "sha1:B", "\"x\"\r\nX-Evil: 1", lm1, "", lm1, 6, 1},
	}
	for i, s := range steps {
		st := fetch(i+1, s.status, s.digest, s.etag, s.lm)
		if s.status == 304 && (st.Unchanged != 1 || st.Changed != 0) {
			t.Errorf("%s: %d unchanged, %d changed; a 304 is one observation unchanged", s.name, st.Unchanged, st.Changed)
		}
		x := explainOne(t, q, u, t0.Add(time.Duration(i+1)*day))
		if x.ETag != s.wantETag || x.LastModified != s.wantLM || x.Fetches != s.wantFetches || x.Changes != s.wantChngs {
			t.Errorf("%s: state ETag %q Last-Modified %q, %d fetches %d changes; want %q %q, %d %d",
				s.name, x.ETag, x.LastModified, x.Fetches, x.Changes, s.wantETag, s.wantLM, s.wantFetches, s.wantChngs)
		}
		if s.status == 503 {
			continue // waiting to retry: not offered
		}
		if c := next(i + 1); c.ETag != s.wantETag || c.LastModified != s.wantLM {
			t.Errorf("%s: next offers ETag %q Last-Modified %q; want %q %q", s.name, c.ETag, c.LastModified, s.wantETag, s.wantLM)
		}
	}
	// A fetch redirected elsewhere leaves no validators: fetch would send
	// the final URL's to this one.
	at := t0.Add(20 * day)
	apply(t, q, 20, at, Batch{Fetches: []Fetch{{URL: u, Host: "a.example", At: at, Status: 200, Digest: "sha1:C",
		ETag: `"other"`, LastModified: lm2, Redirected: true}}})
	if x := explainOne(t, q, u, at); x.ETag != "" || x.LastModified != "" {
		t.Errorf("redirected: state keeps ETag %q Last-Modified %q", x.ETag, x.LastModified)
	}
}

// ParseFetch reads fetch's etag and last_modified, and tells a redirected
// fetch by its redirects or a final_url of another normal form.
func TestParseFetchValidators(t *testing.T) {
	for _, c := range []struct {
		in         string
		etag, lm   string
		redirected bool
	}{
		{`{"url":"http://a.example/","status":304,"fetched_at":"2026-11-01T00:00:00Z","final_url":"http://a.example/","etag":"W/\"1\"","last_modified":"Sat, 01 Nov 2026 00:00:00 GMT"}`,
			`W/"1"`, "Sat, 01 Nov 2026 00:00:00 GMT", false},
		{`{"url":"http://a.example/","status":200,"fetched_at":"2026-11-01T00:00:00Z","final_url":"http://a.example/b","etag":"\"2\""}`,
			`"2"`, "", true},
		{`{"url":"http://a.example/","status":200,"fetched_at":"2026-11-01T00:00:00Z"}`, "", "", false},
		// The URL as written and as the URL Standard serialises it, with
		// no hop between: the validators are this page's.
		{`{"url":"HTTP://A.example:80/x?b=2&a=1","status":200,"fetched_at":"2026-11-01T00:00:00Z","final_url":"http://a.example/x?b=2&a=1","etag":"\"3\""}`,
			`"3"`, "", false},
		// A redirect back to the same spelling still counts, by its hops.
		{`{"url":"http://a.example/","status":200,"fetched_at":"2026-11-01T00:00:00Z","final_url":"http://a.example/","redirects":[{"url":"http://a.example/","status":302}],"etag":"\"4\""}`,
			`"4"`, "", true},
	} {
		f, err := ParseFetch(mustRecord(t, c.in))
		if err != nil || f.ETag != c.etag || f.LastModified != c.lm || f.Redirected != c.redirected {
			t.Errorf("%s: %+v %v", c.in, f, err)
		}
	}
}

// Pages of encoding 2 (no validators) read, with none; a state rewritten
// by a batch keeps its other fields. A page of an encoding newer than this
// recrawl's is refused naming both, and nothing is written.
func TestDecodePageVersion2(t *testing.T) {
	p := &page{Host: "a.example", W: 1, Delta: 0.5, LastFetch: 100, Digest: 7, LastObs: 200, PriorRate: 1.0 / 7,
		ETag: `"e"`, LastModified: "Sat, 01 Nov 2026 00:00:00 GMT"}
	b := p.encode(nil)
	if b[0] != pageEncoding {
		t.Fatalf("page encoding %d, want %d", b[0], pageEncoding)
	}
	got, err := decodePage(b)
	if err != nil || got.ETag != p.ETag || got.LastModified != p.LastModified || got.LastObs != 200 {
		t.Fatalf("version %d: %+v, %v", pageEncoding, got, err)
	}
	// Version 2 is version 4 without the two length-prefixed validators
	// and the (empty) capture.
	p.ETag, p.LastModified = "", ""
	b = p.encode(nil)
	v2 := append([]byte{2}, b[1:len(b)-3]...)
	got, err = decodePage(v2)
	if err != nil || got.ETag != "" || got.LastModified != "" || got.LastObs != 200 || got.PriorRate != 1.0/7 || got.Digest != 7 {
		t.Fatalf("version 2: %+v, %v", got, err)
	}
	if _, err := decodePage(append([]byte{3}, b[1:len(b)-3]...)); err == nil {
		t.Error("version 3 without its validators read")
	}
	v5 := append([]byte{5}, b[1:]...)
	var newer *newerPageError
	if _, err := decodePage(v5); !errors.As(err, &newer) {
		t.Errorf("version 5: %v", err)
	}
}

// A state whose pages were written in encoding 2 is read and updated; one
// with a page of a newer encoding is refused with a clear message.
func TestStateVersion2Pages(t *testing.T) {
	const u = "http://a.example/p"
	path := filepath.Join(t.TempDir(), "s")
	q := open(t, path, Options{})
	apply(t, q, 1, t0, Batch{Fetches: []Fetch{{URL: u, Host: "a.example", At: t0, Status: 200, Digest: "sha1:A"}}})
	q.Close()
	// rewrite sets the page's encoding byte; to 2, it drops its (empty)
	// validators and capture too.
	rewrite := func(version byte) {
		t.Helper()
		db, err := boltstate.Open(path, boltstate.Options{Kind: "recrawl state", Buckets: bucketNames(bPages, bDue, bBlocked, bCells, bHosts, bMeta)})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.Update(func(tx *boltstate.Tx) error {
			b := tx.Bucket(bPages)
			v, err := b.Get([]byte(u))
			if err != nil {
				return err
			}
			if v[0] != pageEncoding {
				t.Fatalf("page %x: want encoding %d", v, pageEncoding)
			}
			if version != 2 {
				return b.Put([]byte(u), append([]byte{version}, v[1:]...))
			}
			if v[len(v)-3] != 0 || v[len(v)-2] != 0 || v[len(v)-1] != 0 {
				t.Fatalf("page %x: want two empty validators and no capture at the end", v)
			}
			return b.Put([]byte(u), append([]byte{2}, v[1:len(v)-3]...))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rewrite(2)
	q = open(t, path, Options{})
	if x := explainOne(t, q, u, t0); x.Fetches != 1 || x.ETag != "" {
		t.Fatalf("version 2 page: %+v", x)
	}
	at := t0.Add(48 * time.Hour)
	st := apply(t, q, 2, at, Batch{Fetches: []Fetch{{URL: u, Host: "a.example", At: at, Status: 304, ETag: `"n"`}}})
	if x := explainOne(t, q, u, at); st.Unchanged != 1 || x.Fetches != 2 || x.Changes != 0 || x.ETag != `"n"` {
		t.Fatalf("version 2 page after a 304: %+v, %+v", st, x)
	}
	q.Close()

	rewrite(9)
	before, _ := os.ReadFile(path)
	q = open(t, path, Options{})
	_, err := q.Apply(batchID(3, at.Add(time.Hour)), Batch{Now: at.Add(time.Hour),
		Fetches: []Fetch{{URL: u, Host: "a.example", At: at.Add(time.Hour), Status: 200, Digest: "sha1:B"}}})
	var se *StateError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), path) ||
		!strings.Contains(err.Error(), "page encoding 9, written by a newer recrawl (this recrawl reads encodings 1 to 4)") {
		t.Fatalf("newer page: %v", err)
	}
	if _, _, err := q.Next(NextOptions{Now: at.Add(240 * time.Hour), N: 10, FixLambda0: true}); err == nil || !strings.Contains(err.Error(), "newer recrawl") {
		t.Errorf("next over a newer page: %v", err)
	}
	q.Close()
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the state was written to")
	}
}

func mustRecord(t *testing.T, line string) *record.Record {
	t.Helper()
	r, err := record.Parse([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
