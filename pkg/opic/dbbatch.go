package opic

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
	"github.com/sekitei/crawlkit/pkg/record"
)

// A DBBatch applies one batch of fetch records to a DB, with the same
// arithmetic as Batch on a State: the two reach the same cash and history
// to the last bit. It reads only the pages the batch names and the pages
// their links name, and Commit writes only those, in one transaction.
type DBBatch struct {
	d  *DB
	tx *boltstate.Tx
	id string
	m  dbMeta // the state's fields as the batch changes them

	ids     map[string]uint32   // names resolved
	pages   map[uint32]*dbPage  // pages read or added, cash as of m.Share
	added   map[uint32]bool     // pages added by the batch
	over    map[uint32][]uint32 // links replaced by visits
	pend    map[uint32][]uint32 // links added by edges and plain records, seen from the next batch
	inflow  map[uint32]float64  // cash sent to pages, arriving at the end
	touched map[uint32]bool     // pages whose cash or history changed other than by the even share
	tele    float64             // cash sent to the virtual page
	err     error               // the first error; the batch then commits nothing
}

// Begin starts a batch with the given ID ("" for none). It returns
// ErrBatchApplied if the batch of that ID was applied already (or, on a
// sharded state, awaits its exchange), and ErrAwaitingExchange if another
// sharded batch still awaits its exchange.
func (d *DB) Begin(batchID string) (*DBBatch, error) {
	m := d.meta
	switch {
	case batchID != "" && (batchID == m.LastBatch || (m.Awaiting && batchID == m.AwaitBatch)):
		return nil, ErrBatchApplied
	case m.Awaiting:
		return nil, ErrAwaitingExchange
	case batchID != "" && batchID < m.LastBatch:
		return nil, fmt.Errorf("batch %s is older than the last batch applied, %s", batchID, m.LastBatch)
	}
	tx, err := d.bolt.Begin(true)
	if err != nil {
		return nil, err
	}
	return &DBBatch{d: d, tx: tx, id: batchID, m: m,
		ids: map[string]uint32{}, pages: map[uint32]*dbPage{}, added: map[uint32]bool{},
		over: map[uint32][]uint32{}, pend: map[uint32][]uint32{}, inflow: map[uint32]float64{},
		touched: map[uint32]bool{}}, nil
}

// SetSettings changes the damping and window the batch and later ones use.
func (b *DBBatch) SetSettings(damping float64, window time.Duration) {
	b.m.Damping, b.m.Window = damping, window
}

// Rollback abandons the batch: the state stays as it was.
func (b *DBBatch) Rollback() { b.tx.Rollback() }

func (b *DBBatch) fail(err error) {
	if b.err == nil {
		b.err = withPath(b.d.path, err)
	}
}

// failOn makes *err, set by a boltstate.Guard deferred after it, the
// batch's error: a panic of bbolt on a damaged page.
func (b *DBBatch) failOn(err *error) {
	if *err != nil {
		b.fail(*err)
	}
}

// lookup returns the id of a known page.
func (b *DBBatch) lookup(name string) (uint32, bool) {
	if id, ok := b.ids[name]; ok {
		return id, true
	}
	v, err := b.tx.Bucket(bucketID).Get([]byte(name))
	if err != nil {
		b.fail(err)
		return 0, false
	}
	if v == nil {
		return 0, false
	}
	if len(v) != 4 || uint64(binary.BigEndian.Uint32(v)) >= b.m.Pages {
		b.fail(fmt.Errorf("corrupt opic state: bad id of page %q", name))
		return 0, false
	}
	id := binary.BigEndian.Uint32(v)
	b.ids[name] = id
	return id, true
}

// addPage returns the id of page name, adding it, discovered at time at,
// if it is new; a new page's cash is taken at share mark.
func (b *DBBatch) addPage(name string, at int64, mark uint64) uint32 {
	if id, ok := b.lookup(name); ok || b.err != nil {
		return id
	}
	id := uint32(b.m.Pages)
	b.m.Pages++
	p := &dbPage{id: id, name: name, owned: b.m.owns(name), last: at, mark: mark}
	if p.owned {
		b.m.Owned++
	}
	b.ids[name] = id
	b.pages[id] = p
	b.added[id] = true
	return id
}

// page returns page id, read from the state on first use.
func (b *DBBatch) page(id uint32) *dbPage {
	if p, ok := b.pages[id]; ok {
		return p
	}
	if b.err != nil {
		return &dbPage{id: id}
	}
	b.d.pageReads++
	v, err := b.tx.Bucket(bucketPage).Get(idKey(id))
	if err != nil {
		b.fail(err)
		return &dbPage{id: id}
	}
	p, err := decodePage(id, v)
	if v == nil {
		err = fmt.Errorf("corrupt opic state: page %d missing", id)
	}
	if err != nil {
		b.fail(err)
		return &dbPage{id: id}
	}
	p.cash, p.mark = p.cashAt(b.m.Share), b.m.Share
	b.pages[id] = p
	return p
}

// links returns the links page id has for a visit of this batch.
func (b *DBBatch) links(id uint32) []uint32 {
	if l, ok := b.over[id]; ok {
		return l
	}
	if b.added[id] || b.err != nil {
		return nil
	}
	v, err := b.tx.Bucket(bucketLink).Get(idKey(id))
	if err != nil {
		b.fail(err)
		return nil
	}
	if v == nil {
		return nil
	}
	l, err := decodeLinks(id, v, b.m.Pages)
	if err != nil {
		b.fail(err)
	}
	return l
}

// Add applies one input item, as Batch.Add does.
func (b *DBBatch) Add(it Item) {
	if b.err != nil {
		return
	}
	var perr error
	defer b.failOn(&perr)
	defer boltstate.Guard(b.d.path, &perr)()
	m := &b.m
	var t int64
	if it.Kind == RecordItem && !it.FetchedAt.IsZero() {
		t = it.FetchedAt.Unix()
		m.Now = max(m.Now, t)
	}
	mark := m.Share
	if !m.owns(it.URL) {
		at := t
		if at == 0 {
			at = m.Now
		}
		for _, l := range it.Links {
			if m.owns(l) {
				b.addPage(l, at, mark)
			}
		}
		return
	}
	if t == 0 {
		src := b.addPage(it.URL, m.Now, mark)
		for _, l := range it.Links {
			dst := b.addPage(l, m.Now, mark)
			if dst != src {
				b.pend[src] = append(b.pend[src], dst)
			}
		}
		return
	}
	id := b.addPage(it.URL, t, mark)
	if it.HasLinks {
		links := make([]uint32, len(it.Links))
		for k, l := range it.Links {
			links[k] = b.addPage(l, t, mark)
		}
		b.over[id] = cleanLinks(id, links)
	}
	p := b.page(id)
	c := p.cash
	p.cash = 0
	h := historyAfter(p.hist, c, t, p.last, p.visits, m.Window)
	m.TotalHist += h - p.hist
	if p.owned {
		m.PageHist += h - p.hist
	}
	p.hist, p.last = h, t
	p.visits++
	m.Steps++
	b.touched[id] = true
	out := b.links(id)
	if len(out) == 0 {
		b.tele += c
		return
	}
	share := quantize(m.Damping * c / float64(len(out)))
	for _, j := range out {
		b.inflow[j] += share
	}
	b.tele += c - share*float64(len(out))
}

// A Change is a page whose cash or history a step changed other than by
// the virtual page's even share, or a page the step added, as it stands
// after the step.
type Change struct {
	URL                       string
	Cash, History, Importance float64
}

// A StepResult is what Commit and Exchange return: the change records
// (NDJSON, by URL), and for a sharded batch the outbox lines.
type StepResult struct {
	Changes []byte
	Outbox  []byte
}

// End completes the batch's arithmetic and returns what Commit will
// write: the change records and, for a sharded state, the outbox. It
// writes nothing; call Commit, or Rollback.
func (b *DBBatch) End() (res *StepResult, err error) {
	if b.err != nil {
		return nil, b.err
	}
	defer func() {
		if b.err != nil {
			res, err = nil, b.err
		}
	}()
	var perr error
	defer b.failOn(&perr)
	defer boltstate.Guard(b.d.path, &perr)()
	m := &b.m
	sharded := m.ShardN > 1
	var box *Outbox
	if sharded {
		box = &Outbox{Summary: Summary{Shard: m.ShardI, Shards: m.ShardN, Batch: m.Batches + 1, Teleport: b.tele, BatchID: b.id}}
	}
	for _, id := range slices.Sorted(maps.Keys(b.inflow)) {
		c := b.inflow[id]
		p := b.page(id)
		if !p.owned {
			box.Transfers = append(box.Transfers, Transfer{URL: p.name, Cash: c})
			continue
		}
		p.cash += c
		b.touched[id] = true
	}
	if b.err != nil {
		return nil, b.err
	}
	res = &StepResult{}
	if !sharded {
		b.spread(m.VirtCash+b.tele, m.Owned)
		m.Batches++
		m.LastBatch = b.id
	} else {
		box.Summary.Pages = m.Owned
		box.Summary.History = m.PageHist
		slices.SortStableFunc(box.Transfers, func(a, b Transfer) int { return cmp.Compare(a.URL, b.URL) })
		res.Outbox = box.AppendLines(nil)
		m.Awaiting = true
		m.AwaitBatch = b.id
	}
	res.Changes = b.changes()
	return res, nil
}

// spread shares total evenly over the n pages known, as State.spread: it
// raises the share every page reads its cash through.
func (b *DBBatch) spread(total float64, n uint64) {
	m := &b.m
	if n == 0 {
		m.VirtCash = total
		return
	}
	u := quantize(total / float64(n))
	m.Share += uint64(u / quantum)
	given := u * float64(n)
	m.VirtCash = total - given
	m.VirtHist += given
	m.TotalHist += given
}

// changes returns the change records of the touched and added pages.
func (b *DBBatch) changes() []byte {
	m := &b.m
	ids := make([]uint32, 0, len(b.touched)+len(b.added))
	for id := range b.touched {
		ids = append(ids, id)
	}
	for id := range b.added {
		if !b.touched[id] && b.pages[id].owned {
			ids = append(ids, id)
		}
	}
	sortByName(ids, func(id uint32) string { return b.pages[id].name })
	total := m.PageHist + m.OtherHist + (1 - m.VirtCash)
	var out []byte
	for _, id := range ids {
		p := b.pages[id]
		c := p.cashAt(m.Share)
		r := record.New(p.name)
		r.SetFloat("cash", c)
		r.SetFloat("history", p.hist)
		imp := 0.0
		if total > 0 {
			imp = (p.hist + c) / total
		}
		r.SetFloat("importance", imp)
		out = append(r.AppendJSON(out), '\n')
	}
	return out
}

// Commit writes the batch's pages and fields, and the step's records for
// a rerun, in one transaction. After an error the state is as it was.
func (b *DBBatch) Commit(res *StepResult) error {
	if b.err != nil {
		b.tx.Rollback()
		return b.err
	}
	err := b.write(res)
	if err == nil {
		err = b.tx.Commit()
	} else {
		b.tx.Rollback()
	}
	var be *boltstate.Error
	if errors.As(err, &be) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: writing the state: %w", b.d.path, err)
	}
	b.d.meta = b.m
	return nil
}

func (b *DBBatch) write(res *StepResult) (err error) {
	defer boltstate.Guard(b.d.path, &err)()
	tx := b.tx
	ids, pages, links := tx.Bucket(bucketID), tx.Bucket(bucketPage), tx.Bucket(bucketLink)
	for _, id := range slices.Sorted(maps.Keys(b.pages)) {
		p := b.pages[id]
		if !b.added[id] && !b.touched[id] {
			continue // read only: an outbox page's name
		}
		b.d.pageWrites++
		// bbolt keeps the value until the commit: one buffer a page.
		if err := pages.Put(idKey(id), p.encode(make([]byte, 0, pageFixed+len(p.name)))); err != nil {
			return err
		}
		if b.added[id] {
			if err := ids.Put([]byte(p.name), idKey(id)); err != nil {
				return err
			}
		}
	}
	changed := map[uint32]bool{}
	for id := range b.over {
		changed[id] = true
	}
	for id := range b.pend {
		changed[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(changed)) {
		l, ok := b.over[id]
		if !ok {
			l = b.links(id)
		}
		l = cleanLinks(id, append(slices.Clone(l), b.pend[id]...))
		var err error
		if len(l) == 0 {
			err = links.Delete(idKey(id))
		} else {
			err = links.Put(idKey(id), encodeLinks(l))
		}
		if err != nil {
			return err
		}
	}
	if b.err != nil {
		return b.err
	}
	meta := tx.Bucket(bucketMeta)
	if err := meta.Put(keyState, b.m.encode()); err != nil {
		return err
	}
	if err := meta.Put(keyChanges, res.Changes); err != nil {
		return err
	}
	if res.Outbox != nil {
		if err := meta.Put(keyOutbox, res.Outbox); err != nil {
			return err
		}
		var t []byte
		for id := range b.touched {
			t = binary.BigEndian.AppendUint32(t, id)
		}
		for id := range b.added {
			if !b.touched[id] && b.pages[id].owned {
				t = binary.BigEndian.AppendUint32(t, id)
			}
		}
		return meta.Put(keyTouched, t)
	}
	return nil
}

// Apply applies items as one batch with ID batchID and returns the step's
// change records and outbox (see End); ErrBatchApplied if the batch was
// applied already.
func (d *DB) Apply(batchID string, items []Item) (*StepResult, error) {
	b, err := d.Begin(batchID)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		b.Add(it)
	}
	res, err := b.End()
	if err != nil {
		b.Rollback()
		return nil, err
	}
	return res, b.Commit(res)
}

// Exchange completes the sharded batch the state awaits with the outboxes
// of all shards, as State.Exchange does, in one transaction. batchID, if
// not "", must be the ID of that batch; ErrBatchApplied if it is the last
// batch completed. The change records cover the whole batch: the pages
// its update changed and those that take cash from other shards.
func (d *DB) Exchange(batchID string, in *Inbox) (*StepResult, error) {
	m := d.meta
	switch {
	case batchID != "" && !m.Awaiting && batchID == m.LastBatch:
		return nil, ErrBatchApplied
	case !m.Awaiting:
		return nil, errors.New("no batch of this state awaits an exchange (run opic update first)")
	case batchID != "" && batchID != m.AwaitBatch:
		return nil, fmt.Errorf("the state awaits the exchange of batch %q, not %q", m.AwaitBatch, batchID)
	}
	seen := make([]bool, m.ShardN)
	hists := make([]float64, m.ShardN)
	total := m.VirtCash
	var pages uint64
	for _, s := range in.Summaries {
		switch {
		case s.Shards != m.ShardN || s.Shard < 0 || s.Shard >= m.ShardN:
			return nil, fmt.Errorf("an outbox of shard %d/%d, but the state is shard %d/%d", s.Shard, s.Shards, m.ShardI, m.ShardN)
		case s.Batch != m.Batches+1:
			return nil, fmt.Errorf("the outbox of shard %d/%d is of batch %d, the state awaits batch %d", s.Shard, s.Shards, s.Batch, m.Batches+1)
		case s.BatchID != m.AwaitBatch:
			return nil, fmt.Errorf("the outbox of shard %d/%d is of batch %q, the state awaits batch %q", s.Shard, s.Shards, s.BatchID, m.AwaitBatch)
		case seen[s.Shard]:
			return nil, fmt.Errorf("two outboxes of shard %d/%d", s.Shard, s.Shards)
		}
		seen[s.Shard] = true
		hists[s.Shard] = s.History
		total += s.Teleport
		pages += s.Pages
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("the outbox of shard %d/%d is missing", i, m.ShardN)
		}
	}
	tx, err := d.bolt.Begin(true)
	if err != nil {
		return nil, err
	}
	b := &DBBatch{d: d, tx: tx, id: batchID, m: m,
		ids: map[string]uint32{}, pages: map[uint32]*dbPage{}, added: map[uint32]bool{},
		over: map[uint32][]uint32{}, pend: map[uint32][]uint32{}, inflow: map[uint32]float64{},
		touched: map[uint32]bool{}}
	t, err := tx.Bucket(bucketMeta).Get(keyTouched)
	if err != nil {
		tx.Rollback()
		return nil, err
	}
	func() {
		var perr error
		defer b.failOn(&perr)
		defer boltstate.Guard(d.path, &perr)()
		for k := 0; k+4 <= len(t); k += 4 {
			id := binary.BigEndian.Uint32(t[k:])
			b.page(id)
			b.touched[id] = true
		}
		// The share of this batch goes to the pages known when the update
		// ended: those added now take their cash after it.
		b.spread(total, pages)
		for _, tr := range in.Transfers {
			if !b.m.owns(tr.URL) {
				continue
			}
			id := b.addPage(tr.URL, b.m.Now, b.m.Share)
			p := b.page(id)
			p.cash += tr.Cash
			b.touched[id] = true
		}
	}()
	var other float64
	for i, h := range hists {
		if i != m.ShardI {
			other += h
		}
	}
	b.m.OtherHist = other
	b.m.Awaiting = false
	b.m.Batches++
	b.m.LastBatch, b.m.AwaitBatch = m.AwaitBatch, ""
	if b.err != nil {
		tx.Rollback()
		return nil, b.err
	}
	res := &StepResult{Changes: b.changes()}
	if err := tx.Bucket(bucketMeta).Delete(keyTouched); err != nil {
		tx.Rollback()
		return nil, err
	}
	if err := tx.Bucket(bucketMeta).Delete(keyOutbox); err != nil {
		tx.Rollback()
		return nil, err
	}
	return res, b.Commit(res)
}
