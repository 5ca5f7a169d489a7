package queue

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
)

// bruteFreshness sums F(at) over the stored pages one by one, with the
// rule the sums keep: fetched at least once and not retired, each page at
// its bin's change rate.
func bruteFreshness(t *testing.T, q *Queue, at time.Time) (float64, float64) {
	t.Helper()
	var s, w float64
	err := q.view(func(tx *boltstate.Tx) error {
		return tx.Bucket(bPages).ForEach(func(k, v []byte) error {
			p, err := decodePage(v)
			if err != nil {
				return err
			}
			if p.LastFetch == 0 || p.Flags&flagCanonical != 0 {
				return nil
			}
			s += p.W * math.Exp(-binDelta(binOf(p.Delta))*float64(at.Unix()-p.LastFetch))
			w += p.W
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if w == 0 {
		return 0, 0
	}
	return s / w, w
}

func checkFreshness(t *testing.T, q *Queue, at time.Time, wantWeight float64, when string) {
	t.Helper()
	est, w, err := q.Freshness(at)
	if err != nil {
		t.Fatal(err)
	}
	bf, bw := bruteFreshness(t, q, at)
	if math.Abs(w-wantWeight) > 1e-9 || math.Abs(bw-wantWeight) > 1e-9 {
		t.Errorf("%s: weight in the sums %g (page by page %g), want %g", when, w, bw, wantWeight)
	}
	if math.Abs(est-bf) > 1e-9 {
		t.Errorf("%s: freshness %g from the sums, %g page by page", when, est, bf)
	}
}

// A page retired for its canonical leaves the freshness sums in the batch
// that retires it (it is never fetched again, so it would only age there),
// comes back when a fetch names no other canonical, and a state whose sums
// were kept by the older rule (retired pages counted) has them rebuilt.
func TestRetiredLeavesFreshness(t *testing.T) {
	const host = "a.example"
	keep, copyURL, canon := "http://a.example/keep", "http://a.example/story?print=1", "http://a.example/story"
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{})
	weights := []Weight{{URL: keep, Host: host, Importance: 3}, {URL: copyURL, Host: host, Importance: 1}}
	apply(t, q, 1, t0, Batch{Weights: weights, Fetches: []Fetch{
		{URL: keep, Host: host, At: t0, Status: 200, Digest: "sha1:K"},
		{URL: copyURL, Host: host, At: t0, Status: 200, Digest: "sha1:C"}}})
	checkFreshness(t, q, t0.Add(12*time.Hour), 4, "both fetched")

	t1 := t0.Add(24 * time.Hour)
	st := apply(t, q, 2, t1, Batch{Fetches: []Fetch{{URL: copyURL, Host: host, At: t1, Status: 200, Digest: "sha1:C", Canonical: canon}}})
	if st.Canonicalised != 1 || st.KnownWeight != 3 {
		t.Errorf("retiring batch: canonicalised %d, known weight %g, want 1 and 3 (the copy left)", st.Canonicalised, st.KnownWeight)
	}
	checkFreshness(t, q, t1.Add(48*time.Hour), 3, "copy retired")
	// Batches that do not touch the retired page leave it out.
	t2 := t1.Add(24 * time.Hour)
	apply(t, q, 3, t2, Batch{Fetches: []Fetch{{URL: keep, Host: host, At: t2, Status: 200, Digest: "sha1:K2"}}})
	checkFreshness(t, q, t2.Add(time.Hour), 3, "after a later batch")

	// A state whose sums counted the retired page (the older rule): put
	// its term back by hand and mark the sums as of version 1.
	err := q.db.Update(func(tx *boltstate.Tx) error {
		meta := tx.Bucket(bMeta)
		v, err := tx.Bucket(bPages).Get([]byte(copyURL))
		if err != nil {
			return err
		}
		p, err := decodePage(v)
		if err != nil {
			return err
		}
		f := &freshSums{b: meta, bins: map[int16]*freshBin{}}
		b, err := f.bin(binOf(p.Delta))
		if err != nil {
			return err
		}
		b.add(freshTerm{db: binOf(p.Delta), w: p.W, last: p.LastFetch}, 1)
		if err := f.write(); err != nil {
			return err
		}
		return meta.Put(kFreshBuilt, []byte{1})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, w, _ := q.Freshness(t2); math.Abs(w-4) > 1e-9 {
		t.Fatalf("old-rule sums: weight %g, want 4 (the retired copy counted)", w)
	}
	t3 := t2.Add(time.Hour)
	apply(t, q, 4, t3, Batch{})
	checkFreshness(t, q, t3, 3, "old-rule sums rebuilt")

	// A fetch naming no other canonical brings the copy back.
	t4 := t3.Add(24 * time.Hour)
	apply(t, q, 5, t4, Batch{Fetches: []Fetch{{URL: copyURL, Host: host, At: t4, Status: 200, Digest: "sha1:C"}}})
	checkFreshness(t, q, t4.Add(6*time.Hour), 4, "copy back")
}
