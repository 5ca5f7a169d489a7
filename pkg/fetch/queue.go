package fetch

import (
	"container/heap"
	"fmt"
	"os"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/robots"
	"github.com/sekitei/crawlkit/pkg/weburl"
)

// An item is one input URL on its way through the fetcher, possibly several
// hops into a redirect chain.
type item struct {
	rec      *record.Record
	u        *weburl.URL   // the URL of the next request (a hop of the chain), as requested
	chain    []hop         // redirects so far
	attempt  int           // retries of the current hop
	keyTaken bool          // the URL's key is taken (see Fetcher.duplicate)
	elapsed  time.Duration // in requests, every hop and retry
	waited   time.Duration // in backoff before retries: with elapsed, bounded by Config.Timeout
	size     int64         // bytes accounted in queue memory
}

type hop struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// spillRef locates a record spilled to disk.
type spillRef struct {
	off  int64
	n    int32
	line int32
}

// hostQ is one host's queue and politeness state.
type hostQ struct {
	key      string // host[:port], lower case
	items    []*item
	spilled  []spillRef
	next     time.Time     // earliest start of the next request
	delay    time.Duration // effective per-host delay (Crawl-delay included)
	active   int
	accepted int // URLs accepted, for the budget
	robots   [2]*robotsState
	heapIdx  int // -1 when not in the ready heap
	seq      uint64
	// slot is the politeness queue the host shares with the hosts of its
	// IP address or registered domain (its own with QueueByHost); nil
	// until its address is known with QueueByIP.
	slot      *slot
	resolving bool
}

// A slot is one politeness queue: the requests of all its hosts are spaced
// by the delay and limited to PerHost at a time, as if they were one host.
type slot struct {
	key     string
	next    time.Time
	active  int
	waiting []*hostQ // hosts ready but for the slot's connections
}

type robotsState struct {
	group    *robots.Group
	fail     *codedError // robots.txt could not be fetched for a reason that dooms the host
	expires  time.Time
	fetching bool
}

func schemeIndex(s string) int {
	if s == "https" {
		return 1
	}
	return 0
}

func (h *hostQ) queued() int { return len(h.items) + len(h.spilled) }

// readyHeap orders hosts by the time they may next be asked, then by the
// order they became ready: hosts interleave and none waits behind another.
type readyHeap []*hostQ

func (q readyHeap) Len() int { return len(q) }
func (q readyHeap) Less(i, j int) bool {
	if !q[i].next.Equal(q[j].next) {
		return q[i].next.Before(q[j].next)
	}
	return q[i].seq < q[j].seq
}
func (q readyHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].heapIdx = i
	q[j].heapIdx = j
}
func (q *readyHeap) Push(x any) {
	h := x.(*hostQ)
	h.heapIdx = len(*q)
	*q = append(*q, h)
}
func (q *readyHeap) Pop() any {
	old := *q
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	h.heapIdx = -1
	return h
}

// spillFile keeps queued records on disk once queue memory is spent.
type spillFile struct {
	f    *os.File
	size int64
	buf  []byte
}

func (s *spillFile) write(rec *record.Record) (spillRef, error) {
	s.buf = rec.AppendJSON(s.buf[:0])
	ref := spillRef{off: s.size, n: int32(len(s.buf)), line: int32(rec.Line)}
	if _, err := s.f.WriteAt(s.buf, s.size); err != nil {
		return ref, fmt.Errorf("fetch: spilling the queue: %w", err)
	}
	s.size += int64(len(s.buf))
	return ref, nil
}

func (s *spillFile) read(ref spillRef) (*record.Record, error) {
	if cap(s.buf) < int(ref.n) {
		s.buf = make([]byte, ref.n)
	}
	b := s.buf[:ref.n]
	if _, err := s.f.ReadAt(b, ref.off); err != nil {
		return nil, fmt.Errorf("fetch: reading the spilled queue: %w", err)
	}
	rec, err := record.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("fetch: spilled record: %w", err)
	}
	rec.Line = int(ref.line)
	return rec, nil
}

func (s *spillFile) close() {
	if s.f != nil {
		s.f.Close() // unlinked when made: closing frees it
	}
}

// readyAt puts h in the ready heap (or moves it) for time t.
func (f *Fetcher) readyAt(h *hostQ, t time.Time) {
	if t.After(h.next) {
		h.next = t
	}
	f.seq++
	h.seq = f.seq
	if h.heapIdx >= 0 {
		heap.Fix(&f.ready, h.heapIdx)
	} else {
		heap.Push(&f.ready, h)
	}
}

// maybeReady puts h in the ready heap if it has work it may start.
func (f *Fetcher) maybeReady(h *hostQ) {
	if h.heapIdx < 0 && h.queued() > 0 && h.active < f.cfg.PerHost && !h.waitingRobots() {
		f.readyAt(h, h.next)
	}
}

func (h *hostQ) waitingRobots() bool {
	return h.robots[0] != nil && h.robots[0].fetching || h.robots[1] != nil && h.robots[1].fetching
}
