package barrel

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// commitFiles sorts the batch into a new segment (its postings and the
// entries of its documents), marks the documents it re-indexed deleted in
// the older segments, writes the batch's URL and anchor runs, runs the
// merge policies, ranks the documents when due, and writes the new
// generation: every new file is fsynced and only then is the manifest
// renamed in.
func (b *Builder) commitFiles(dirty bitset) error {
	gen := b.m.Generation + 1
	m := *b.m
	m.Files = map[string]FileSum{}
	m.Segments = slices.Clone(b.m.Segments)
	m.URLRuns, m.AnchorRuns = slices.Clone(b.m.URLRuns), slices.Clone(b.m.AnchorRuns)
	for name, sum := range b.m.Files {
		if fixedName(name) {
			m.Files[name] = sum
		}
	}
	var written []string
	ok := false
	defer func() {
		if !ok {
			for _, w := range written {
				os.Remove(filepath.Join(b.dir, w))
			}
		}
	}()
	create := func(name string) (*genWriter, error) {
		written = append(written, diskName(name, gen))
		return createGen(filepath.Join(b.dir, diskName(name, gen)))
	}
	writeWhole := func(name string, data []byte) error {
		w, err := create(name)
		if err != nil {
			return err
		}
		w.Write(data)
		sum, err := w.finish()
		m.Files[name] = sum
		return err
	}
	newID := func() int {
		id := max(1, m.NextSegment)
		m.NextSegment = id + 1
		return id
	}
	n := b.nDocs
	// The documents whose postings this batch rebuilt.
	var owned []uint32
	for d := range dirty.all(n) {
		owned = append(owned, d)
	}

	// Sorter, one barrel at a time, into a new segment.
	t0 := time.Now()
	if len(owned) > 0 {
		id := newID()
		so, err := newSegOut(id, &m, create, writeWhole)
		if err != nil {
			return err
		}
		w := so.w
		if err := sortBarrels(b.fwd.path, b.lex.Count, b.opts.SortMemory, w, func(bb int) { os.Remove(b.fwd.path(bb)) }); err != nil {
			so.abort()
			return err
		}
		if err := so.endLists(); err != nil {
			so.abort()
			return err
		}
		// Its document table, and the older segments the documents leave.
		gone := map[int][]uint32{}
		pw, err := b.pageWords()
		if err != nil {
			so.abort()
			return err
		}
		var rec []byte
		for _, d := range owned {
			e, err := b.entry(d)
			if err != nil {
				so.abort()
				return err
			}
			e.Anchors = b.anchorsOf[d]
			so.docs.add(appendDocRec(rec[:0], d, &e))
			pw.add(e, 1)
			if d < b.oldN {
				old, k, ok, err := b.oldDoc(d)
				if err == nil && !ok {
					err = corrupt("doc %d is in no segment", d)
				}
				if err != nil {
					so.abort()
					return err
				}
				gone[k] = append(gone[k], d)
				pw.add(old, -1)
			}
		}
		m.PageWords = &pw
		if err := so.finish(); err != nil {
			return err
		}
		b.Stats.SegmentWords = w.words()
		if err := b.updateDocFreqs(&w.secs); err != nil {
			return err
		}
		for i := range m.Segments {
			si := &m.Segments[i]
			if len(gone[i]) == 0 {
				continue
			}
			s := b.old.segs[i]
			del := unionSorted(s.delList.slice(), gone[i])
			delete(m.Files, si.Del)
			si.Del = segName(si.ID, "del."+strconv.Itoa(gen))
			si.Deleted = len(del)
			b.Stats.Deleted += len(del) - s.delList.len()
			if err := writeWhole(si.Del, encodeDocList(del)); err != nil {
				return err
			}
		}
		m.Segments = append(m.Segments, SegmentInfo{ID: id, Docs: len(owned), Batches: 1})
		b.Stats.SegmentDocs = len(owned)
	}
	// Drop segments left with no live document.
	m.Segments = slices.DeleteFunc(m.Segments, func(si SegmentInfo) bool {
		if si.Live() > 0 {
			return false
		}
		for _, ext := range segFiles {
			delete(m.Files, segName(si.ID, ext))
		}
		delete(m.Files, si.Del)
		return true
	})
	m.Docs = n
	m.LexCounts = b.lex.counts // the merges below check their words against it
	m.Generation = gen
	picks := pickMerges(m.Segments, b.policy())
	if b.mergeAll {
		picks = nil
		if len(m.Segments) > 1 || len(m.Segments) == 1 && m.Segments[0].Deleted > 0 {
			var all []int
			for _, si := range m.Segments {
				all = append(all, si.ID)
			}
			picks = [][]int{all}
		}
	}
	mt := time.Now()
	for _, ids := range picks {
		if err := b.merge(&m, ids, create, writeWhole); err != nil {
			return err
		}
	}
	b.Stats.MergeTime = time.Since(mt)
	if m.PageWords == nil { // no batch: the live pages are those before
		pw, err := b.pageWords()
		if err != nil {
			return err
		}
		m.PageWords = &pw
	}
	// The block sums of the segments of an index older than format 10.
	for _, si := range m.Segments {
		name := segName(si.ID, "sums")
		if hasFile(&m, name) || hasFile(&m, segName(si.ID, "seg")) {
			continue
		}
		inv := segName(si.ID, "inv")
		f := m.Files[inv]
		data, err := sumsOfFile(filepath.Join(b.dir, inv), f.Size, f.CRC)
		if err != nil {
			return err
		}
		if err := writeWhole(name, data); err != nil {
			return err
		}
	}
	// The batch's URLs and anchors, each a new run; one merge of each.
	for _, rs := range []struct {
		kind string
		recs [][2]uint64
		runs *[]RunInfo
	}{{urlKind, b.batchSums, &m.URLRuns}, {anchorKind, b.newAnc, &m.AnchorRuns},
		{lexKind, b.lex.added, &m.LexRuns}, {dfKind, b.dfRecs, &m.DFRuns}} {
		if len(rs.recs) > 0 {
			slices.SortFunc(rs.recs, cmpRec)
			id := newID()
			g, err := create(runName(rs.kind, id))
			if err != nil {
				return err
			}
			if m.Files[runName(rs.kind, id)], err = writeRun(g, rs.recs); err != nil {
				return err
			}
			*rs.runs = append(*rs.runs, RunInfo{ID: id, Count: len(rs.recs)})
		}
		if err := b.mergeRuns(&m, rs.kind, rs.runs, create, newID); err != nil {
			return err
		}
	}
	b.Stats.SortTime = time.Since(t0)
	t0 = time.Now()
	defer func() { b.Stats.FinishTime = time.Since(t0) }()

	// Ranks, when due; between two rankings a new document gets the rank
	// of a page nothing links to.
	var ranks []float32
	switch {
	case b.opts.Importance != nil:
		var err error
		if ranks, err = b.rankByImportance(); err != nil {
			return err
		}
		m.RankSource, m.RankedAt = "importance", m.Batches+1
		b.Stats.Ranked = true
	case b.rankDue():
		g, err := b.links()
		if err != nil {
			return err
		}
		pr := g.pageRank(0.85, 50, 1e-9)
		g = nil
		ranks = make([]float32, n)
		for i := range ranks {
			ranks[i] = float32(pr[i])
		}
		m.RankSource, m.RankedAt = "pagerank", m.Batches+1
		b.Stats.Ranked = true
	}
	if ranks != nil {
		if m.Ranks != 0 {
			delete(m.Files, runName("ranks", m.Ranks))
		}
		m.Ranks, m.RankedDocs = newID(), n
		g, err := create(runName("ranks", m.Ranks))
		if err != nil {
			return err
		}
		tw := newTableWriter(g, 4)
		var buf [4]byte
		for _, r := range ranks {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(r))
			tw.add(buf[:])
		}
		if m.Files[runName("ranks", m.Ranks)], err = tw.finish(); err != nil {
			return err
		}
	}
	if err := b.commitDocStats(&m, owned, ranks != nil, create, newID); err != nil {
		return err
	}
	if b.rankOnly {
		m.RankedAt = m.Batches
	}
	maintenance := b.rankOnly || b.mergeAll || b.mergesOnly

	paths := make([]string, len(written))
	for i, w := range written {
		paths[i] = filepath.Join(b.dir, w)
	}
	if err := syncFiles(paths); err != nil {
		return err
	}
	for _, a := range []*appendFile{b.repo, b.info, b.anchorsF, b.lex.log, b.text} {
		if err := a.sync(); err != nil {
			return err
		}
	}
	if err := syncDir(b.dir); err != nil {
		return err
	}
	m.Format = formatNumber
	if !writeWordBlocks {
		m.Format = formatNoWordBlocks
	}
	if !writeDocStats {
		m.Format = formatNoDocStats
	}
	if !maintenance {
		m.Batches++
		if b.opts.Batch != "" {
			m.LastBatch = b.opts.Batch
		}
	}
	m.Repository, m.DocInfo, m.Anchors = b.repo.off, b.info.off, b.anchorsF.off
	m.RepositoryCRC, m.DocInfoCRC, m.AnchorsCRC = b.repo.crc, b.info.crc, b.anchorsF.crc
	m.Words, m.WordsCRC, m.LexCounts = b.lex.log.off, b.lex.log.crc, b.lex.counts
	m.Text, m.TextCRC = b.text.off, b.text.crc
	m.Fetched += uint32(b.fetched)
	m.Fetched -= uint32(b.withdrawn)
	m.NoIndex += b.Stats.NoIndex
	m.Folded += b.Stats.Folded
	m.Guessed += b.Stats.Guessed
	for _, s := range m.spaces() {
		s.sp.Records += b.file(s.kind).written
	}
	m.LiveAnchors += b.anchorsF.written - b.deadAnchors
	// Reclaim, when one of the files is due: its new generation is
	// written and synced before the manifest names it.
	if kind := reclaimDue(&m); kind != "" && !b.noReclaim {
		rt := time.Now()
		files, err := b.reclaim(&m, kind, newID)
		written = append(written, files...)
		if err != nil {
			return err
		}
		paths := make([]string, len(files))
		for i, f := range files {
			paths[i] = filepath.Join(b.dir, f)
		}
		if err := syncFiles(paths); err != nil {
			return err
		}
		if err := syncDir(b.dir); err != nil {
			return err
		}
		b.Stats.Reclaimed, b.Stats.ReclaimTime = kind, time.Since(rt)
		if reclaimHook != nil {
			reclaimHook("written", kind)
		}
	}
	if err := writeManifest(b.dir, &m); err != nil {
		return err
	}
	ok = true
	b.Stats.NewWords = b.newWords
	b.Stats.Segments = len(m.Segments)
	old := b.m
	b.m = &m
	if b.old != nil {
		b.old.Close()
		b.old = nil
	}
	b.anc.close()
	b.anc = nil
	// Files of the old generation, and those written and merged away in
	// this one, are no longer named by the manifest.
	for name := range old.Files {
		written = append(written, diskName(name, old.Generation))
	}
	if reclaimHook != nil && b.Stats.Reclaimed != "" {
		reclaimHook("committed", b.Stats.Reclaimed)
	}
	removeUnreferenced(b.dir, written, &m)
	// The files a reclaim replaced.
	for i, s := range old.spaces() {
		if was, is := s.sp.name(s.kind), m.spaces()[i].sp.name(s.kind); was != is {
			os.Remove(filepath.Join(b.dir, was))
		}
	}
	return nil
}

// pageWords is the index's count of live fetched pages and their words
// before the batch: the manifest's, or, in an index written before it
// kept one, counted from every live entry (once).
func (b *Builder) pageWords() (PageWords, error) {
	if b.m.PageWords != nil {
		return *b.m.PageWords, nil
	}
	if b.old == nil {
		return PageWords{}, nil
	}
	return b.old.countPageWords()
}

// mergeRuns runs the merge policy on one kind of runs.
func (b *Builder) mergeRuns(m *Manifest, kind string, runs *[]RunInfo, create func(string) (*genWriter, error), newID func() int) error {
	p := b.policy()
	ids := pickRunMerge(*runs, p.factor, maxRunRecords)
	if b.mergeAll && len(*runs) > 1 {
		ids = nil
		for _, r := range *runs {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) < 2 {
		return nil
	}
	picked := make([]RunInfo, 0, len(ids))
	for _, r := range *runs {
		if slices.Contains(ids, r.ID) {
			picked = append(picked, r)
		}
	}
	rs, err := openRuns(b.dir, kind, picked, m)
	if err != nil {
		return err
	}
	defer rs.close()
	id := newID()
	g, err := create(runName(kind, id))
	if err != nil {
		return err
	}
	sum, count, err := mergeRuns(g, rs.tabs, kind == dfKind)
	if err != nil {
		return err
	}
	m.Files[runName(kind, id)] = sum
	pos := 0
	for i, r := range *runs {
		if slices.Contains(ids, r.ID) {
			pos = i
			delete(m.Files, runName(kind, r.ID))
		}
	}
	(*runs)[pos] = RunInfo{ID: id, Count: count}
	*runs = slices.DeleteFunc(*runs, func(r RunInfo) bool { return slices.Contains(ids, r.ID) })
	return nil
}

// maxRunRecords bounds the records of a merged run (64 MiB): larger runs
// are left alone, so a build's run merges stay bounded.
const maxRunRecords = 1 << 22

// updateDocFreqs adds the document counts of the new segment's full lists
// to the live document frequencies and takes away the words of the
// documents the batch superseded.
func (b *Builder) updateDocFreqs(secs *[lexicon.Barrels]barrelSection) error {
	delta := map[uint32]int64{}
	for bb := range secs {
		for i, rel := range secs[bb].rels {
			delta[lexicon.ID(bb, rel)] += int64(secs[bb].fullN[i])
		}
	}
	for id, n := range b.dead.counts() {
		delta[id] -= int64(n)
	}
	b.dead = nil
	b.dfRecs = b.dfRecs[:0]
	for id, d := range delta {
		if d == 0 {
			continue
		}
		if d < 0 {
			old, err := dfOf(b.df, id)
			if err != nil {
				return err
			}
			if old+d < 0 {
				return corrupt("df: word %d counted in %d fewer documents than it leaves", id, -(old + d))
			}
		}
		b.dfRecs = append(b.dfRecs, [2]uint64{uint64(id), uint64(d)})
	}
	return nil
}

func (b *Builder) rankDue() bool {
	if (b.mergeAll || b.mergesOnly) && !b.rankOnly {
		return false
	}
	every := b.opts.PageRankEvery
	if every <= 0 {
		every = 1
	}
	return b.rankOnly || b.m.RankSource == "" || b.m.Batches+1-b.m.RankedAt >= every
}

// merge replaces the segments ids by one holding their live postings.
func (b *Builder) merge(m *Manifest, ids []int, create func(string) (*genWriter, error), writeWhole func(string, []byte) error) error {
	var segs []*segment
	batches := 0
	gone := map[int]bool{}
	for _, id := range ids {
		gone[id] = true
	}
	inStats := true // its live documents are its inputs'
	for _, si := range m.Segments {
		if !gone[si.ID] {
			continue
		}
		inStats = inStats && si.InDocStats
		s, err := openSegment(b.dir, si, m)
		if err != nil {
			return err
		}
		defer s.close()
		segs = append(segs, s)
		batches += si.Batches
	}
	// The live documents' entries, in docID order.
	var recs [][]byte
	for _, s := range segs {
		if err := s.eachDoc(func(d uint32, _ DocEntry, r []byte) error {
			if !s.del.has(d) {
				recs = append(recs, r)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	slices.SortFunc(recs, func(x, y []byte) int { return cmpU64(binary.LittleEndian.Uint64(x), binary.LittleEndian.Uint64(y)) })
	id := m.NextSegment
	m.NextSegment++
	so, err := newSegOut(id, m, create, writeWhole)
	if err != nil {
		return err
	}
	if err := mergeSegments(segs, so.w); err != nil {
		so.abort()
		return err
	}
	if err := so.endLists(); err != nil {
		so.abort()
		return err
	}
	for _, r := range recs {
		so.docs.add(r)
	}
	if err := so.finish(); err != nil {
		return err
	}
	owned := len(recs)
	// The merged segment takes the place of the newest of its inputs, so
	// segments stay ordered by age.
	pos := -1
	for i, si := range m.Segments {
		if gone[si.ID] {
			pos = i
			for _, ext := range segFiles {
				delete(m.Files, segName(si.ID, ext))
			}
			delete(m.Files, si.Del)
			b.Stats.MergedDocs += si.Docs
		}
	}
	m.Segments[pos] = SegmentInfo{ID: id, Docs: owned, Batches: batches, InDocStats: inStats}
	m.Segments = slices.DeleteFunc(m.Segments, func(si SegmentInfo) bool { return gone[si.ID] })
	b.Stats.Merged += len(ids)
	return nil
}

// removeUnreferenced deletes the files among names that m does not name.
func removeUnreferenced(dir string, names []string, m *Manifest) {
	keep := map[string]bool{}
	for name := range m.Files {
		keep[diskName(name, m.Generation)] = true
	}
	for _, d := range names {
		if !keep[d] {
			os.Remove(filepath.Join(dir, d))
		}
	}
}

func unionSorted(a, b []uint32) []uint32 {
	out := make([]uint32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// RankIndex recomputes the ranks of every document of the index in dir now
// (PageRank over the live links, or opts.Importance), outside any batch:
// the `barrel pagerank` command.
func RankIndex(dir string, opts Options) (*Stats, error) {
	return maintain(dir, opts, func(b *Builder) { b.rankOnly = true })
}

// ForceMerge merges every segment of the index in dir into one, dropping
// deleted postings: the `barrel merge` command.
func ForceMerge(dir string, opts Options) (*Stats, error) {
	return maintain(dir, opts, func(b *Builder) { b.mergeAll = true })
}

// Expunge runs the merge policy on the index in dir without a batch: the
// merges and expunges a batch's build would make, one build's worth.
// Stats.Merged is 0 when none was due.
func Expunge(dir string, opts Options) (*Stats, error) {
	return maintain(dir, opts, func(b *Builder) { b.mergesOnly = true })
}

func maintain(dir string, opts Options, set func(*Builder)) (*Stats, error) {
	if _, err := readManifest(dir); err != nil {
		return nil, err
	}
	opts.Batch = ""
	b, err := NewBuilder(dir, opts)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	set(b)
	if err := b.Commit(); err != nil {
		return nil, err
	}
	return &b.Stats, nil
}

func (b *Builder) rankByImportance() ([]float32, error) {
	ranks := make([]float32, b.nDocs)
	var total float64
	for u, v := range b.opts.Importance {
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		d, ok := b.batchURLs[u]
		if !ok {
			var err error
			if d, ok, err = lookupURL(b.urls, u, b.docURL); err != nil {
				return nil, err
			}
		}
		if !ok {
			continue
		}
		ranks[d] = float32(v)
		total += v
	}
	floor := float32(math.MaxFloat32)
	for i := range ranks {
		if ranks[i] > 0 {
			ranks[i] = float32(float64(ranks[i]) / total)
			floor = min(floor, ranks[i])
		}
	}
	if floor == math.MaxFloat32 {
		floor = 1 / float32(max(1, len(ranks)))
	}
	for i := range ranks {
		if ranks[i] == 0 {
			ranks[i] = floor / 2
		}
	}
	return ranks, nil
}
