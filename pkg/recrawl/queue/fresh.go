package queue

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
)

// Freshness of a crawl: the objective of "Crawling the internet: data
// science within a large engineering system" (Bill Richoux, 2018),
// F(t) = sum_j w_j e^(-delta_j (t - t_j)) / sum_j w_j over the pages fetched
// at least once (t_j the last fetch), with each page's estimated delta.
// A page the queue will never offer again (retired for its canonical)
// leaves the sums: it would otherwise age there unfetched, pulling the
// estimate down for a copy the crawl no longer keeps. A page whose fetch
// failed stays: it is offered again after its retry wait, and its last
// good copy ages meanwhile.
//
// Kept incrementally, so that a batch costs O(batch): pages are summed per
// change-rate bin (1/4 octave, the cells' delta bins), where they share
// one delta_c (the bin's geometric middle, at most 4.5% off a page's own,
// which moves F by at most 0.017), so that a bin's sum factors:
// S_c(r) = sum_j w_j e^(-delta_c (r - t_j)) at a reference time r, rebased
// as r moves (S_c(r') = S_c(r) e^(-delta_c (r' - r))), and a page's term
// added or taken away when it is fetched, reweighted or moves bin. F(t) is
// then a sum over the bins, a few dozen, never over the pages.

// Both live in the meta bucket, under key prefixes, so that the state's
// buckets and format stay as they were and an older state gains them on
// its next batch.
var (
	pFresh      = []byte("fresh/")   // + delta bin -> ref unix s, S, W
	pHistory    = []byte("history/") // + batch ID -> HistoryEntry (JSON)
	kFreshBuilt = []byte("fresh_built")
)

// freshVersion is what kFreshBuilt holds once the sums are built: 2 leaves
// retired pages out (1 counted them). Sums of another version are rebuilt.
const freshVersion = 2

// freshTerm is what one page adds to its bin.
type freshTerm struct {
	db   int16
	w    float64
	last int64 // 0: never fetched, adds nothing
}

func termOf(p *page) freshTerm {
	if p.blockedUntil() == retired {
		return freshTerm{db: binOf(p.Delta), w: p.W} // never offered again: not in the sums
	}
	return freshTerm{db: binOf(p.Delta), w: p.W, last: p.LastFetch}
}

// binDelta is the change rate per second all pages of a bin share.
func binDelta(db int16) float64 {
	return binLow(db) * math.Exp2(0.5/cellsPerOctave) / 86400
}

type freshBin struct {
	ref  int64
	s, w float64
}

func (b *freshBin) rebase(t int64, db int16) {
	if t > b.ref {
		b.s *= math.Exp(-binDelta(db) * float64(t-b.ref))
		b.ref = t
	}
}

func (b *freshBin) add(t freshTerm, sign float64) {
	if t.last == 0 || !(t.w > 0) {
		return
	}
	b.rebase(t.last, t.db)
	b.s += sign * t.w * math.Exp(-binDelta(t.db)*float64(b.ref-t.last))
	b.w += sign * t.w
	// Rounding must not leave a bin with less than nothing.
	b.s, b.w = math.Max(b.s, 0), math.Max(b.w, 0)
}

func binKey(db int16) []byte {
	return binary.BigEndian.AppendUint16(append([]byte(nil), pFresh...), uint16(db)^0x8000)
}

func binOfKey(k []byte) int16 { return int16(binary.BigEndian.Uint16(k[len(pFresh):]) ^ 0x8000) }

func (b *freshBin) encode() []byte {
	v := binary.BigEndian.AppendUint64(nil, uint64(b.ref))
	v = binary.LittleEndian.AppendUint64(v, math.Float64bits(b.s))
	return binary.LittleEndian.AppendUint64(v, math.Float64bits(b.w))
}

func decodeBin(v []byte) (freshBin, bool) {
	if len(v) != 24 {
		return freshBin{}, false
	}
	return freshBin{ref: int64(binary.BigEndian.Uint64(v)), s: math.Float64frombits(binary.LittleEndian.Uint64(v[8:])),
		w: math.Float64frombits(binary.LittleEndian.Uint64(v[16:]))}, true
}

// freshSums are the bins a batch changes, read once and written at commit.
type freshSums struct {
	b    *boltstate.Bucket
	bins map[int16]*freshBin
}

func (f *freshSums) bin(db int16) (*freshBin, error) {
	if x := f.bins[db]; x != nil {
		return x, nil
	}
	v, err := f.b.Get(binKey(db))
	if err != nil {
		return nil, err
	}
	x, _ := decodeBin(v)
	f.bins[db] = &x
	return &x, nil
}

func (f *freshSums) move(old, new freshTerm, hadOld bool) error {
	if hadOld && old == new {
		return nil
	}
	if hadOld && old.last != 0 {
		b, err := f.bin(old.db)
		if err != nil {
			return err
		}
		b.add(old, -1)
	}
	b, err := f.bin(new.db)
	if err != nil {
		return err
	}
	b.add(new, 1)
	return nil
}

func (f *freshSums) write() error {
	for db, b := range f.bins {
		var err error
		if b.w <= 0 {
			err = f.b.Delete(binKey(db))
		} else {
			err = f.b.Put(binKey(db), b.encode())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// freshBuilt reports whether the sums are built, and of this version.
func freshBuilt(meta *boltstate.Bucket) (bool, error) {
	v, err := meta.Get(kFreshBuilt)
	return len(v) == 1 && v[0] == freshVersion, err
}

// buildFresh sums every page once, for a state written before the sums
// were kept or kept by another rule (an older version's are dropped first).
func buildFresh(meta, pages *boltstate.Bucket, q *Queue) error {
	var old [][]byte
	mc := meta.Cursor()
	for k, _ := mc.Seek(pFresh); k != nil && hasPrefix(k, pFresh); k, _ = mc.Next() {
		old = append(old, append([]byte(nil), k...))
	}
	if err := mc.Err(); err != nil {
		return err
	}
	for _, k := range old {
		if err := meta.Delete(k); err != nil {
			return err
		}
	}
	f := &freshSums{b: meta, bins: map[int16]*freshBin{}}
	c := pages.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		p, err := decodePage(v)
		if err != nil {
			return q.corrupt(bPages, k, err)
		}
		if err := f.move(freshTerm{}, termOf(p), false); err != nil {
			return err
		}
	}
	if err := c.Err(); err != nil {
		return err
	}
	if err := f.write(); err != nil {
		return err
	}
	return meta.Put(kFreshBuilt, []byte{freshVersion})
}

// freshnessAt evaluates F(at) from the bins: the estimate and the weight
// of the pages it covers.
func freshnessAt(meta *boltstate.Bucket, at int64) (float64, float64, error) {
	var s, w float64
	c := meta.Cursor()
	for k, v := c.Seek(pFresh); k != nil && hasPrefix(k, pFresh); k, v = c.Next() {
		x, ok := decodeBin(v)
		if !ok || len(k) != len(pFresh)+2 {
			continue
		}
		x.rebase(at, binOfKey(k))
		s += x.s
		w += x.w
	}
	if err := c.Err(); err != nil {
		return 0, 0, err
	}
	if w <= 0 {
		return 0, 0, nil
	}
	return math.Min(s/w, 1), w, nil
}

// Freshness returns the estimated weighted freshness of the crawl at a
// time (see above) and the weight of the pages it covers, those fetched at
// least once and not retired (0: none).
func (q *Queue) Freshness(at time.Time) (est, weight float64, err error) {
	err = q.view(func(tx *boltstate.Tx) error {
		b := tx.Bucket(bMeta)
		if b == nil {
			return nil
		}
		est, weight, err = freshnessAt(b, at.Unix())
		return err
	})
	return est, weight, err
}

// HistoryEntry is one batch's line of the freshness history, recorded in
// the same transaction as the batch.
type HistoryEntry struct {
	Batch    string    `json:"batch"`
	Time     time.Time `json:"time"`
	Pages    int       `json:"pages"`    // pages in the state
	Fetches  int       `json:"fetches"`  // fetches in the batch
	Failures int       `json:"failures"` // failed fetches in the batch
	// Estimated is F at the batch's time after it was applied, over the
	// pages of weight Known fetched at least once and not retired.
	Estimated float64 `json:"estimated"`
	Known     float64 `json:"known_weight"`
	// Observed is the weighted share of the batch's recrawls found
	// unchanged (of weight Recrawled); -1 when none was recrawled.
	Observed  float64 `json:"observed"`
	Recrawled float64 `json:"recrawled_weight"`
}

// recordHistory writes a batch's entry.
func recordHistory(meta *boltstate.Bucket, e HistoryEntry) error {
	v, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return meta.Put(append(append([]byte(nil), pHistory...), e.Batch...), v)
}

// History returns every batch's entry, oldest first.
func (q *Queue) History() ([]HistoryEntry, error) {
	var out []HistoryEntry
	err := q.view(func(tx *boltstate.Tx) error {
		b := tx.Bucket(bMeta)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Seek(pHistory); k != nil && hasPrefix(k, pHistory); k, v = c.Next() {
			var e HistoryEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return q.corrupt(bMeta, k, err)
			}
			out = append(out, e)
		}
		return c.Err()
	})
	return out, err
}

// PageInfo is what a report needs of one page.
type PageInfo struct {
	URL, Host string
	W, Delta  float64 // weight used, change rate per day (estimate or prior)
	Prior     bool    // Delta is the prior
	LastFetch int64   // unix seconds of the last successful fetch; 0: never
	Failures  int     // failed fetches in a row
	Fetches   int     // fetch intervals observed (ChangeStats.N)
}

// Pages calls fn for every page of the state, in URL order.
func (q *Queue) Pages(fn func(PageInfo) error) error {
	return q.view(func(tx *boltstate.Tx) error {
		b := tx.Bucket(bPages)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			p, err := decodePage(v)
			if err != nil {
				return q.corrupt(bPages, k, err)
			}
			if err := fn(PageInfo{URL: string(k), Host: p.Host, W: p.W, Delta: p.Delta, Prior: p.Prior,
				LastFetch: p.LastFetch, Failures: int(p.Failures), Fetches: p.Stats.N}); err != nil {
				return err
			}
		}
		return c.Err()
	})
}
