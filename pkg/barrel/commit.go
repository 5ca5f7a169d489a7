package barrel

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

func barrelName(kind string, b int) string { return fmt.Sprintf("%s-%02d", kind, b) }

// commitFiles runs the sorter, ranks the documents and writes the new
// generation: every rewritten file goes beside the old one under a new
// generation number and is fsynced; the manifest is renamed in last.
func (b *Builder) commitFiles(dirty bitset, edges [][2]uint32) error {
	gen := b.m.Generation + 1
	files := map[string]FileSum{}
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
		written = append(written, genName(name, gen))
		return createGen(filepath.Join(b.dir, genName(name, gen)))
	}
	writeWhole := func(name string, data []byte) error {
		w, err := create(name)
		if err != nil {
			return err
		}
		w.Write(data)
		sum, err := w.finish()
		files[name] = sum
		return err
	}

	// Sorter, one barrel at a time.
	t0 := time.Now()
	np := &ptrTable{}
	oldPtrs := &ptrTable{}
	if b.old != nil {
		oldPtrs = b.old.ptrs
	}
	for bb := range lexicon.Barrels {
		var oldS, oldF []byte
		if b.old != nil && oldPtrs.count(bb) > 0 {
			var err error
			if oldS, oldF, err = b.old.barrel(bb); err != nil {
				return err
			}
		}
		sw, err := create(barrelName("short", bb))
		if err != nil {
			return err
		}
		fw, err := create(barrelName("full", bb))
		if err != nil {
			sw.abort()
			return err
		}
		err = sortBarrel(b.fwd.path(bb), oldS, oldF, oldPtrs, bb, b.lex.Count(bb), dirty, b.opts.SortMemory, sw, fw, np)
		ssum, serr := sw.finish()
		fsum, ferr := fw.finish()
		for _, e := range []error{err, serr, ferr} {
			if e != nil {
				return e
			}
		}
		files[barrelName("short", bb)] = ssum
		files[barrelName("full", bb)] = fsum
		os.Remove(b.fwd.path(bb))
	}

	b.Stats.SortTime = time.Since(t0)
	t0 = time.Now()
	defer func() { b.Stats.FinishTime = time.Since(t0) }()
	// Ranks.
	if b.opts.Importance != nil {
		b.rankByImportance()
		b.m.RankSource = "importance"
	} else {
		pr := PageRank(len(b.docs), edges, 0.85, 50, 1e-9)
		for i := range b.docs {
			b.docs[i].Rank = float32(pr[i])
		}
		b.m.RankSource = "pagerank"
	}

	b.urls = mergeURLs(b.urls, b.batchSums)
	lexBytes, _ := b.lex.MarshalBinary()
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"docindex", encodeDocIndex(b.docs)},
		{"urls", encodeURLMap(b.urls)},
		{"lexicon", lexBytes},
		{"wordptrs", np.encode()},
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
	m := *b.m
	m.Format = formatNumber
	m.Generation = gen
	m.Docs = uint32(len(b.docs))
	m.Batches++
	m.Repository, m.DocInfo, m.Anchors = b.repo.off, b.info.off, b.anchorsF.off
	m.Fetched = 0
	for i := range b.docs {
		if b.docs[i].Status == StatusFetched {
			m.Fetched++
		}
	}
	m.Files = files
	if err := writeManifest(b.dir, &m); err != nil {
		return err
	}
	ok = true
	b.Stats.NewWords = b.newWords
	b.m = &m
	if b.old != nil {
		b.old.Close()
		b.old = nil
	}
	for _, name := range b.oldGens {
		os.Remove(filepath.Join(b.dir, name))
	}
	return nil
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
