package barrel

import (
	"iter"
	"slices"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"github.com/sekitei/crawlkit/pkg/barrel/hit"
)

// The commit's anchor pass runs on two goroutines: a reader gathers each
// dirty target's anchors (the anchor runs and the batch's new ones), reads
// their records and analyses their text, a chunk of targets at a time,
// while the committing goroutine turns them into hits in docID order. The
// reader touches only what nothing writes during the pass (the runs, the
// batch's anchors, its own file reader and analyzer); the lexicon, the
// document entries and the forward barrels stay with the committer, so the
// pass writes what one goroutine would.

// anchorChunk holds the read and analysed anchors of a run of targets.
type anchorChunk struct {
	targets []chunkTarget
	anchors []readAnchor
	toks    []anchorTok
	terms   []byte
	err     error
}

type chunkTarget struct {
	to  uint32
	end int // the end of its anchors in anchors
}

// readAnchor is one anchor record: its page's doc and version, and the end
// of its text's tokens in toks; dropped for one a reclaim dropped (dead,
// its version unknown, no tokens).
type readAnchor struct {
	from    uint32
	fromOff uint64
	end     int
	dropped bool
}

// anchorTok is one token of an anchor text: its term's bytes in terms.
type anchorTok struct {
	start, end     int32
	capital, whole bool
}

func (c *anchorChunk) term(t anchorTok) []byte { return c.terms[t.start:t.end] }

// targetsPerChunk bounds a chunk: a few hundred targets keep both
// goroutines busy without holding much of a large pass in memory (a
// variable for the test that varies it).
var targetsPerChunk = 256

// readAnchors sends the anchors of targets, in order, in chunks; it stops
// at the first error (sent as a chunk's err) or when stop is closed, and
// closes out when it has stopped reading.
func (b *Builder) readAnchors(targets iter.Seq[uint32], anchors *anchorReader, stop <-chan struct{}) (out <-chan *anchorChunk) {
	// Room for the chunks of a year-old crawl's batch (about 15 of a
	// megabyte or so): the reader starts before the stale targets are
	// re-indexed, and reads all their anchors meanwhile.
	chunks := make(chan *anchorChunk, 16)
	an := analysis.New(b.opts.Analysis)
	go func() {
		defer close(chunks)
		send := func(c *anchorChunk) bool {
			select {
			case <-stop: // stopped: no more, even with room in chunks
				return false
			default:
			}
			select {
			case chunks <- c:
				return true
			case <-stop:
				return false
			}
		}
		// A chunk's records are gathered first (the runs are mapped), then
		// read ahead all at once (anchors.prefetch), then read and analysed
		// in order: a large index's records lie all over its anchors file,
		// and one read at a time would wait for each.
		type pending struct {
			to   uint32
			recs [][2]uint64
		}
		var batch []pending
		var offs []uint64
		flush := func() bool {
			anchors.prefetch(offs)
			c := &anchorChunk{}
			for _, p := range batch {
				for _, r := range p.recs {
					from, fromOff, text, err := anchors.at(r[1], p.to)
					if err == errDropped {
						c.anchors = append(c.anchors, readAnchor{from: uint32(r[0]), end: len(c.toks), dropped: true})
						continue
					}
					if err == nil && uint32(r[0]) != from {
						err = corrupt("anchor runs: record at %d is not from doc %d", r[1], uint32(r[0]))
					}
					if err != nil {
						c.err = err
						send(c)
						return false
					}
					an.Tokens(text, func(t analysis.Token) {
						start := int32(len(c.terms))
						c.terms = append(c.terms, t.Term...)
						c.toks = append(c.toks, anchorTok{start: start, end: int32(len(c.terms)), capital: t.Capital, whole: t.Whole})
					})
					c.anchors = append(c.anchors, readAnchor{from: from, fromOff: fromOff, end: len(c.toks)})
				}
				c.targets = append(c.targets, chunkTarget{to: p.to, end: len(c.anchors)})
			}
			batch, offs = batch[:0], offs[:0]
			return send(c)
		}
		for to := range targets {
			lo, hi := uint64(to)<<32, uint64(to+1)<<32
			var recs [][2]uint64
			if err := b.anc.each(lo, hi, func(k, v uint64) error {
				recs = append(recs, [2]uint64{k, v})
				return nil
			}); err != nil {
				send(&anchorChunk{err: err})
				return
			}
			i, _ := slices.BinarySearchFunc(b.newAnc, lo, func(r [2]uint64, k uint64) int { return cmpU64(r[0], k) })
			for ; i < len(b.newAnc) && b.newAnc[i][0] < hi; i++ {
				recs = append(recs, b.newAnc[i])
			}
			// in anchors-file order, as one build in one go meets them
			slices.SortFunc(recs, func(x, y [2]uint64) int { return cmpU64(x[1], y[1]) })
			for _, r := range recs {
				offs = append(offs, r[1])
			}
			batch = append(batch, pending{to, recs})
			if len(batch) == targetsPerChunk && !flush() {
				return
			}
		}
		if len(batch) > 0 {
			flush()
		}
	}()
	return chunks
}

// heldAnchors returns the anchor records the postings of document to held
// before the batch (DocEntry.Anchors of its entry then; 0 for a document
// new in the batch).
func (b *Builder) heldAnchors(to uint32) (int, error) {
	if to >= b.oldN {
		return 0, nil
	}
	e, _, ok, err := b.oldDoc(to)
	if err != nil || !ok {
		return 0, err
	}
	return int(e.Anchors), nil
}

// indexAnchors makes the anchor text of every target readAnchors sends hits of
// the target (and, for a target of an older segment, records the anchor
// words its old entry had as dead).
func (b *Builder) indexAnchors(chunks <-chan *anchorChunk) error {
	for c := range chunks {
		if c.err != nil {
			return c.err
		}
		a, t := 0, 0
		for _, ct := range c.targets {
			to := ct.to
			b.keys, b.hits = b.keys[:0], b.hits[:0]
			var old []uint64
			b.Stats.AnchorsRead += ct.end - a
			// The old entry's postings hold the anchors of its first held
			// records, in anchors-file order (0: an older index's entry,
			// which held every anchor live then; see anchorsCanWait).
			held, err := b.heldAnchors(to)
			if err != nil {
				return err
			}
			for p, ra := range c.anchors[a:ct.end] {
				toks := c.toks[t:ra.end]
				t = ra.end
				if ra.dropped {
					b.Stats.AnchorsDropped++
					continue // dead before the batch, and now
				}
				if to < b.oldN && (held == 0 || p < held) && b.liveBefore(ra.from, ra.fromOff) {
					// an anchor the target's old segment indexed
					for _, tok := range toks {
						id, _, err := b.lex.Add(c.term(tok))
						if err != nil {
							return err
						}
						old = append(old, uint64(id)<<32)
					}
				}
				cur, err := b.repoOf(ra.from)
				if err != nil {
					return err
				}
				if cur != ra.fromOff {
					continue
				}
				pos := 0
				for _, tok := range toks {
					if err := b.addHit(c.term(tok), hitOfAnchor(tok, pos, ra.from)); err != nil {
						return err
					}
					if !tok.whole {
						pos++
					}
				}
			}
			if b.anchorsOf == nil {
				b.anchorsOf = map[uint32]uint32{}
			}
			b.anchorsOf[to] = uint32(ct.end - a)
			a = ct.end
			b.dead.add(to, old)
			if err := b.flushHits(to); err != nil {
				return err
			}
		}
	}
	return nil
}

func hitOfAnchor(t anchorTok, pos int, from uint32) hit.Hit {
	return hit.AnchorHit(t.capital, pos, from)
}
