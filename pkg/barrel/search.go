package barrel

import (
	"bytes"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"github.com/sekitei/crawlkit/pkg/barrel/hit"
	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
)

// Hit types for weighting: plain hits by font size 0-6, then the fancy
// types. The paper's "type-weights" are indexed by these.
const (
	TypeURL    = 7
	TypeTitle  = 8
	TypeAnchor = 9
	TypeMeta   = 10
	numTypes   = 11
)

// TypeNames names the weight types, for --explain.
var TypeNames = [numTypes]string{"small", "plain", "bold", "h4", "h3", "h2", "h1", "url", "title", "anchor", "meta"}

// Weights are the ranking parameters of section 4.5.1.
type Weights struct {
	Type      [numTypes]float64 // type-weights
	Prox      [10]float64       // proximity bin weights (0 = phrase, 9 = not near)
	CountCap  float64           // count-weights rise linearly then taper to this
	ProxScale float64           // weight of the proximity part for multi-word queries
	Rank      float64           // weight of log2(1 + PageRank * N)
	// TitleMatch weighs how exactly the query is the page's title: the
	// share of query words in the title times the share of the title's
	// words in the query (our addition to the paper's weights).
	TitleMatch float64
}

// DefaultWeights are the weights barrel ships with.
var DefaultWeights = Weights{
	Type:      [numTypes]float64{1, 1.5, 2.5, 3, 3.5, 4, 4.5, 6, 16, 5, 3},
	Prox:      [10]float64{1, 0.7, 0.5, 0.4, 0.3, 0.22, 0.16, 0.1, 0.05, 0},
	CountCap:  2,
	ProxScale: 1,
	Rank:      2,

	TitleMatch: 150,
}

// typeOf maps a hit to its weight type.
func typeOf(h hit.Hit) int {
	switch h.Type() {
	case -1:
		return h.Font()
	case hit.URL:
		return TypeURL
	case hit.Title:
		return TypeTitle
	case hit.Anchor:
		return TypeAnchor
	default:
		return TypeMeta
	}
}

// countWeight rises linearly with the count and tapers off at cap, so no
// single factor has too much influence.
func countWeight(c int, cap float64) float64 { return countWeightF(float64(c), cap) }

func countWeightF(c, cap float64) float64 {
	if c == 0 {
		return 0
	}
	return cap * (1 - math.Exp(-c/cap))
}

// proxBin puts the distance between two hits in one of 10 bins, from a
// phrase match (0) to "not even close" (9).
func proxBin(d int) int {
	switch {
	case d == 1:
		return 0
	case d == -1 || d == 2:
		return 1
	}
	if d < 0 {
		d = -d
	}
	switch {
	case d <= 3:
		return 2
	case d <= 5:
		return 3
	case d <= 8:
		return 4
	case d <= 13:
		return 5
	case d <= 21:
		return 6
	case d <= 40:
		return 7
	case d <= 100:
		return 8
	}
	return 9
}

// MaxMatches is where the searcher stops scanning (section 4.5).
const MaxMatches = 40000

// SearchOptions tune a search.
type SearchOptions struct {
	N          int      // results wanted (default 10)
	Explain    bool     // attach the score's parts
	NoSnippets bool     // skip snippets (they read the repository)
	Weights    *Weights // default DefaultWeights
	MaxMatches int      // default MaxMatches
}

// Result is one ranked hit.
type Result struct {
	Doc     uint32
	URL     string
	Title   string
	Score   float64
	Snippet string
	Explain *Explain
}

// Explain is the score of one result in parts, as the paper's debug mode
// showed them.
type Explain struct {
	Barrels    string                    `json:"barrels"`
	Counts     map[string]map[string]int `json:"counts"`              // word -> type -> hits
	Prox       map[string][10]float64    `json:"proximity,omitempty"` // type -> hits per proximity bin
	IRSingle   float64                   `json:"ir_single"`
	IRProx     float64                   `json:"ir_proximity"`
	TitleMatch float64                   `json:"title_match"`
	IR         float64                   `json:"ir"`
	Rank       float64                   `json:"pagerank"`
	RankPart   float64                   `json:"rank_part"`
}

// Response is the answer to a query.
type Response struct {
	Results []Result
	Matches int    // documents matching all words in the barrels used
	Barrels string // "short" or "full"
	Stopped bool   // the scan stopped at MaxMatches
	Unknown []string
}

type cursor struct {
	it postingIter
	ok bool
}

type scored struct {
	doc   uint32
	score float64
	lists [][]byte // hit lists, kept for re-scoring
	sg    *segment // where doc is live
}

// RerankDepth is how many matches, ranked without proximity, get the full
// score with proximity (at least 10 times the results wanted): proximity
// is the costly part of the score, and it only reorders close candidates.
const RerankDepth = 100

// Search evaluates query as in Figure 4 of the paper: the words become
// wordIDs; the doclists of the short barrels are scanned first for
// documents holding every word, each scored; when they give fewer than N
// matches the full barrels are scanned; the scan stops after MaxMatches
// documents; the best N are returned.
func (idx *Index) Search(query string, opt SearchOptions) (*Response, error) {
	if opt.N <= 0 {
		opt.N = 10
	}
	if opt.Weights == nil {
		opt.Weights = &DefaultWeights
	}
	if opt.MaxMatches <= 0 {
		opt.MaxMatches = MaxMatches
	}
	resp := &Response{}
	q := &parsedQuery{}
	an := idx.analyzers.Get().(*analysis.Analyzer)
	terms := queryTerms(an, query)
	idx.analyzers.Put(an)
	for _, w := range terms {
		if i := slices.Index(q.keys, w); i >= 0 {
			q.seq = append(q.seq, i)
			q.count[i]++
			continue
		}
		id, ok, err := idx.lex.Lookup([]byte(w))
		if err != nil {
			return nil, err
		}
		if !ok {
			if !slices.Contains(resp.Unknown, w) {
				resp.Unknown = append(resp.Unknown, w)
			}
			continue
		}
		q.seq = append(q.seq, len(q.keys))
		q.ids = append(q.ids, id)
		q.keys = append(q.keys, w)
		q.count = append(q.count, 1)
	}
	if len(q.ids) == 0 || len(resp.Unknown) > 0 {
		return resp, nil
	}
	// Word weights: rare words count more (ln(1 + N/df) over the full
	// barrels), so words on every page (a site's name) do not decide.
	q.idf = make([]float64, len(q.ids))
	for i, id := range q.ids {
		df, err := idx.docFreq(id)
		if err != nil {
			return nil, err
		}
		q.idf[i] = math.Log(1 + float64(max(1, idx.m.Fetched))/float64(max(1, df)))
	}
	var top []scored
	var err error
	for _, short := range []bool{true, false} {
		top, resp.Matches, resp.Stopped, err = idx.scan(q, short, opt)
		if err != nil {
			return nil, err
		}
		resp.Barrels = map[bool]string{true: "short", false: "full"}[short]
		if resp.Matches >= opt.N {
			break
		}
	}
	if err := idx.tableErr(); err != nil { // a rank or entry the scores read
		return nil, err
	}
	for _, s := range top {
		r := Result{Doc: s.doc, Score: s.score}
		if r.URL, r.Title, err = idx.Info(s.doc); err != nil {
			return nil, err
		}
		if opt.Explain {
			lists, err := idx.docLists(q.ids, s.doc, resp.Barrels == "short")
			if err != nil {
				return nil, err
			}
			ex := &Explain{Barrels: resp.Barrels}
			idx.score(s.sg, s.doc, lists, q, opt.Weights, ex, true)
			r.Explain = ex
		}
		if !opt.NoSnippets {
			if r.Snippet, err = idx.Snippet(s.doc, q.keys); err != nil {
				return nil, err
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}

// queryTerms analyses a query as the indexer analysed the pages. Stop
// words are dropped unless the query has nothing else.
func queryTerms(an *analysis.Analyzer, query string) []string {
	var all, content []string
	an.Tokens([]byte(query), func(t analysis.Token) {
		all = append(all, string(t.Term))
		if !t.Stop {
			content = append(content, string(t.Term))
		}
	})
	if len(content) == 0 {
		return all
	}
	return content
}

// tableErr returns the first damage found in the tables read by scoring.
func (idx *Index) tableErr() error {
	tabs := []*table{idx.ranks}
	for _, s := range idx.segs {
		tabs = append(tabs, s.dt)
	}
	for _, t := range tabs {
		if t == nil {
			continue
		}
		t.mu.Lock()
		err := t.err
		t.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// docFreq is the number of live documents holding word id, over all
// segments: the global statistic that keeps scores comparable across
// segments. It is kept exact by the builds (see docFreqs).
func (idx *Index) docFreq(id uint32) (int, error) {
	n, err := dfOf(idx.df, id)
	return int(n), err
}

// countLive counts the live postings of word id over the segments, by
// subtracting each segment's deleted documents found in its list (Verify
// checks the kept frequencies against it).
func (idx *Index) countLive(id uint32) (uint32, error) {
	df := uint32(0)
	for _, sg := range idx.segs {
		list, n, err := sg.list(id, false)
		if err != nil {
			return 0, err
		}
		live, err := sg.liveCount(list, n)
		if err != nil {
			return 0, err
		}
		df += live
	}
	return df, nil
}

// scan intersects the doclists of ids and keeps the best opt.N.
// parsedQuery is a query's distinct known words, their weights, and the
// sequence of the query's words as indexes into them.
type parsedQuery struct {
	keys  []string
	ids   []uint32
	idf   []float64
	count []int // occurrences in the query
	seq   []int

	cw    [64]float64 // countWeight of small counts, for the query's cap
	cwCap float64
}

// countWeight is countWeight with a table of the small counts.
func (q *parsedQuery) countWeight(c int, cap float64) float64 {
	if cap != q.cwCap {
		q.cwCap = cap
		for i := range q.cw {
			q.cw[i] = countWeight(i, cap)
		}
	}
	if c < len(q.cw) {
		return q.cw[c]
	}
	return countWeight(c, cap)
}

// segCursor walks one segment's matches of a query in docID order: the
// documents holding every word (rarest list first, seeking the others with
// their skip tables) that the segment does not mark deleted.
type segCursor struct {
	sg    *segment
	cs    []cursor
	order []int
	lists [][]byte
	doc   uint32 // the current match
	ok    bool
}

// newSegCursor opens the query's lists in sg and moves to the first match.
func newSegCursor(sg *segment, ids []uint32, short bool) (*segCursor, error) {
	c := &segCursor{sg: sg, cs: make([]cursor, len(ids)), order: make([]int, len(ids)), lists: make([][]byte, len(ids))}
	ns := make([]uint32, len(ids))
	for i, id := range ids {
		data, n, err := sg.list(id, short)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return c, nil
		}
		c.cs[i].it = newPostingIter(data)
		c.cs[i].ok = c.cs[i].it.next()
		if c.cs[i].it.err != nil {
			return nil, c.cs[i].it.err
		}
		ns[i], c.order[i] = n, i
	}
	slices.SortFunc(c.order, func(a, b int) int { return cmpU32(ns[a], ns[b]) })
	return c, c.find()
}

// find moves to the first match at or after the lead list's position.
func (c *segCursor) find() error {
	lead := &c.cs[c.order[0]]
	c.ok = false
	for lead.ok {
		target := lead.it.doc
		all := true
		for _, i := range c.order[1:] {
			x := &c.cs[i]
			if x.ok && x.it.doc < target {
				x.ok = x.it.seek(target)
			}
			if !x.ok {
				all = false
				lead.ok = false
				break
			}
			if x.it.doc > target {
				all = false
				if lead.it.doc < x.it.doc {
					lead.ok = lead.it.seek(x.it.doc)
				}
				break
			}
		}
		if !all {
			continue
		}
		if c.sg.del.has(target) { // superseded by a later segment
			lead.ok = lead.it.next()
			continue
		}
		for i := range c.cs {
			c.lists[i] = c.cs[i].it.hits
		}
		c.doc, c.ok = target, true
		break
	}
	for i := range c.cs {
		if c.cs[i].it.err != nil {
			return c.cs[i].it.err
		}
	}
	return nil
}

// advance moves past the current match.
func (c *segCursor) advance() error {
	lead := &c.cs[c.order[0]]
	lead.ok = lead.it.next()
	return c.find()
}

// scan runs the query over every segment as over one index: the segments'
// matches are merged in docID order (a document's postings are all in one
// segment, so each live document is met once), scored with global
// statistics, and the scan stops after opt.MaxMatches matches, at the
// docID where one index holding the same documents would stop. The work
// is that of one index, plus the deleted postings the lists still hold.
func (idx *Index) scan(q *parsedQuery, short bool, opt SearchOptions) ([]scored, int, bool, error) {
	rerank := len(q.seq) > 1
	depth := opt.N
	if rerank {
		depth = max(RerankDepth, 10*opt.N)
	}
	var h []*segCursor // a min-heap by current docID
	for _, sg := range idx.segs {
		c, err := newSegCursor(sg, q.ids, short)
		if err != nil {
			return nil, 0, false, err
		}
		if c.ok {
			h = append(h, c)
		}
	}
	less := func(i, j int) bool { return h[i].doc < h[j].doc }
	down := func(i int) {
		for {
			k := 2*i + 1
			if k >= len(h) {
				return
			}
			if k+1 < len(h) && less(k+1, k) {
				k++
			}
			if !less(k, i) {
				return
			}
			h[i], h[k] = h[k], h[i]
			i = k
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	var top []scored
	matches := 0
	for len(h) > 0 && matches < opt.MaxMatches {
		c := h[0]
		matches++
		s := idx.score(c.sg, c.doc, c.lists, q, opt.Weights, nil, !rerank)
		if n := len(top); n < depth || s > top[n-1].score || s == top[n-1].score && c.doc < top[n-1].doc {
			top = keepTop(top, scored{c.doc, s, slices.Clone(c.lists), c.sg}, depth)
		}
		if err := c.advance(); err != nil {
			return nil, 0, false, err
		}
		if !c.ok {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	if rerank {
		for i := range top {
			top[i].score = idx.score(top[i].sg, top[i].doc, top[i].lists, q, opt.Weights, nil, true)
		}
		slices.SortFunc(top, func(a, b scored) int {
			switch {
			case a.score > b.score:
				return -1
			case a.score < b.score:
				return 1
			}
			return cmpU32(a.doc, b.doc)
		})
	}
	return top[:min(len(top), opt.N)], matches, matches >= opt.MaxMatches, nil
}

// keepTop inserts s into top (best first, ties by docID) keeping n.
func keepTop(top []scored, s scored, n int) []scored {
	better := func(a, b scored) bool { return a.score > b.score || a.score == b.score && a.doc < b.doc }
	if len(top) == n && !better(s, top[n-1]) {
		return top
	}
	i := len(top)
	for i > 0 && better(s, top[i-1]) {
		i--
	}
	if len(top) < n {
		top = append(top, scored{})
	}
	copy(top[i+1:], top[i:len(top)-1])
	top[i] = s
	return top
}

// docLists returns the hit lists of doc for each word, from the segment
// where doc is live.
func (idx *Index) docLists(ids []uint32, doc uint32, short bool) ([][]byte, error) {
	out := make([][]byte, len(ids))
	for _, sg := range idx.segs {
		if sg.del.has(doc) {
			continue
		}
		for i, id := range ids {
			data, _, err := sg.list(id, short)
			if err != nil {
				return nil, err
			}
			it := newPostingIter(data)
			if it.seek(doc) && it.doc == doc {
				out[i] = it.hits
			}
			if it.err != nil {
				return nil, it.err
			}
		}
	}
	return out, nil
}

const proxHits = 64 // plain hits, and fancy hits, per word looked at for proximity

// proxKeys appends class<<16|hit for the first proxHits plain and fancy hits
// of an encoded list, sorted by class then position.
func proxKeys(out []uint32, l []byte) []uint32 {
	plain, fancy := 0, 0
	for j := range len(l) / 2 {
		h := hit.At(l, j)
		if h.IsFancy() {
			if fancy == proxHits {
				continue
			}
			fancy++
		} else {
			if plain == proxHits {
				continue
			}
			plain++
		}
		out = append(out, uint32(h.Class())<<16|uint32(h))
		if plain == proxHits && fancy == proxHits {
			break
		}
	}
	slices.SortFunc(out, func(x, y uint32) int {
		if x>>16 != y>>16 {
			return cmpU32(x>>16, y>>16)
		}
		return hit.Hit(x&0xffff).Pos() - hit.Hit(y&0xffff).Pos()
	})
	return out
}

// score is the ranking function of section 4.5.1: for each word the hits
// are counted by type, counts become tapering count-weights, and their dot
// product with the type-weights is the IR score; for several words, pairs of
// neighbouring query words are also counted by type and proximity bin and
// dotted with the type-prox-weights. The IR score is combined with PageRank.
func (idx *Index) score(sg *segment, doc uint32, lists [][]byte, q *parsedQuery, w *Weights, ex *Explain, withProx bool) float64 {
	keys, idf := q.keys, q.idf
	var titleBuf [16]int
	var titleHits []int
	if len(lists) > len(titleBuf) {
		titleHits = make([]int, len(lists))
	} else {
		titleHits = titleBuf[:len(lists)]
	}
	var counts [numTypes]int
	ir1 := 0.0
	if ex != nil {
		ex.Counts = map[string]map[string]int{}
	}
	for i, l := range lists {
		counts = [numTypes]int{}
		part := 0.0
		for j := range len(l) / 2 {
			counts[typeOf(hit.At(l, j))]++
		}
		for t, c := range counts {
			if c > 0 {
				part += w.Type[t] * q.countWeight(c, w.CountCap)
			}
			if ex != nil && c > 0 {
				if ex.Counts[keys[i]] == nil {
					ex.Counts[keys[i]] = map[string]int{}
				}
				ex.Counts[keys[i]][TypeNames[t]] = c
			}
		}
		ir1 += part * idf[i]
		titleHits[i] = counts[TypeTitle]
	}
	ir2 := 0.0
	if len(q.seq) > 1 && withProx {
		var prox [numTypes][10]float64
		for s := 0; s+1 < len(q.seq); s++ {
			i, k := q.seq[s], q.seq[s+1]
			if i == k {
				continue
			}
			pairW := (idf[i] + idf[k]) / 2
			a, b := lists[i], lists[k]
			var keyBuf [2 * proxHits]uint32
			keys := proxKeys(keyBuf[:0], b)
			var aBuf [2 * proxHits]uint32
			for _, ka := range proxKeys(aBuf[:0], a) {
				ha := hit.Hit(ka & 0xffff)
				class, pos := ka>>16, ha.Pos()
				// The nearest hit of the next word in the same class to pos+1.
				want := class<<16 | uint32(min(pos+1, 0xffff))
				j, _ := slices.BinarySearchFunc(keys, want, func(k, w uint32) int { return cmpU32(k>>16<<16|uint32(hit.Hit(k&0xffff).Pos()), w) })
				best := 1 << 20
				for _, c := range []int{j - 1, j} {
					if c >= 0 && c < len(keys) && keys[c]>>16 == class {
						d := hit.Hit(keys[c]&0xffff).Pos() - pos
						if abs(d-1) < abs(best-1) {
							best = d
						}
					}
				}
				prox[typeOf(ha)][proxBin(best)] += pairW
			}
		}
		for t := range prox {
			for bin, c := range prox[t] {
				ir2 += w.Type[t] * w.Prox[bin] * countWeightF(c, w.CountCap)
			}
			if ex != nil && prox[t] != [10]float64{} {
				if ex.Prox == nil {
					ex.Prox = map[string][10]float64{}
				}
				ex.Prox[TypeNames[t]] = prox[t]
			}
		}
		ir2 *= w.ProxScale
	}
	// Title match: the idf-weighted share of query words in the title
	// times the share of title words (with repeats) the query holds.
	inTitle, qw, tw := 0, 0.0, 0.0
	for i := range lists {
		qw += idf[i]
		if n := titleHits[i]; n > 0 {
			tw += idf[i]
			inTitle += min(n, q.count[i])
		}
	}
	tm := 0.0
	if inTitle > 0 && qw > 0 {
		e, _, _ := sg.entry(doc) // damage is reported by tableErr
		words := max(int(e.TitleWords), inTitle)
		tm = w.TitleMatch * tw / qw * float64(inTitle) / float64(words)
	}
	// PageRank scaled so that the mean page has 1.
	rank, _ := idx.rank(doc)
	rankPart := w.Rank * float64(float32(math.Log2(1+float64(rank)*float64(idx.m.Docs))))
	if ex != nil {
		ex.IRSingle, ex.IRProx, ex.TitleMatch, ex.IR = ir1, ir2, tm, ir1+ir2+tm
		ex.Rank, ex.RankPart = float64(rank), rankPart
	}
	return ir1 + ir2 + tm + rankPart
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// SnippetWords is the length of a snippet in words.
const SnippetWords = 30

// Snippet returns a passage of doc's text around the query words, with the
// words marked <b>like this</b>.
func (idx *Index) Snippet(doc uint32, keys []string) (string, error) {
	u, body, err := idx.Page(doc)
	if err == ErrNotFetched {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	d := htmldoc.Doc{Analyzer: idx.analyzers.Get().(*analysis.Analyzer)}
	defer idx.analyzers.Put(d.Analyzer)
	base, _ := url.Parse(u)
	d.Parse(body, base)
	if len(d.Words) == 0 {
		return "", nil
	}
	want := func(i int) bool {
		w := &d.Words[i]
		return slices.Contains(keys, string(d.Key(w))) || d.Whole(w) != nil && slices.Contains(keys, string(d.Whole(w)))
	}
	// The window of SnippetWords words with the most distinct query words.
	bestStart, bestN := 0, -1
	for i := range d.Words {
		if !want(i) {
			continue
		}
		start := max(0, i-4)
		seen := map[string]bool{}
		for j := start; j < min(len(d.Words), start+SnippetWords); j++ {
			if want(j) {
				seen[string(d.Key(&d.Words[j]))] = true
			}
		}
		if len(seen) > bestN {
			bestStart, bestN = start, len(seen)
		}
		if bestN == len(keys) {
			break
		}
	}
	end := min(len(d.Words), bestStart+SnippetWords)
	var sb bytes.Buffer
	if bestStart > 0 {
		sb.WriteString("... ")
	}
	prev := d.Words[bestStart].Start
	for j := bestStart; j < end; j++ {
		w := &d.Words[j]
		sb.Write(collapseSpace(d.Text[prev:w.Start]))
		if want(j) {
			sb.WriteString("<b>")
			sb.Write(d.Text[w.Start:w.End])
			sb.WriteString("</b>")
		} else {
			sb.Write(d.Text[w.Start:w.End])
		}
		prev = w.End
	}
	if end < len(d.Words) {
		sb.WriteString(" ...")
	}
	return strings.ToValidUTF8(sb.String(), ""), nil
}

func collapseSpace(b []byte) []byte {
	f := bytes.Fields(b)
	if len(f) == 0 {
		if len(b) > 0 {
			return []byte(" ")
		}
		return nil
	}
	out := bytes.Join(f, []byte(" "))
	if isSpace(b[0]) {
		out = append([]byte(" "), out...)
	}
	if isSpace(b[len(b)-1]) {
		out = append(out, ' ')
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }
