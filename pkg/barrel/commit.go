package barrel

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// commitFiles sorts the batch into a new segment, marks the documents it
// re-indexed deleted in the older segments, runs one step of the merge
// policy, ranks the documents when due, and writes the new generation:
// every new file is fsynced and only then is the manifest renamed in.
func (b *Builder) commitFiles(dirty bitset, edges [][2]uint32) error {
	gen := b.m.Generation + 1
	m := *b.m
	m.Files = map[string]FileSum{}
	m.Segments = slices.Clone(b.m.Segments)
	for name, sum := range b.m.Files {
		if strings.HasPrefix(name, segPrefix) {
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
	// The documents whose postings this batch rebuilt.
	var owned []uint32
	for d := range uint32(len(b.docs)) {
		if dirty.has(d) {
			owned = append(owned, d)
		}
	}

	// Sorter, one barrel at a time, into a new segment.
	t0 := time.Now()
	if len(owned) > 0 {
		id := max(1, m.NextSegment)
		m.NextSegment = id + 1
		inv, err := create(segName(id, "inv"))
		if err != nil {
			return err
		}
		w := &segWriter{inv: inv}
		for bb := range lexicon.Barrels {
			if err := sortBarrel(b.fwd.path(bb), bb, b.lex.Count(bb), b.opts.SortMemory, w); err != nil {
				inv.finish()
				return err
			}
			os.Remove(b.fwd.path(bb))
		}
		sum, err := inv.finish()
		if err != nil {
			return err
		}
		m.Files[segName(id, "inv")] = sum
		if err := writeWhole(segName(id, "ptrs"), encodeSegPtrs(&w.secs)); err != nil {
			return err
		}
		if err := writeWhole(segName(id, "docs"), encodeDocList(owned)); err != nil {
			return err
		}
		b.Stats.SegmentWords = w.words()
		if err := b.updateDocFreqs(&w.secs); err != nil {
			return err
		}
		// Deletions: the batch's documents leave the segments that held them.
		for i := range m.Segments {
			si := &m.Segments[i]
			s, err := b.segment(si.ID)
			if err != nil {
				return err
			}
			docs, err := s.docs(b.dir, b.m)
			if err != nil {
				return err
			}
			gone := intersectSorted(docs, owned)
			if len(gone) == 0 {
				continue
			}
			del := unionSorted(s.delList, gone)
			if len(del) == len(s.delList) {
				continue
			}
			delete(m.Files, si.Del)
			si.Del = segName(si.ID, "del."+strconv.Itoa(gen))
			si.Deleted = len(del)
			b.Stats.Deleted += len(del) - len(s.delList)
			if err := writeWhole(si.Del, encodeDocList(del)); err != nil {
				return err
			}
		}
		m.Segments = append(m.Segments, SegmentInfo{ID: id, Docs: len(owned), Batches: 1})
	}
	// Drop segments left with no live document.
	m.Segments = slices.DeleteFunc(m.Segments, func(si SegmentInfo) bool {
		if si.Live() > 0 {
			return false
		}
		for _, ext := range []string{"inv", "ptrs", "docs"} {
			delete(m.Files, segName(si.ID, ext))
		}
		delete(m.Files, si.Del)
		return true
	})
	b.df.grow(b.lex)
	m.Docs = uint32(len(b.docs))
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
	for _, ids := range picks {
		if err := b.merge(&m, ids, create, writeWhole); err != nil {
			return err
		}
	}
	b.Stats.SortTime = time.Since(t0)
	t0 = time.Now()
	defer func() { b.Stats.FinishTime = time.Since(t0) }()

	// Ranks, when due; between two rankings a new document gets the rank
	// of a page nothing links to.
	switch {
	case b.opts.Importance != nil:
		b.rankByImportance()
		m.RankSource, m.RankedAt = "importance", m.Batches+1
		b.Stats.Ranked = true
	case b.rankDue():
		pr := PageRank(len(b.docs), edges, 0.85, 50, 1e-9)
		for i := range b.docs {
			b.docs[i].Rank = float32(pr[i])
		}
		m.RankSource, m.RankedAt = "pagerank", m.Batches+1
		b.Stats.Ranked = true
	default:
		base := float32(0.15 / float64(max(1, len(b.docs))))
		for i := int(b.m.Docs); i < len(b.docs); i++ {
			b.docs[i].Rank = base
		}
	}
	if b.rankOnly {
		m.RankedAt = m.Batches
	}
	maintenance := b.rankOnly || b.mergeAll

	b.urls = mergeURLs(b.urls, b.batchSums)
	lexBytes, _ := b.lex.MarshalBinary()
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"docindex", encodeDocIndex(b.docs)},
		{"urls", encodeURLMap(b.urls)},
		{"lexicon", lexBytes},
		{"df", encodeDocFreqs(b.df)},
	} {
		if err := writeWhole(f.name, f.data); err != nil {
			return err
		}
	}
	paths := make([]string, len(written))
	for i, w := range written {
		paths[i] = filepath.Join(b.dir, w)
	}
	if err := syncFiles(paths); err != nil {
		return err
	}
	for _, a := range []*appendFile{b.repo, b.info, b.anchorsF} {
		if err := a.sync(); err != nil {
			return err
		}
	}
	if err := syncDir(b.dir); err != nil {
		return err
	}
	m.Format = formatNumber
	if !maintenance {
		m.Batches++
		if b.opts.Batch != "" {
			m.LastBatch = b.opts.Batch
		}
	}
	m.Repository, m.DocInfo, m.Anchors = b.repo.off, b.info.off, b.anchorsF.off
	m.RepositoryCRC, m.DocInfoCRC, m.AnchorsCRC = b.repo.crc, b.info.crc, b.anchorsF.crc
	m.Fetched = 0
	for i := range b.docs {
		if b.docs[i].Status == StatusFetched {
			m.Fetched++
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
	b.closeSegments()
	if b.old != nil {
		b.old.Close()
		b.old = nil
	}
	// Files of the old generation, and those written and merged away in
	// this one, are no longer named by the manifest.
	for name := range old.Files {
		written = append(written, diskName(name, old.Generation))
	}
	removeUnreferenced(b.dir, written, &m)
	return nil
}

// updateDocFreqs adds the document counts of the new segment's full lists
// to the live document frequencies and takes away the words of the
// documents the batch superseded.
func (b *Builder) updateDocFreqs(secs *[lexicon.Barrels]barrelSection) error {
	df := b.df
	df.grow(b.lex)
	for bb := range secs {
		for i, rel := range secs[bb].rels {
			df[bb][rel] += secs[bb].fullN[i]
		}
	}
	for id, n := range b.dead.counts() {
		bb, rel := lexicon.BarrelOf(id), lexicon.Rel(id)
		if df[bb][rel] < n {
			return corrupt("df: word %d counted in %d fewer documents than it leaves", id, n-df[bb][rel])
		}
		df[bb][rel] -= n
	}
	b.dead = nil
	return nil
}

func (b *Builder) rankDue() bool {
	if b.mergeAll && !b.rankOnly {
		return false
	}
	every := b.opts.PageRankEvery
	if every <= 0 {
		every = 1
	}
	return b.rankOnly || b.m.RankSource == "" || b.m.Batches+1-b.m.RankedAt >= every
}

// segment returns the open segment id of the index being built on.
func (b *Builder) segment(id int) (*segment, error) {
	if b.segs == nil {
		b.segs = map[int]*segment{}
	}
	if s := b.segs[id]; s != nil {
		return s, nil
	}
	for _, si := range b.m.Segments {
		if si.ID == id {
			s, err := openSegment(b.dir, si, b.m)
			if err != nil {
				return nil, err
			}
			b.segs[id] = s
			return s, nil
		}
	}
	return nil, fmt.Errorf("no segment %d", id)
}

func (b *Builder) closeSegments() {
	for _, s := range b.segs {
		s.close()
	}
	b.segs = nil
}

// DefaultMergeFactor is how many segments of one size class are merged
// into one.
const DefaultMergeFactor = 4

// DefaultMaxMergeDocs bounds the documents one build merges (see pickMerges).
const DefaultMaxMergeDocs = 1 << 18

// DefaultDeletesPct is the share of deleted documents (percent) past which a
// segment is merged early.
const DefaultDeletesPct = 20

// sizeClass is the logarithmic size class of a segment of docs documents.
func sizeClass(docs, factor int) int {
	c := 0
	for n := max(1, docs); n >= factor; n /= factor {
		c++
	}
	return c
}

// mergePolicy chooses the merges of one build.
type mergePolicy struct {
	factor, maxDocs, deletesPct int
}

func (b *Builder) policy() mergePolicy {
	p := mergePolicy{b.opts.MergeFactor, b.opts.MaxMergeDocs, b.opts.DeletesPct}
	if p.factor < 2 {
		p.factor = DefaultMergeFactor
	}
	if p.maxDocs <= 0 {
		p.maxDocs = DefaultMaxMergeDocs
	}
	if p.deletesPct <= 0 || p.deletesPct > 100 {
		p.deletesPct = DefaultDeletesPct
	}
	return p
}

// pickMerges is the merge policy, logarithmic (as Lucene's
// LogDocMergePolicy) and deletion-aware (as its TieredMergePolicy):
//
//   - segments fall in size classes by powers of factor of their live
//     documents; when a class holds factor segments they are merged, the
//     smallest class first, so the number of segments stays O(log n) below
//     the size cap;
//   - a segment whose deleted share reaches deletesPct is merged early,
//     alone (its live postings rewritten), the most deleted first: older
//     segments keep losing documents as batches re-index pages and the
//     targets of their links, and deleted postings cost every query that
//     walks them;
//   - one build reads at most maxDocs documents in merges (deleted ones
//     included), and no merge of several segments makes one of more than
//     maxDocs live documents: a turn's merge work is bounded, and what does
//     not fit waits for a later build. Segments at the cap are only
//     expunged; past it their number grows linearly (n / maxDocs).
//
// It returns the merges as lists of segment IDs.
func pickMerges(segs []SegmentInfo, p mergePolicy) [][]int {
	budget := p.maxDocs
	used := map[int]bool{}
	var out [][]int
	classes := map[int][]SegmentInfo{}
	var order []int
	for _, s := range segs {
		if s.Live() > p.maxDocs/2 {
			continue // at the cap: expunged only
		}
		c := sizeClass(s.Live(), p.factor)
		if classes[c] == nil {
			order = append(order, c)
		}
		classes[c] = append(classes[c], s)
	}
	slices.Sort(order)
	for _, c := range order {
		group := classes[c]
		if len(group) < p.factor {
			continue
		}
		var ids []int
		docs, live := 0, 0
		for _, s := range group[:p.factor] {
			if live+s.Live() > p.maxDocs || docs+s.Docs > budget {
				break
			}
			ids = append(ids, s.ID)
			docs += s.Docs
			live += s.Live()
		}
		if len(ids) >= 2 {
			for _, id := range ids {
				used[id] = true
			}
			budget -= docs
			out = append(out, ids)
		}
		break // one size merge per build
	}
	// Expunges, the most deleted first.
	var heavy []SegmentInfo
	for _, s := range segs {
		if !used[s.ID] && s.Deleted > 0 && s.Deleted*100 >= p.deletesPct*s.Docs {
			heavy = append(heavy, s)
		}
	}
	slices.SortStableFunc(heavy, func(a, b SegmentInfo) int {
		return cmpU32(uint32(b.Deleted*1000/b.Docs), uint32(a.Deleted*1000/a.Docs))
	})
	for _, s := range heavy {
		if s.Docs <= budget {
			budget -= s.Docs
			out = append(out, []int{s.ID})
		}
	}
	return out
}

// merge replaces the segments ids by one holding their live postings.
func (b *Builder) merge(m *Manifest, ids []int, create func(string) (*genWriter, error), writeWhole func(string, []byte) error) error {
	var segs []*segment
	var owned []uint32
	batches := 0
	gone := map[int]bool{}
	for _, id := range ids {
		gone[id] = true
	}
	for _, si := range m.Segments {
		if !gone[si.ID] {
			continue
		}
		s, err := openSegment(b.dir, si, m)
		if err != nil {
			return err
		}
		defer s.close()
		segs = append(segs, s)
		docs, err := s.docs(b.dir, m)
		if err != nil {
			return err
		}
		owned = unionSorted(owned, differenceSorted(docs, s.delList))
		batches += si.Batches
	}
	id := m.NextSegment
	m.NextSegment++
	inv, err := create(segName(id, "inv"))
	if err != nil {
		return err
	}
	w := &segWriter{inv: inv}
	if err := mergeSegments(segs, w); err != nil {
		inv.finish()
		return err
	}
	sum, err := inv.finish()
	if err != nil {
		return err
	}
	m.Files[segName(id, "inv")] = sum
	if err := writeWhole(segName(id, "ptrs"), encodeSegPtrs(&w.secs)); err != nil {
		return err
	}
	if err := writeWhole(segName(id, "docs"), encodeDocList(owned)); err != nil {
		return err
	}
	// The merged segment takes the place of the newest of its inputs, so
	// segments stay ordered by age.
	pos := -1
	for i, si := range m.Segments {
		if gone[si.ID] {
			pos = i
			for _, ext := range []string{"inv", "ptrs", "docs"} {
				delete(m.Files, segName(si.ID, ext))
			}
			delete(m.Files, si.Del)
			b.Stats.MergedDocs += si.Docs
		}
	}
	m.Segments[pos] = SegmentInfo{ID: id, Docs: len(owned), Batches: batches}
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

func intersectSorted(a, b []uint32) []uint32 {
	var out []uint32
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
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

func differenceSorted(a, b []uint32) []uint32 {
	var out []uint32
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			continue
		}
		out = append(out, x)
	}
	return out
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

func (b *Builder) rankByImportance() {
	for i := range b.docs {
		b.docs[i].Rank = 0
	}
	var total float64
	for u, v := range b.opts.Importance {
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		d, ok := b.lookup(u)
		if !ok {
			continue
		}
		b.docs[d].Rank = float32(v)
		total += v
	}
	floor := float32(math.MaxFloat32)
	for i := range b.docs {
		if b.docs[i].Rank > 0 {
			b.docs[i].Rank = float32(float64(b.docs[i].Rank) / total)
			floor = min(floor, b.docs[i].Rank)
		}
	}
	if floor == math.MaxFloat32 {
		floor = 1 / float32(max(1, len(b.docs)))
	}
	for i := range b.docs {
		if b.docs[i].Rank == 0 {
			b.docs[i].Rank = floor / 2
		}
	}
}

// lookup finds the docID of a URL without assigning one.
func (b *Builder) lookup(u string) (uint32, bool) {
	if d, ok := b.batchURLs[u]; ok {
		return d, true
	}
	cands := urlCandidates(b.urls, urlSum(u))
	if len(cands) == 1 {
		return cands[0].Doc, true
	}
	for _, c := range cands {
		if got, _, err := b.docURL(c.Doc); err == nil && got == u {
			return c.Doc, true
		}
	}
	return 0, false
}

// PageRank computes the PageRank of n documents over the links database
// (from, to pairs; duplicates and self-links are ignored) with damping d,
// by power iteration until the L1 change is below tol. Ranks sum to 1;
// the rank of pages without out-links is spread over all pages.
func PageRank(n int, edges [][2]uint32, d float64, iters int, tol float64) []float64 {
	if n == 0 {
		return nil
	}
	es := slices.Clone(edges)
	slices.SortFunc(es, func(a, b [2]uint32) int {
		if a[0] != b[0] {
			return cmpU32(a[0], b[0])
		}
		return cmpU32(a[1], b[1])
	})
	es = slices.Compact(es)
	out := make([]int, n)
	k := 0
	for _, e := range es {
		if e[0] != e[1] {
			es[k] = e
			k++
			out[e[0]]++
		}
	}
	es = es[:k]
	pr := make([]float64, n)
	next := make([]float64, n)
	for i := range pr {
		pr[i] = 1 / float64(n)
	}
	for range iters {
		dangling := 0.0
		for i, o := range out {
			if o == 0 {
				dangling += pr[i]
			}
		}
		base := (1-d)/float64(n) + d*dangling/float64(n)
		for i := range next {
			next[i] = base
		}
		for _, e := range es {
			next[e[1]] += d * pr[e[0]] / float64(out[e[0]])
		}
		delta := 0.0
		for i := range pr {
			delta += math.Abs(next[i] - pr[i])
		}
		pr, next = next, pr
		if delta < tol {
			break
		}
	}
	return pr
}
