package opic

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// Adaptive OPIC takes fetch records in batches, one a crawl turn. The
// visits of a batch happen at once: each page hands on the cash it held
// when the batch began, and the cash it sends arrives when the batch ends,
// together with the virtual page's, which is then shared evenly over all
// pages known. That is an OPIC schedule like any other (cash in flight is
// still counted), and no visit depends on the cash another visit of the
// batch sends, so the visits can be applied apart.
//
// It also lets a crawl split its pages into shards by host (record.ShardOf)
// and keep one state a shard, on as many machines: each shard visits its
// own pages, sends the cash its links owe to other shards' pages in an
// outbox, and takes in what the other shards sent it (Exchange). Cash is
// kept in whole multiples of 2^-52 of the total, so every sum of cash is
// exact whatever its order, and the shards together reach, bit for bit,
// the state a single process reaches on the whole batch. The total cash
// stays exactly 1.

// quantum is the unit of cash: sums of multiples of it below 2 are exact
// in float64.
const quantum = 1.0 / (1 << 52)

// quantize rounds x down to a multiple of the quantum.
func quantize(x float64) float64 { return math.Floor(x/quantum) * quantum }

// ErrAwaitingExchange is returned by Begin for a sharded state whose last
// batch still waits for the other shards' cash.
var ErrAwaitingExchange = errors.New("the state's last batch awaits its exchange with the other shards")

// A Batch applies fetch records to a state; see Begin.
type Batch struct {
	s      *State
	inflow map[uint32]float64 // cash sent to pages, arriving at End
	tele   float64            // cash sent to the virtual page
}

// Begin starts a batch of visits.
func (s *State) Begin() (*Batch, error) {
	if s.awaiting {
		return nil, ErrAwaitingExchange
	}
	s.g.Compact()
	s.fold()
	// A state from a static Run or an older format holds cash that is not
	// in quanta; the dust goes to the virtual page.
	var dust float64
	for i, c := range s.cash {
		q := quantize(c)
		dust += c - q
		s.cash[i] = q
	}
	if dust != 0 {
		s.virtCash = quantize(s.virtCash + dust)
	}
	return &Batch{s: s, inflow: make(map[uint32]float64)}, nil
}

// Owns reports whether page name belongs to the state's shard: the shard
// of its host (all pages if the state is not sharded).
func (s *State) Owns(name string) bool {
	if s.ShardN <= 1 {
		return true
	}
	h, _ := urlx.Host(name)
	return record.ShardOf(h, s.ShardN) == s.ShardI
}

// Add applies one input item. A record with fetched_at is a visit of its
// page at that time: its links replace the page's links (a record without
// "links", a failed fetch or a 304, keeps those known), and new pages are
// discovered at its time. Anything else only adds pages and links.
//
// A sharded state takes every item of the batch, not only its shard's:
// it visits its own pages, and learns from the others' records which of
// its pages they link to, so that every shard knows its pages when the
// batch ends.
func (b *Batch) Add(it Item) {
	s := b.s
	var t int64
	if it.Kind == RecordItem && !it.FetchedAt.IsZero() {
		t = it.FetchedAt.Unix()
		s.Now = max(s.Now, t)
	}
	// A page is visited by the shard that owns it by name, whatever host
	// field its record carries, so that visiting and holding cash agree.
	if !s.Owns(it.URL) {
		at := t
		if at == 0 {
			at = s.Now // as AddItem discovers pages
		}
		for _, l := range it.Links {
			if s.Owns(l) {
				s.addPageAt(l, at)
			}
		}
		return
	}
	if t == 0 {
		s.AddItem(it)
		return
	}
	id := s.addPageAt(it.URL, t)
	if it.HasLinks {
		links := make([]uint32, len(it.Links))
		for k, l := range it.Links {
			links[k] = s.addPageAt(l, t)
		}
		s.SetLinks(id, links)
	}
	c := s.cash[id]
	s.cash[id] = 0
	s.record(id, t, c)
	out := s.g.Out(id)
	s.transfers += uint64(len(out))
	if len(out) == 0 {
		b.tele += c
		return
	}
	share := quantize(s.Damping * c / float64(len(out)))
	for _, j := range out {
		b.inflow[j] += share
	}
	b.tele += c - share*float64(len(out))
}

// record adds a visit of page id at time t, with cash c, to its history:
// through the time window T, if any, with S the time since the page's
// previous visit (or its discovery): H <- H(1 - S/T) + C when S < T, else
// H <- C*T/S.
func (s *State) record(id uint32, t int64, c float64) {
	old := s.hist[id]
	h := historyAfter(old, c, t, s.last[id], s.visits[id], s.Window)
	s.hist[id] = h
	s.totalHist += h - old
	s.last[id] = t
	s.visits[id]++
	s.steps++
}

// historyAfter is a page's history after a visit at time t with cash c,
// its history being old, its last visit (or discovery) last and its visits
// so far visits.
func historyAfter(old, c float64, t, last int64, visits uint32, window time.Duration) float64 {
	h := old + c
	if window > 0 {
		// A page of unknown discovery time (0) has no past to scale.
		S := float64(max(t-last, 0))
		if visits == 0 && last == 0 {
			S = 0
		}
		T := window.Seconds()
		if S < T {
			h = old*(1-S/T) + c
		} else {
			h = c * T / S
		}
	}
	return h
}

// End completes the batch and returns nil; for a sharded state it returns
// the batch's outbox instead, and the batch completes when Exchange takes
// in the outboxes of all shards.
func (b *Batch) End() *Outbox {
	s := b.s
	var out *Outbox
	if s.ShardN > 1 {
		out = &Outbox{Summary: Summary{Shard: s.ShardI, Shards: s.ShardN, Batch: s.batches + 1, Teleport: b.tele}}
	}
	for id, c := range b.inflow { // sums of quanta: any order gives the same cash
		if out != nil && !s.Owns(s.Name(id)) {
			out.Transfers = append(out.Transfers, Transfer{URL: s.Name(id), Cash: c})
			continue
		}
		s.cash[id] += c
	}
	if out == nil {
		s.spread(s.virtCash+b.tele, uint64(s.Len()), s.Len())
		s.batches++
		return nil
	}
	for id := range uint32(s.Len()) {
		if s.Owns(s.Name(id)) {
			out.Summary.Pages++
		} else if c := s.cash[id]; c != 0 {
			// Cash a state of an older format kept on another shard's
			// page goes to its owner too.
			out.Transfers = append(out.Transfers, Transfer{URL: s.Name(id), Cash: c})
			s.cash[id] = 0
		}
	}
	// The outbox in URL order, the same on every run.
	slices.SortStableFunc(out.Transfers, func(a, b Transfer) int { return cmp.Compare(a.URL, b.URL) })
	s.awaiting = true
	s.sealed = s.Len()
	return out
}

// spread shares total evenly over the n pages known, of which the pages of
// this state below id limit are here, and keeps what does not divide on
// the virtual page.
func (s *State) spread(total float64, n uint64, limit int) {
	if n == 0 {
		s.virtCash = total
		return
	}
	u := quantize(total / float64(n))
	for id := range limit {
		if s.Owns(s.Name(uint32(id))) {
			s.cash[id] += u
		}
	}
	given := u * float64(n)
	s.virtCash = total - given
	s.virtHist += given
	s.totalHist += given
}

// An Outbox is what a shard's batch sends to the others: the cash its
// pages' links sent to other shards' pages, and a summary that every shard
// needs to share out the virtual page's cash.
type Outbox struct {
	Summary   Summary
	Transfers []Transfer
}

// A Summary is one shard's part in a batch.
type Summary struct {
	Shard, Shards int
	Batch         uint64  // the number of the batch in the state's life, from 1
	Teleport      float64 // the cash the shard's visits sent to the virtual page
	Pages         uint64  // the pages of the shard known at the end of its batch
	// BatchID is the crawl's name of the batch (opic update --batch), if
	// any; History the sum of the shard's pages' histories after its
	// visits, so that every shard knows the whole crawl's total.
	BatchID string
	History float64
}

// A Transfer is cash sent to a page of another shard.
type Transfer struct {
	URL  string
	Cash float64
}

// An Inbox is what a shard takes in to complete a batch: the outboxes of
// all shards, read with Add.
type Inbox struct {
	Summaries []Summary
	Transfers []Transfer
}

// Add parses one line of an outbox (see Outbox.AppendLines): a transfer
// {"url":...,"opic_cash":C} or a summary {"opic_shard":"I/N",...}.
func (in *Inbox) Add(line []byte) error {
	var v struct {
		URL      *string     `json:"url"`
		Cash     json.Number `json:"opic_cash"`
		Shard    string      `json:"opic_shard"`
		Batch    json.Number `json:"opic_batch"`
		Teleport json.Number `json:"opic_teleport"`
		Pages    json.Number `json:"opic_pages"`
		BatchID  string      `json:"opic_batch_id"`
		History  json.Number `json:"opic_history"`
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber() // exact: strconv reads back what AppendLines wrote
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("not an outbox line: %v", err)
	}
	if v.URL != nil {
		c, err := strconv.ParseFloat(string(v.Cash), 64)
		if err != nil || *v.URL == "" || !(c >= 0 && c <= 1) {
			return errors.New(`a transfer needs a "url" and "opic_cash", a number from 0 to 1`)
		}
		in.Transfers = append(in.Transfers, Transfer{URL: *v.URL, Cash: c})
		return nil
	}
	var m Summary
	if _, err := fmt.Sscanf(v.Shard, "%d/%d", &m.Shard, &m.Shards); err != nil || m.Shards < 2 || m.Shard < 0 || m.Shard >= m.Shards {
		return errors.New(`neither a transfer (no "url") nor a summary (no "opic_shard" I/N)`)
	}
	var err1, err2, err3 error
	m.Batch, err1 = strconv.ParseUint(string(v.Batch), 10, 64)
	m.Teleport, err2 = strconv.ParseFloat(string(v.Teleport), 64)
	m.Pages, err3 = strconv.ParseUint(string(v.Pages), 10, 64)
	if errors.Join(err1, err2, err3) != nil || m.Batch < 1 || !(m.Teleport >= 0 && m.Teleport <= 1) {
		return errors.New(`a summary needs "opic_batch", "opic_teleport" and "opic_pages"`)
	}
	m.BatchID = v.BatchID
	if v.History != "" {
		h, err := strconv.ParseFloat(string(v.History), 64)
		if err != nil || !(h >= 0) || math.IsInf(h, 0) {
			return errors.New(`"opic_history" is not a number >= 0`)
		}
		m.History = h
	}
	in.Summaries = append(in.Summaries, m)
	return nil
}

// AppendLines appends the outbox as NDJSON lines, the summary first: what
// Inbox.Add reads. Numbers are written so that they read back exactly.
func (o *Outbox) AppendLines(b []byte) []byte {
	m := o.Summary
	b = fmt.Appendf(b, `{"opic_shard":"%d/%d","opic_batch":%d,"opic_teleport":`, m.Shard, m.Shards, m.Batch)
	b = strconv.AppendFloat(b, m.Teleport, 'g', -1, 64)
	b = fmt.Appendf(b, `,"opic_pages":%d`, m.Pages)
	if m.BatchID != "" {
		b = fmt.Appendf(b, `,"opic_batch_id":%q`, m.BatchID) // IDs are checked to need no escapes
	}
	if m.History != 0 {
		b = append(b, `,"opic_history":`...)
		b = strconv.AppendFloat(b, m.History, 'g', -1, 64)
	}
	b = append(b, "}\n"...)
	for _, t := range o.Transfers {
		r := record.New(t.URL)
		r.SetFloat("opic_cash", t.Cash)
		b = append(r.AppendJSON(b), '\n')
	}
	return b
}

// WriteFile writes the outbox's lines to path crash-safely, as State.Save
// writes a state.
func (o *Outbox) WriteFile(path string) error { return writeFileSafe(path, o.AppendLines(nil)) }

// Exchange completes a sharded state's batch with the outboxes of all
// shards, this one's included: it takes in the cash sent to its pages, and
// its share of the virtual page's cash. The inbox must hold one summary of
// each shard, all of the batch the state awaits.
func (s *State) Exchange(in *Inbox) error {
	if !s.awaiting {
		return errors.New("no batch of this state awaits an exchange (run opic update first)")
	}
	seen := make([]bool, s.ShardN)
	total := s.virtCash
	var pages uint64
	for _, m := range in.Summaries {
		switch {
		case m.Shards != s.ShardN || m.Shard < 0 || m.Shard >= s.ShardN:
			return fmt.Errorf("an outbox of shard %d/%d, but the state is shard %d/%d", m.Shard, m.Shards, s.ShardI, s.ShardN)
		case m.Batch != s.batches+1:
			return fmt.Errorf("the outbox of shard %d/%d is of batch %d, the state awaits batch %d", m.Shard, m.Shards, m.Batch, s.batches+1)
		case seen[m.Shard]:
			return fmt.Errorf("two outboxes of shard %d/%d", m.Shard, m.Shards)
		}
		seen[m.Shard] = true
		total += m.Teleport
		pages += m.Pages
	}
	for i, ok := range seen {
		if !ok {
			return fmt.Errorf("the outbox of shard %d/%d is missing", i, s.ShardN)
		}
	}
	for _, tr := range in.Transfers {
		if s.Owns(tr.URL) {
			// A page unknown here (this shard did not read the whole
			// batch) is added; it shares in the virtual page's cash from
			// the next batch on.
			id := s.addPageAt(tr.URL, s.Now)
			s.cash[id] += tr.Cash
		}
	}
	s.spread(total, pages, s.sealed)
	s.awaiting = false
	s.batches++
	return nil
}
