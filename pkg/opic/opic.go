// Package opic computes page importance on-line with OPIC and adaptive OPIC
// (Abiteboul, Preda, Cobena, "Adaptive On-Line Page Importance
// Computation", WWW 2003).
//
// Every page holds cash and a history. Visiting (crawling) a page adds its
// cash to its history and hands the cash on: fraction Damping, split evenly,
// to the pages it links to, the rest to a virtual page that links to and
// from every page. A page without links gives all its cash to the virtual
// page. The virtual page is visited right after every visit (an allowed OPIC
// schedule: it is visited infinitely often) and spreads its cash evenly over
// all pages. The importance of a page, (history + cash) / total, then
// converges to PageRank with damping Damping and dangling pages linked to
// every page, under any crawl order that visits every page infinitely often;
// 1/|H| (|H| the sum of all histories, total cash 1) bounds the error.
//
// Adaptive OPIC (State.Visit) keeps only a time window of history: with S
// the time since the page's previous visit and T the window, a visit sets
// H <- H(1 - S/T) + C when S < T, else H <- C*T/S.
//
// The virtual page's even share goes into one running offset (base) rather
// than into every page, so its visit costs O(1); the keys of the greedy
// policy's priority queue all move by the same offset, so their order holds.
//
// No library offered an online, incremental OPIC with a growing graph and a
// crash-safe state, so this package implements it; gonum's PageRankSparse is
// the reference in the tests.
package opic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
	"unsafe"
)

// DefaultDamping is the damping PageRank traditionally uses.
const DefaultDamping = 0.85

// A Policy chooses the next page to visit.
type Policy int

// The crawl policies.
const (
	Greedy Policy = iota // the page with most cash (an indexed max-priority queue); see Run for ties
	Random               // a page drawn uniformly (seeded)
	Cyclic               // pages in id order, round after round
)

var policyNames = []string{"greedy", "random", "cyclic"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy parses "greedy", "random" or "cyclic".
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if s == n {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown policy %q: want greedy, random or cyclic", s)
}

// State is the OPIC state of a growing set of pages: names, links, cash,
// history and visit times.
type State struct {
	// Damping is the fraction of a visited page's cash that goes to its links.
	Damping float64
	// Window is adaptive OPIC's time window T; 0 keeps all history.
	Window time.Duration
	// ShardI and ShardN record the shard this state was built from (0/0:
	// unsharded). Pages of other shards are still kept: they are the targets
	// of links and hold the cash owed to them, which a cross-shard exchange
	// can hand over.
	ShardI, ShardN int
	// Now is the latest visit time seen (Unix seconds).
	Now int64

	names Names
	g     Graph

	cash   []float64 // the cash of page i is cash[i] + base
	hist   []float64
	last   []int64  // Unix seconds of the last visit, or of discovery
	visits []uint32 // 0: never visited

	base      float64
	virtCash  float64 // cash held by the virtual page while there is no page
	virtHist  float64
	totalHist float64 // |H|, virtual page included
	steps     uint64  // visits so far
	transfers uint64  // cash transfers (links followed) so far
	cursor    uint64  // next page of the cyclic policy
	sinceNorm int     // visits since base was last folded into cash
	batches   uint64  // batches applied (Begin ... End or Exchange)
	awaiting  bool    // a sharded batch awaits Exchange
	sealed    int     // pages known when that batch ended
}

// New returns an empty state holding the total cash of 1 on the virtual
// page; it goes to the first pages added when Settle is called.
func New(damping float64) *State {
	return &State{Damping: damping, virtCash: 1}
}

// Len returns the number of pages.
func (s *State) Len() int { return s.names.Len() }

// Edges returns the number of links.
func (s *State) Edges() int { return s.g.Edges() }

// Name returns the name of page id.
func (s *State) Name(id uint32) string { return s.names.Name(id) }

// Lookup returns the id of a page by name.
func (s *State) Lookup(name string) (uint32, bool) { return s.names.Lookup(name) }

// Steps returns the number of visits made.
func (s *State) Steps() uint64 { return s.steps }

// Transfers returns the number of cash transfers to linked pages made by
// visits, the unit of work of OPIC.
func (s *State) Transfers() uint64 { return s.transfers }

// Page returns the state of page id.
func (s *State) Page(id uint32) Page {
	return Page{ID: id, Cash: s.cash[id] + s.base, History: s.hist[id],
		LastVisit: s.last[id], Visits: s.visits[id]}
}

// Page is one page's OPIC state.
type Page struct {
	ID        uint32
	Cash      float64
	History   float64
	LastVisit int64  // Unix seconds of the last visit (or discovery if Visits is 0)
	Visits    uint32 // 0: never visited
}

// AddPage returns the id of the page named name, adding it with no cash if
// it is new. A new page's discovery time is Now.
func (s *State) AddPage(name []byte) uint32 {
	id, added := s.names.Intern(name)
	if added {
		s.cash = append(s.cash, -s.base)
		s.hist = append(s.hist, 0)
		s.last = append(s.last, s.Now)
		s.visits = append(s.visits, 0)
		s.g.Grow(int(id) + 1)
	}
	return id
}

// AddLink adds the link src -> dst; it counts once however often it is
// added, and a self-link is ignored. It is seen by visits after Compact.
func (s *State) AddLink(src, dst uint32) { s.g.AddEdge(src, dst) }

// SetLinks replaces the links of page id (a page fetched anew), at once.
func (s *State) SetLinks(id uint32, links []uint32) { s.g.SetLinks(id, links) }

// Links returns the links of page id; the slice must not be modified.
func (s *State) Links(id uint32) []uint32 { return s.g.Out(id) }

// Compact folds added links into the compact rows.
func (s *State) Compact() { s.g.Compact() }

// Reset spreads the total cash of 1 evenly over the pages and clears all
// history: the start of a static OPIC computation.
func (s *State) Reset() {
	n := len(s.cash)
	s.base, s.virtCash, s.virtHist, s.totalHist = 0, 0, 0, 0
	s.steps, s.cursor, s.sinceNorm, s.transfers = 0, 0, 0, 0
	for i := range s.cash {
		s.cash[i] = 1 / float64(n)
		s.hist[i] = 0
		s.visits[i] = 0
	}
	if n == 0 {
		s.virtCash = 1
	}
}

// Settle lets the virtual page hand the cash it holds to the pages, if
// there are any (a state starts with all its cash there).
func (s *State) Settle() {
	if s.virtCash > 0 && len(s.cash) > 0 {
		c := s.virtCash
		s.virtCash = 0
		s.virtHist += c
		s.totalHist += c
		s.base += c / float64(len(s.cash))
	}
}

// TotalHistory returns |H|, the sum of all histories, the virtual page's
// included; 1/|H| bounds the error of the importance.
func (s *State) TotalHistory() float64 { return s.totalHist }

// ErrorBound returns 1/|H|.
func (s *State) ErrorBound() float64 {
	if s.totalHist == 0 {
		return math.Inf(1)
	}
	return 1 / s.totalHist
}

// Importance returns (history + cash) / total of every page, the virtual
// page left out, so that it sums to 1 and compares with PageRank.
func (s *State) Importance() []float64 {
	imp := make([]float64, len(s.cash))
	var sum float64
	for i := range imp {
		imp[i] = s.hist[i] + s.cash[i] + s.base
		sum += imp[i]
	}
	if sum > 0 {
		for i := range imp {
			imp[i] /= sum
		}
	}
	return imp
}

// fold moves base into every page's cash, so that base stays small next
// to the cash and no precision is lost.
func (s *State) fold() { s.foldInto(s.cash) }

// foldInto is fold for a copy of the cash array (a Run's view).
func (s *State) foldInto(cash []float64) {
	for i := range cash {
		cash[i] += s.base
	}
	s.base = 0
	s.sinceNorm = 0
}

// teleport gives c to the virtual page, which spreads it over all pages.
func (s *State) teleport(c float64) {
	s.virtHist += c
	s.totalHist += c
	s.base += c / float64(len(s.cash))
}

// Visit records a visit of page id at time t (Unix seconds) at once: the
// page's history takes its cash (through the time window, if any), and the
// cash goes to its current links, and the virtual page's share to all
// pages, right away. Set the links first with SetLinks (Visit compacts
// pending links if needed). Fetch batches go through Begin instead, which
// also works across shards.
func (s *State) Visit(id uint32, t int64) {
	if len(s.g.pend) > 0 {
		s.g.Compact()
	}
	s.Settle()
	if t > s.Now {
		s.Now = t
	}
	c := s.cash[id] + s.base
	s.record(id, t, c)
	s.cash[id] = -s.base
	out := s.g.Out(id)
	s.transfers += uint64(len(out))
	if len(out) == 0 {
		s.teleport(c)
	} else {
		share := s.Damping * c / float64(len(out))
		for _, j := range out {
			s.cash[j] += share
		}
		s.teleport(c - share*float64(len(out)))
	}
	if s.sinceNorm++; s.sinceNorm >= len(s.cash) {
		s.fold()
	}
}

// A Stop ends a Run: after Steps visits, or once the error bound 1/|H|
// falls under Until, whichever comes first. Zero fields do not stop.
type Stop struct {
	Steps uint64
	Until float64
}

// Run visits pages in the order of policy until stop (a Run with neither
// limit does nothing) and returns the number of visits made. It is the
// static OPIC computation on the current graph; call Reset first to start
// afresh. seed drives the random policy. Among pages of equal cash the
// greedy policy takes the lowest id, or, on graphs of 65,536 pages or more
// (renumbered for speed, see view.go), the most linked page first.
func (s *State) Run(p Policy, stop Stop, seed uint64) uint64 {
	s.g.Compact()
	s.Settle()
	n := len(s.cash)
	if n == 0 || (stop.Steps == 0 && stop.Until <= 0) {
		return 0
	}
	limit := stop.Steps
	if limit == 0 {
		limit = math.MaxUint64
	}
	if p != Greedy {
		var done uint64
		for done < limit && !s.reached(stop.Until) {
			done += s.runSimple(p, min(limit-done, uint64(n)), stop.Until, seed)
			s.fold()
		}
		return done
	}
	pg := s.ownPages()
	var v *view
	if n >= viewMin {
		v = s.newView()
		pg = v.pages
	}
	t := newMaxTree(pg.cash)
	var done uint64
	// Work in chunks of at most n visits, folding base in between.
	for done < limit && !s.reached(stop.Until) {
		done += s.runGreedy(pg, t, min(limit-done, uint64(n)), stop.Until)
		s.foldInto(pg.cash)
		t.build()
	}
	if v != nil {
		v.store(s)
	}
	return done
}

func (s *State) reached(until float64) bool {
	return until > 0 && s.totalHist*until > 1
}

// runSimple is Run for the random and cyclic policies.
func (s *State) runSimple(p Policy, limit uint64, until float64, seed uint64) uint64 {
	n := uint64(len(s.cash))
	nf := float64(n)
	off, dst := s.g.off, s.g.dst
	cash, hist, visits := s.cash, s.hist, s.visits
	d := s.Damping
	rng := rand.New(rand.NewPCG(seed, s.steps))
	base, total, virt := s.base, s.totalHist, s.virtHist
	var k, moved uint64
	for ; k < limit; k++ {
		if until > 0 && total*until > 1 {
			break
		}
		var i uint64
		if p == Random {
			i = rng.Uint64N(n)
		} else {
			i = s.cursor % n
			s.cursor++
		}
		c := cash[i] + base
		hist[i] += c
		cash[i] = -base
		visits[i]++
		row := dst[off[i]:off[i+1]]
		moved += uint64(len(row))
		tele := c
		if len(row) > 0 {
			share := d * c / float64(len(row))
			for _, j := range row {
				cash[j] += share
			}
			tele = c - share*float64(len(row))
		}
		base += tele / nf
		virt += tele
		total += c + tele
	}
	s.base, s.totalHist, s.virtHist = base, total, virt
	s.steps += k
	s.transfers += moved
	return k
}

// runGreedy is Run for the greedy policy: the page with most cash next.
func (s *State) runGreedy(pg pages, t *maxTree, limit uint64, until float64) uint64 {
	nf := float64(len(pg.cash))
	off, dst := pg.off, pg.dst
	cash, hist, visits := pg.cash, pg.hist, pg.visits
	l0 := t.keys[0]
	last := uint32(len(cash) - 1)
	d := s.Damping
	base, total, virt := s.base, s.totalHist, s.virtHist
	var k, moved uint64
	for ; k < limit; k++ {
		if until > 0 && total*until > 1 {
			break
		}
		i := t.top()
		c := cash[i] + base
		hist[i] += c
		visits[i]++
		cash[i] = -base
		t.lowered(i)
		row := dst[off[i]:off[i+1]]
		moved += uint64(len(row))
		// The page with most cash now is often still the top after this
		// visit's transfers (about half the time), else it is a link
		// target that the transfers raise to the top (fetched below).
		// Fetching its row, history and cash group into the cache now,
		// while the transfers' loads are in flight, hides those misses
		// from the next visit; the choice itself stays exactly greedy.
		next := t.top()
		prefetch(unsafe.Pointer(&hist[next]))
		prefetch(unsafe.Pointer(&visits[next]))
		prefetch(unsafe.Pointer(&cash[next&^(fan-1)]))
		prefetch(unsafe.Pointer(&cash[min(next|(fan/2), last)]))
		if o := off[next]; o < uint64(len(dst)) {
			prefetch(unsafe.Pointer(&dst[o]))
		}
		tele := c
		if len(row) > 0 {
			share := d * c / float64(len(row))
			for _, j := range row {
				v := cash[j] + share
				cash[j] = v
				if l0[j/fan] <= sortKey(v) && t.raised(j, v) {
					// j is the next page now: fetch its row.
					prefetch(unsafe.Pointer(&hist[j]))
					prefetch(unsafe.Pointer(&visits[j]))
					if o := off[j]; o < uint64(len(dst)) {
						prefetch(unsafe.Pointer(&dst[o]))
					}
				}
			}
			tele = c - share*float64(len(row))
		}
		base += tele / nf
		virt += tele
		total += c + tele
	}
	s.base, s.totalHist, s.virtHist = base, total, virt
	s.steps += k
	s.transfers += moved
	return k
}
