package queue

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
	"github.com/sekitei/crawlkit/pkg/recrawl"
)

// NextOptions configure one selection.
type NextOptions struct {
	Now time.Time
	// N caps the pages taken (0: Rate*Slot).
	N int
	// Rate is the global limit k_0 in crawls per day (0: N/Slot, for
	// lambda_0); Slot the turn's length in days.
	Rate, Slot float64
	// HostRate gives a host's limit k_i in crawls per day (0: none).
	HostRate func(host string) float64
	// Lambda0 is used instead of the aggregates' when FixLambda0 (a value
	// reduced from the shards' summaries).
	Lambda0    float64
	FixLambda0 bool
}

// A Candidate is a page to fetch now.
type Candidate struct {
	URL, Host string
	Value     float64 // crawl value V now
	W, Delta  float64
	LastFetch int64 // unix seconds; 0: never fetched
	Prior     bool  // Delta is the prior
	// ETag and LastModified are the validators of the page's last
	// successful fetch ("": none), for a conditional request.
	ETag, LastModified string
	// Capture is the archived response of the page's last payload (File
	// "": none), which fetch refers to when the payload is unchanged.
	Capture Capture
	read    bool // ETag, LastModified and Capture were read from the page
}

// NextInfo tells how a selection went.
type NextInfo struct {
	Lambda0   float64
	Estimated bool // lambda_0 came from the aggregates
	GlobalCap int
	// Cut is the value of the last page taken when the global cap was
	// reached (0 otherwise).
	Cut float64
	// Touched counts the index entries read: the cost of the selection.
	Touched, Cells int
	// HostCap is the cap of each host met (-1: none), HostTaken how many
	// of its pages were taken and HostFull whether its cap left out a
	// page that was otherwise good enough.
	HostCap   map[string]int
	HostTaken map[string]int
	HostFull  map[string]bool
}

// better orders candidates: higher value first, then by URL.
func better(a, b *Candidate) int {
	if c := cmp.Compare(b.Value, a.Value); c != 0 {
		return c
	}
	return strings.Compare(a.URL, b.URL)
}

// Better reports whether a ranks before b (crawl_value, then url), the
// order of Next's output and of merged shard outputs.
func Better(av float64, au string, bv float64, bu string) bool {
	return better(&Candidate{Value: av, URL: au}, &Candidate{Value: bv, URL: bu}) < 0
}

// xStar maximises g(x)/x (g the unit crawl value): e^x = 1 + x + x^2.
var xStar = func() float64 {
	lo, hi := 1.0, 3.0
	for i := 0; i < 100; i++ {
		m := (lo + hi) / 2
		if math.Exp(m) < 1+m+m*m {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}()

// cellBound is an upper bound of V(tau) over the pages of a cell.
func cellBound(c cell, tau float64) float64 {
	wHi, dLo, dHi := binLow(c.wb+1), binLow(c.db), binLow(c.db+1)
	d := math.Max(dLo, math.Min(dHi, xStar/tau))
	return recrawl.Freshness.Value(wHi, d, tau) * (1 + 1e-9)
}

func cellMax(c cell) float64 { return binLow(c.wb+1) / binLow(c.db) * (1 + 1e-9) }

// cellCentre is the geometric centre of a cell: the (w, delta) the
// aggregates count its pages at.
func cellCentre(c cell) (float64, float64) {
	h := math.Exp2(0.5 / cellsPerOctave)
	return binLow(c.wb) * h, binLow(c.db) * h
}

type cellCount struct {
	c cell
	n int64
}

func readCells(tx *boltstate.Tx, q *Queue) ([]cellCount, error) {
	var cs []cellCount
	err := tx.Bucket(bCells).ForEach(func(k, v []byte) error {
		n, m := binary.Varint(v)
		if len(k) != 4 || m <= 0 || n <= 0 {
			return q.corrupt(bCells, k, errors.New("bad count"))
		}
		cs = append(cs, cellCount{cellOf(k), n})
		return nil
	})
	return cs, err
}

// demand is sum over pages of the optimal crawl rate at threshold mu.
func demand(cs []cellCount, mu float64) float64 {
	s := 0.0
	for _, c := range cs {
		w, d := cellCentre(c.c)
		s += float64(c.n) * recrawl.Freshness.Rate(w, d, mu)
	}
	return s
}

// solveLambda0 solves demand(mu) = rate; 0 when the pages cannot use the
// rate even at a threshold a billionth of the lowest w/delta.
func solveLambda0(cs []cellCount, rate float64) float64 {
	if len(cs) == 0 || !(rate > 0) || math.IsInf(rate, 0) {
		return 0
	}
	lo, hi := math.Inf(1), 0.0
	for _, c := range cs {
		w, d := cellCentre(c.c)
		lo, hi = math.Min(lo, w/d), math.Max(hi, w/d)
	}
	lo *= 1e-9
	if demand(cs, lo) <= rate {
		return 0
	}
	a, b := math.Log(lo), math.Log(hi)
	for i := 0; i < 100 && b-a > 1e-10; i++ {
		m := (a + b) / 2
		if demand(cs, math.Exp(m)) > rate {
			a = m
		} else {
			b = m
		}
	}
	return math.Exp(b)
}

// Lambda0 returns the global threshold for the options: the given one, or
// the root of the aggregates' equation for the rate (N/Slot without one).
func (q *Queue) Lambda0(opt NextOptions) (float64, error) {
	if opt.FixLambda0 {
		return opt.Lambda0, nil
	}
	var l0 float64
	err := q.view(func(tx *boltstate.Tx) error {
		cs, err := readCells(tx, q)
		if err != nil {
			return err
		}
		l0 = solveLambda0(cs, globalRate(opt))
		return nil
	})
	return l0, err
}

func globalRate(opt NextOptions) float64 {
	if opt.Rate > 0 {
		return opt.Rate
	}
	if opt.N > 0 && opt.Slot > 0 {
		return float64(opt.N) / opt.Slot
	}
	return 0
}

// selector keeps the best candidates under the host caps and the global cap.
type selector struct {
	q         *Queue
	tx        *boltstate.Tx
	opt       NextOptions
	now       int64
	gcap      int
	cands     []Candidate
	info      *NextInfo
	cut       float64 // lambda_0, then the value of the gcap-th taken
	cutURL    string  // set once the global cap is reached
	full      bool
	sinceLast int
}

// hostCap is a host's cap for the slot: floor(k_i * slot), and for a limit
// below one crawl a slot, one crawl once 1/k_i has passed since the host's
// last fetch.
func (s *selector) hostCap(host string) int {
	if c, ok := s.info.HostCap[host]; ok {
		return c
	}
	c := -1
	if s.opt.HostRate != nil {
		if k := s.opt.HostRate(host); k > 0 && !math.IsInf(k, 0) {
			c = int(math.Floor(k*s.opt.Slot + 1e-9))
			if c == 0 {
				// A record failing its check fails the transaction.
				v, _ := s.tx.Bucket(bHosts).Get([]byte(host))
				last, n := binary.Varint(v)
				if n <= 0 || float64(s.now-last) >= 86400/k {
					c = 1
				}
			}
		}
	}
	s.info.HostCap[host] = c
	return c
}

// reselect keeps the candidates that are taken as things stand; the others
// can never be, since later candidates only push the cut up.
func (s *selector) reselect() {
	slices.SortFunc(s.cands, func(a, b Candidate) int { return better(&a, &b) })
	taken := map[string]int{}
	out := s.cands[:0]
	for _, c := range s.cands {
		if len(out) == s.gcap {
			break
		}
		hc := s.hostCap(c.Host)
		if hc >= 0 && taken[c.Host] >= hc {
			s.info.HostFull[c.Host] = true
			continue
		}
		taken[c.Host]++
		out = append(out, c)
	}
	s.cands = out
	s.info.HostTaken = taken
	if len(out) == s.gcap && s.gcap > 0 {
		s.full = true
		last := out[len(out)-1]
		s.cut, s.cutURL = last.Value, last.URL
	}
	s.sinceLast = 0
}

func (s *selector) add(c Candidate) {
	if !(c.Value > 0) || c.Value < s.info.Lambda0 {
		return
	}
	if s.full && better(&c, &Candidate{Value: s.cut, URL: s.cutURL}) > 0 {
		return
	}
	s.cands = append(s.cands, c)
	s.sinceLast++
	if s.sinceLast >= max(s.gcap, 64) {
		s.reselect()
	}
}

// Next returns the pages to fetch now, best first. It reads the state
// only: running it twice gives the same pages.
func (q *Queue) Next(opt NextOptions) ([]Candidate, *NextInfo, error) {
	info := &NextInfo{HostCap: map[string]int{}, HostTaken: map[string]int{}, HostFull: map[string]bool{}}
	gcap := opt.N
	if gcap <= 0 {
		if !(opt.Rate > 0) || !(opt.Slot > 0) {
			return nil, nil, errors.New("next needs N or a rate and a slot")
		}
		gcap = max(1, int(math.Floor(opt.Rate*opt.Slot+1e-9)))
	}
	info.GlobalCap = gcap
	var out []Candidate
	err := q.view(func(tx *boltstate.Tx) error {
		cs, err := readCells(tx, q)
		if err != nil {
			return err
		}
		info.Lambda0, info.Estimated = opt.Lambda0, !opt.FixLambda0
		if !opt.FixLambda0 {
			info.Lambda0 = solveLambda0(cs, globalRate(opt))
		}
		s := &selector{q: q, tx: tx, opt: opt, now: opt.Now.Unix(), gcap: gcap, info: info, cut: info.Lambda0}
		if err := s.expired(); err != nil {
			return err
		}
		slices.SortFunc(cs, func(a, b cellCount) int {
			if c := cmp.Compare(cellMax(b.c), cellMax(a.c)); c != 0 {
				return c
			}
			return cmp.Compare(a.c.db, b.c.db)
		})
		cur := tx.Bucket(bDue).Cursor()
		for _, cc := range cs {
			if cellMax(cc.c) < s.cut {
				break
			}
			info.Cells++
			if err := s.scanCell(cur, cc.c); err != nil {
				return err
			}
		}
		s.reselect()
		if err := s.validators(); err != nil {
			return err
		}
		out = s.cands
		if s.full {
			info.Cut = s.cut
		}
		return nil
	})
	return out, info, err
}

// expired adds the pages whose retry or deferral ran out since the last
// batch (update moves them back to the due index).
func (s *selector) expired() error {
	pages := s.tx.Bucket(bPages)
	c := s.tx.Bucket(bBlocked).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) < 8 {
			return s.q.corrupt(bBlocked, k, errors.New("short key"))
		}
		until, url := blockedOf(k)
		if until > s.now {
			return nil
		}
		s.info.Touched++
		v, err := pages.Get([]byte(url))
		if err != nil {
			return err
		}
		if v == nil {
			return s.q.corrupt(bBlocked, k, errors.New("no such page"))
		}
		p, err := decodePage(v)
		if err != nil {
			return s.q.corrupt(bPages, []byte(url), err)
		}
		s.add(p.candidate(url, s.now))
	}
	return c.Err()
}

func (p *page) candidate(url string, now int64) Candidate {
	return Candidate{URL: url, Host: p.Host, W: p.W, Delta: p.Delta, LastFetch: p.LastFetch, Prior: p.Prior,
		Value: value(p.W, p.Delta, p.LastFetch, now), ETag: p.ETag, LastModified: p.LastModified, Capture: p.Capture, read: true}
}

// validators fills in the validators and capture of the pages taken that
// were fetched before: one page read each, for the N taken only (the due
// index does not hold them).
func (s *selector) validators() error {
	pages := s.tx.Bucket(bPages)
	for i := range s.cands {
		c := &s.cands[i]
		if c.LastFetch == 0 || c.read {
			continue
		}
		v, err := pages.Get([]byte(c.URL))
		if err != nil {
			return err
		}
		if v == nil {
			return s.q.corrupt(bDue, []byte(c.URL), errors.New("no such page"))
		}
		p, err := decodePage(v)
		if err != nil {
			return s.q.corrupt(bPages, []byte(c.URL), err)
		}
		c.ETag, c.LastModified, c.Capture, c.read = p.ETag, p.LastModified, p.Capture, true
	}
	return nil
}

// value is V at now for a page last fetched at last (0: never).
func value(w, delta float64, last, now int64) float64 {
	if last == 0 {
		return recrawl.Freshness.Value(w, delta, math.Inf(1))
	}
	return recrawl.Freshness.Value(w, delta, float64(now-last)/86400)
}

// scanCell reads a cell's never-fetched pages by w/delta and its fetched
// pages oldest first, until nothing further can reach the cut.
func (s *selector) scanCell(cur *boltstate.Cursor, c cell) error {
	prefix := c.key()
	for k, v := cur.Seek(prefix); k != nil && hasPrefix(k, prefix); k, v = cur.Next() {
		e, err := decodeDue(k, v)
		if err != nil {
			return s.q.corrupt(bDue, k, err)
		}
		s.info.Touched++
		cand := Candidate{URL: e.url, Host: e.host, W: e.w, Delta: e.delta, LastFetch: e.lastFetch}
		if e.lastFetch == 0 {
			cand.Value = e.w / e.delta
			cand.Prior = true
			if cand.Value < s.info.Lambda0 || s.full && better(&cand, &Candidate{Value: s.cut, URL: s.cutURL}) > 0 {
				// The rest of the never-fetched part is worse; go on
				// to the fetched part.
				k2 := append(slices.Clone(prefix), 1)
				k, _ = cur.Seek(k2)
				if k == nil || !hasPrefix(k, prefix) {
					return cur.Err()
				}
				cur.Prev()
				continue
			}
			s.add(cand)
			continue
		}
		tau := float64(s.now-e.lastFetch) / 86400
		if tau <= 0 || cellBound(c, tau) < s.cut {
			return nil
		}
		cand.Value = recrawl.Freshness.Value(e.w, e.delta, tau)
		s.add(cand)
	}
	return cur.Err()
}
