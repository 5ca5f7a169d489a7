package queue

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func explainOne(t *testing.T, q *Queue, u string, at time.Time) Explanation {
	t.Helper()
	xs, err := q.Explain([]string{u}, NextOptions{Now: at, N: 10})
	if err != nil || len(xs) != 1 {
		t.Fatalf("explain %s: %v %v", u, xs, err)
	}
	return xs[0]
}

func apply(t *testing.T, q *Queue, i int, at time.Time, b Batch) ApplyStats {
	t.Helper()
	b.Now = at
	st, err := q.Apply(batchID(i, at), b)
	if err != nil || !st.Applied {
		t.Fatalf("batch %d: %+v %v", i, st, err)
	}
	return st
}

func nextURLs(t *testing.T, q *Queue, at time.Time) []string {
	t.Helper()
	cs, _, err := q.Next(NextOptions{Now: at, N: 100, FixLambda0: true})
	if err != nil {
		t.Fatal(err)
	}
	var us []string
	for _, c := range cs {
		us = append(us, c.URL)
	}
	slices.Sort(us)
	return us
}

// A fetched page naming another URL of its host as canonical is not offered
// again; its canonical is, once known; --recrawl-canonicalised keeps both.
func TestCanonicalRetires(t *testing.T) {
	const variant, canon = "http://a.example/shoes?ref=mail", "http://a.example/shoes"
	for _, keep := range []bool{false, true} {
		q := open(t, filepath.Join(t.TempDir(), "s"), Options{Update: UpdateOptions{RecrawlCanonicalised: keep}})
		st := apply(t, q, 1, t0, Batch{Fetches: []Fetch{{URL: variant, Host: "a.example", At: t0, Status: 200,
			Digest: "sha1:X", Canonical: canon}}})
		later := t0.Add(30 * 24 * time.Hour)
		got := nextURLs(t, q, later)
		want := []string{canon}
		if keep {
			want = []string{canon, variant}
		}
		if !slices.Equal(got, want) {
			t.Errorf("keep=%v: offered %q, want %q", keep, got, want)
		}
		if wantN := map[bool]int{false: 1, true: 0}[keep]; st.Canonicalised != wantN {
			t.Errorf("keep=%v: Canonicalised %d, want %d", keep, st.Canonicalised, wantN)
		}
		if keep {
			continue
		}
		// A later fetch naming no other canonical brings the page back.
		apply(t, q, 2, later, Batch{Fetches: []Fetch{{URL: variant, Host: "a.example", At: later, Status: 200, Digest: "sha1:Y"}}})
		if got := nextURLs(t, q, later.Add(60*24*time.Hour)); !slices.Contains(got, variant) {
			t.Errorf("variant not offered after a fetch without canonical: %q", got)
		}
	}
}

// A sitemap changefreq is the prior of a page never observed; it stays the
// page's prior after its first fetch.
func TestChangefreqPrior(t *testing.T) {
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{Update: UpdateOptions{}})
	st := apply(t, q, 1, t0, Batch{Discovered: []Discovery{
		{URL: "http://a.example/live", Host: "a.example", Changefreq: "hourly"},
		{URL: "http://a.example/archive", Host: "a.example", Changefreq: "yearly"},
		{URL: "http://a.example/plain", Host: "a.example"},
	}})
	if st.Changefreqs != 2 {
		t.Errorf("Changefreqs %d, want 2", st.Changefreqs)
	}
	for u, want := range map[string]float64{"http://a.example/live": 24, "http://a.example/archive": 1.0 / 365, "http://a.example/plain": 0.2} {
		if x := explainOne(t, q, u, t0); math.Abs(x.Delta-want) > 1e-9 || !x.Prior {
			t.Errorf("%s: delta %g prior %v, want %g (prior)", u, x.Delta, x.Prior, want)
		}
	}
	at := t0.Add(time.Hour)
	apply(t, q, 2, at, Batch{Fetches: []Fetch{{URL: "http://a.example/archive", Host: "a.example", At: at, Status: 200, Digest: "sha1:A"}}})
	if x := explainOne(t, q, "http://a.example/archive", at); math.Abs(x.Delta-1.0/365) > 1e-9 {
		t.Errorf("archive after one fetch: delta %g, want the changefreq prior %g", x.Delta, 1.0/365)
	}
}

// A sitemap lastmod after the last fetch is an observed change, counted
// once: the next fetch, whose digest differs for that same change, does not
// count it again. A lastmod before the last fetch is an observation
// "unchanged", and the next fetch's interval starts at it.
func TestLastmodEvidence(t *testing.T) {
	const u = "http://a.example/news"
	fetch := func(at time.Time, digest string) Batch {
		return Batch{Fetches: []Fetch{{URL: u, Host: "a.example", At: at, Status: 200, Digest: digest}}}
	}
	day := 24 * time.Hour
	for _, c := range []struct {
		name           string
		lastmod        time.Time
		changesAtSitem int
		nextDigest     string
		wantChanges    int
		wantIntervals  int
	}{
		{"changed", t0.Add(2 * day), 1, "sha1:B", 1, 1},
		{"unchanged then changed", t0.Add(-day), 0, "sha1:B", 1, 2},
		{"unchanged twice", t0.Add(-day), 0, "sha1:A", 0, 2},
	} {
		q := open(t, filepath.Join(t.TempDir(), "s"), Options{})
		apply(t, q, 1, t0, fetch(t0, "sha1:A"))
		st := apply(t, q, 2, t0.Add(3*day), Batch{Discovered: []Discovery{{URL: u, Host: "a.example", Lastmod: c.lastmod}}})
		x := explainOne(t, q, u, t0.Add(3*day))
		if st.Lastmods != 1 || x.Changes != c.changesAtSitem {
			t.Errorf("%s: after the sitemap: %d lastmods, %d changes; want 1, %d", c.name, st.Lastmods, x.Changes, c.changesAtSitem)
		}
		apply(t, q, 3, t0.Add(5*day), fetch(t0.Add(5*day), c.nextDigest))
		x = explainOne(t, q, u, t0.Add(5*day))
		if x.Changes != c.wantChanges || x.Fetches-1 != c.wantIntervals {
			t.Errorf("%s: after the next fetch: %d changes in %d intervals; want %d in %d", c.name, x.Changes, x.Fetches-1, c.wantChanges, c.wantIntervals)
		}
	}
}

// A page stored by the first encoding (no LastObs, PriorRate) still reads.
func TestDecodePageVersion1(t *testing.T) {
	p := &page{Host: "a.example", W: 1, Delta: 0.5, LastFetch: 100, Digest: 7}
	b := p.encode(nil)
	v1 := append([]byte{1}, b[1:len(b)-12]...) // LastObs 0 is one byte, PriorRate eight, no validators two, no capture one
	got, err := decodePage(v1)
	if err != nil || got.LastFetch != 100 || got.Digest != 7 || got.PriorRate != 0 {
		t.Fatalf("version 1: %+v, %v", got, err)
	}
	p.LastObs, p.PriorRate = 200, 1.0/7
	got, err = decodePage(p.encode(nil))
	if err != nil || got.LastObs != 200 || got.PriorRate != 1.0/7 {
		t.Fatalf("version 2: %+v, %v", got, err)
	}
}
