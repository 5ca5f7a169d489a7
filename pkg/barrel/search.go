package barrel

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"github.com/sekitei/crawlkit/pkg/barrel/hit"
)

// Hit types for weighting: plain hits by relative font size 0-6, then the
// fancy types. The paper's "type-weights" are indexed by these.
const (
	TypeURL    = 7
	TypeTitle  = 8
	TypeAnchor = 9
	TypeMeta   = 10
	TypeDef    = 11
	TypeEmph   = 12 // a word set off in running text (<em>, <i>, <dfn>, <strong>, <b>)
	numTypes   = 13
)

// TypeNames names the weight types, for --explain.
var TypeNames = [numTypes]string{"small", "plain", "bold", "h4", "h3", "h2", "h1", "url", "title", "anchor", "meta", "definition", "emphasis"}

// Weights are the ranking parameters: the paper's type-weights and
// proximity weights (section 4.5.1), with the hits of a word counted as
// BM25F counts a term over fields (each hit weighted by its type, the
// weighted count saturated and normalised by the page's length).
type Weights struct {
	Type [numTypes]float64 // type-weights: what one hit of each type counts
	Prox [10]float64       // proximity bin weights (0 = phrase, 9 = not near)
	// K1 is where a word's weighted hit count saturates, B how much a
	// long page's counts are discounted (BM25's k1 and b).
	K1, B float64
	// ProxScale weighs the proximity of the query's words (all of them:
	// the smallest window of the page's text that holds them).
	ProxScale float64
	// Rank is the prior's weight: the text score is multiplied by
	// 1 + Rank·p, where p = r/(1+r) < 1 for r = log2(1 + PageRank·N). The
	// prior lifts a page by less than Rank times its own text score, so
	// it orders pages of similar evidence but cannot carry a weak match
	// over a strong one.
	Rank float64
	// TitleMatch weighs how exactly the query is the page's title: the
	// share of query words in the title times the share of the title's
	// words in the query (our addition to the paper's weights).
	TitleMatch float64
	// TitleLead weighs the query's words found at the start of the title,
	// in order: what a person recalls of a title is its first words.
	TitleLead float64
	// Def weighs the definition feature: the idf of the query's words
	// when the page defines every one of them (the leading text of a
	// <dt>, as a glossary or an API reference sets off its entries; our
	// addition too).
	Def float64
	// IDFPlus is added to every word's idf: a word on nearly every page
	// still weighs IDFPlus, so the common words of a query ("class
	// object", "built-in method") still tell pages apart, where BM25's
	// idf gives them next to nothing.
	IDFPlus float64
}

// DefaultWeights are the weights barrel ships with (docs/barrel.md).
var DefaultWeights = Weights{
	// small, plain, bold, h4, h3, h2, h1, URL, title, anchor, meta, definition, emphasis
	Type:       [numTypes]float64{0.05, 0.1, 2, 2.5, 3, 3.5, 4, 1.5, 2, 1, 1, 0, 0},
	Prox:       [10]float64{1, 0.7, 0.5, 0.4, 0.3, 0.22, 0.16, 0.1, 0.05, 0},
	K1:         3,
	B:          0.25,
	ProxScale:  0.25,
	Rank:       0.25,
	TitleMatch: 5,
	TitleLead:  1,
	Def:        1.5,
	IDFPlus:    0.3,
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
	case hit.Def:
		return TypeDef
	case hit.Emph:
		return TypeEmph
	default:
		return TypeMeta
	}
}

// typeByHigh is typeOf by a hit's high byte.
var typeByHigh = func() (t [256]uint8) {
	for b := range t {
		t[b] = uint8(typeOf(hit.Hit(b) << 8))
	}
	return t
}()

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
	Offset     int      // results to skip: N results from the Offset-th on
	Model      *Model   // a learnt ranking; default the one Weights amount to
	Literal    bool     // the query's words only: quotes, -, site: and OR are plain text
	Features   bool     // fill each result's Matched, Prior and Features
}

// Result is one ranked hit.
type Result struct {
	Doc     uint32
	URL     string
	Title   string
	Score   float64
	Snippet string
	Explain *Explain
	// With SearchOptions.Features: the coordination tier (the share of
	// the query's idf the page holds, as the search orders by it), the
	// prior p and the features of the result, for training a Model.
	Matched  int
	Prior    float64
	Features [NumFeatures]float64
}

// Explain is the score of one result in parts, as the paper's debug mode
// showed them.
type Explain struct {
	Barrels    string                    `json:"barrels"`
	Matched    int                       `json:"matched"`             // query words the page holds (coordination)
	Of         int                       `json:"of"`                  // query words that count
	Counts     map[string]map[string]int `json:"counts"`              // word -> type -> hits
	Window     int                       `json:"window,omitempty"`    // smallest span of text holding the matched words
	IRSingle   float64                   `json:"ir_single"`           // the words' saturated, length-normalised weighted counts
	IRProx     float64                   `json:"ir_proximity"`        // proximity of the words
	Prox       map[string][10]float64    `json:"proximity,omitempty"` // unused; kept for readers of older output
	TitleMatch float64                   `json:"title_match"`
	TitleLead  float64                   `json:"title_lead"`
	// DefinedApart says the page defines every query word, but in
	// different entries (no one defined name holds them all): the
	// definition feature is then 0.
	DefinedApart bool               `json:"defined_apart,omitempty"`
	IR           float64            `json:"ir"`        // the text score: the parts above with the model's other features
	Rank         float64            `json:"pagerank"`  // the page's PageRank
	Prior        float64            `json:"prior"`     // p = r/(1+r), r = log2(1 + PageRank·N)
	RankPart     float64            `json:"rank_part"` // what the prior adds: ir · weight · p
	Features     map[string]float64 `json:"features"`  // the model's inputs
	feats        [NumFeatures]float64
}

// Response is the answer to a query.
type Response struct {
	Results []Result
	Matches int      // documents holding at least one of the query's words
	Barrels string   // "full": every page's text is searched
	Stopped bool     // the scan stopped at MaxMatches
	Unknown []string // query words no page holds, as the query wrote them
}

type cursor struct {
	it   postingIter
	ok   bool
	list []byte // the whole list (a full list's) and its postings
	n    uint32
	// A list of a segment mostly deleted, cached: its live documents
	// (liveDocs), and the place in them of the next one after it.
	live   []uint32
	at     int
	cached bool
}

type scored struct {
	doc     uint32
	matched int // coordination: the tier of the query's words the page holds (coordTier)
	score   float64
	lists   [][]byte // hit lists, kept for re-scoring
	sg      *segment // where doc is live
	parts   parts    // the first stage's features, which re-scoring adds proximity to
}

// parts are the features of the hand weights' model but proximity, and
// the prior: what re-scoring with proximity keeps of the first stage.
type parts struct {
	ir1, tm, lead, p float64
	def              float64 // the definition feature
	ok               bool
}

// RerankDepth is how many matches, ranked without proximity, get the full
// score with proximity: proximity is the costly part of the score, and it
// only reorders close candidates. It does not depend on the results wanted
// (below it), so the first results are the same whatever --n.
const RerankDepth = 200

// Search evaluates query over the full barrels: every page holding one of
// the query's words is a match (stop words count only with other words,
// or when the query has nothing else), scored by all its hits; pages
// holding more of the words, weighed by idf, rank first (coordination, see
// coord.go), then by score; the scan
// stops after MaxMatches documents; the best N after Offset are returned.
// The query may use the syntax of QuerySyntaxHelp (unless opt.Literal);
// a malformed query is a *QueryError.
func (idx *Index) Search(query string, opt SearchOptions) (*Response, error) {
	if opt.N <= 0 {
		opt.N = 10
	}
	if opt.Offset < 0 {
		opt.Offset = 0
	}
	if opt.Weights == nil {
		opt.Weights = &DefaultWeights
	}
	if opt.Model == nil {
		m := HandModel(opt.Weights)
		opt.Model = &m
	}
	if opt.MaxMatches <= 0 {
		opt.MaxMatches = MaxMatches
	}
	syn := &syntax{text: query}
	if !opt.Literal {
		var err error
		if syn, err = parseSyntax(query); err != nil {
			return nil, err
		}
	}
	idx.searches.Add(1)
	resp := &Response{Barrels: "full"}
	q := &parsedQuery{sites: syn.sites}
	an := idx.analyzers.Get().(*analysis.Analyzer)
	terms := queryTerms(an, syn.text)
	spelledOut(terms)
	q.grow(len(terms))
	// The terms of each OR group count once for coordination.
	orOf := map[string]int{}
	for g, alts := range syn.or {
		for _, a := range alts {
			for _, t := range queryTerms(an, a) {
				orOf[t.term] = g
			}
		}
	}
	var phrases, minus [][]string
	for _, p := range syn.phrases {
		phrases = append(phrases, phraseTerms(queryTerms(an, p)))
	}
	for _, m := range syn.minus {
		minus = append(minus, phraseTerms(queryTerms(an, m)))
	}
	idx.analyzers.Put(an)
	onlyStop := !slices.ContainsFunc(terms, func(t queryTerm) bool { return !t.stop })
	type unit struct {
		term string // a term, or with or, an OR group
		or   bool
		g    int
	}
	var labels []unit // coordination units
	label := func(term string) int {
		l := unit{term: term}
		if g, ok := orOf[term]; ok {
			l = unit{or: true, g: g}
		}
		if i := slices.Index(labels, l); i >= 0 {
			return i
		}
		labels = append(labels, l)
		return len(labels) - 1
	}
	counted := map[int]bool{}
	notPart := map[int]bool{}
	for _, t := range terms {
		w := t.term
		if !t.part {
			notPart[label(w)] = true
		}
		if i := slices.Index(q.keys, w); i >= 0 {
			if !t.whole {
				q.seq = append(q.seq, i)
			}
			q.count[i]++
			q.capital[i] = q.capital[i] || startsUpper(t.word)
			continue
		}
		id, ok, err := idx.lookupWord(w)
		if err != nil {
			return nil, err
		}
		if !ok {
			if !slices.Contains(resp.Unknown, t.word) {
				resp.Unknown = append(resp.Unknown, t.word) // as written: the user's word, not its stem
			}
			if !t.stop || onlyStop {
				counted[label(w)] = true // a word missing from every page still counts
			}
			continue
		}
		if !t.whole {
			q.seq = append(q.seq, len(q.keys))
		}
		k := q.addKey(w, id, !t.stop || onlyStop, label(w))
		q.capital[k] = startsUpper(t.word)
		if !t.stop || onlyStop {
			counted[label(w)] = true
		}
	}
	q.of = len(counted)
	for u := range counted {
		if notPart[u] {
			q.defNeed |= 1 << (u & 63)
		}
	}
	if bits.OnesCount64(q.defNeed) == 1 {
		// A name: defined by the page that defines it as written. A query
		// of several words is defined only by one entry holding them
		// all, in a row (oneEntry), which stemming does not mislead: the
		// entry "iterator object" defines "iterator objects".
		if err := idx.addForms(q, terms); err != nil {
			return nil, err
		}
	}
	q.fields = opt.Model.fields()
	q.or = len(syn.or) > 0
	for _, p := range phrases {
		ks, ok, err := idx.phraseKeys(q, p)
		if err != nil {
			return nil, err
		}
		if !ok {
			return resp, nil // a phrase word in no page: no page holds the phrase
		}
		q.phrases = append(q.phrases, ks)
	}
	for _, m := range minus {
		ks, ok, err := idx.phraseKeys(q, m)
		if err != nil {
			return nil, err
		}
		if ok && len(ks) > 0 {
			for _, k := range ks {
				q.neg[k] = q.neg[k] || !slices.Contains(q.seq, k)
			}
			q.minus = append(q.minus, ks)
		}
	}
	if !slices.Contains(q.driver, true) {
		return resp, nil
	}
	// Word weights: BM25's idf over the live documents, plus IDFPlus.
	n := float64(max(1, idx.m.Fetched))
	q.idf = make([]float64, len(q.ids))
	minDF := math.MaxInt // the fewest live pages a driving word is on
	for i, id := range q.ids {
		df, err := idx.docFreq(id)
		if err != nil {
			return nil, err
		}
		if q.driver[i] {
			minDF = min(minDF, df)
			q.driveDF = df
		}
		d := float64(min(max(1, df), int(n)))
		q.idf[i] = math.Log(1+(n-d+0.5)/(d+0.5)) + opt.Weights.IDFPlus
	}
	q.setCoord(counted, n)
	q.avgLen = idx.avgWords()
	want := opt.N
	opt.N += opt.Offset
	// Pages holding every word rank before the others (coordination), and
	// re-ranking with proximity keeps that order: when more than the
	// results wanted of them exist, the results are among them, and walking only
	// them (an intersection, with skips) gives the same answer as walking
	// every page holding one of the words. With OR, a page holding one word
	// of each group ranks with them: no shortcut. No more pages hold every
	// word than hold its rarest: when those are not more than wanted, the
	// intersection would be walked in vain.
	var top []scored
	var matches int
	var stopped, done bool
	var err error
	few := rareFirst && minDF <= opt.N && minDF < opt.MaxMatches
	if drivers := countTrue(q.driver); intersectFirst && !few && !q.or && drivers > 1 && drivers == q.of {
		top, matches, stopped, err = idx.scan(q, opt, true)
		if err != nil {
			return nil, err
		}
		done = stopped || matches > opt.N // more than wanted: Matches tells a next page exists
	}
	if !done {
		if top, matches, stopped, err = idx.scan(q, opt, false); err != nil {
			return nil, err
		}
	}
	resp.Matches, resp.Stopped = matches, stopped
	if err := idx.tableErr(); err != nil { // a rank or entry the scores read
		return nil, err
	}
	top = top[min(opt.Offset, len(top)):]
	top = top[:min(want, len(top))]
	if len(top) > 0 {
		resp.Results = make([]Result, 0, len(top))
	}
	for _, s := range top {
		r := Result{Doc: s.doc, Score: s.score}
		e, err := idx.docIn(s.sg, s.doc)
		if err != nil {
			return nil, err
		}
		info, err := readDocInfoAt(idx.info, int64(e.InfoOff), idx.m.DocInfo, idx.m.TextFrom)
		if err != nil {
			return nil, err
		}
		r.URL, r.Title = info.url, info.title
		if opt.Explain || opt.Features {
			ex := &Explain{Barrels: resp.Barrels}
			_, tier := idx.score(s.sg, s.doc, s.lists, q, opt.Weights, opt.Model, ex, true, nil)
			if opt.Explain {
				r.Explain = ex
			}
			r.Matched, r.Prior, r.Features = tier, ex.Prior, ex.feats
		}
		if !opt.NoSnippets {
			if e.Flags&FlagNoSnippet == 0 { // the page said nosnippet
				if r.Snippet, err = idx.snippet(s.doc, q.keys, s.lists, info.textRef); err != nil {
					return nil, err
				}
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}

// docIn is the entry of doc, live in segment sg: the entry idx.doc finds
// walking the segments from the newest, read from the one that holds it.
func (idx *Index) docIn(sg *segment, doc uint32) (DocEntry, error) {
	e, ok, err := sg.entry(doc)
	if err != nil {
		return e, err
	}
	if !ok {
		e, ok, err = idx.doc(doc)
		if err == nil && !ok {
			err = fmt.Errorf("no document %d", doc)
		}
		return e, err
	}
	e.Rank, err = idx.rank(doc)
	return e, err
}

// startsUpper reports whether a query word begins with a capital letter:
// the capitalisation bit of the hits then tells the pages that write it
// so (a class name, a constant) from those that use the common word.
func startsUpper(w string) bool {
	for _, r := range w {
		return unicode.IsUpper(r)
	}
	return false
}

// grow makes room for n keys.
func (q *parsedQuery) grow(n int) {
	q.ids = make([]uint32, 0, n)
	q.keys = make([]string, 0, n)
	q.count = make([]int, 0, n)
	q.group = make([]int, 0, n)
	bs := make([]bool, 3*n)
	q.driver, q.neg, q.capital = bs[:0:n], bs[n:n:2*n], bs[2*n:2*n:3*n]
}

// addForms adds, for each plain word of the query (of terms), the list
// of its exact form (analysis.DefForm), read for the definition feature
// only: a page defines the word if it defines the word as written, not
// another that stems alike. A form no page defines leaves the word
// defined nowhere.
func (idx *Index) addForms(q *parsedQuery, terms []queryTerm) error {
	q.form = make([]int, len(q.keys))
	for i := range q.form {
		q.form[i] = noForm
	}
	an := idx.analyzers.Get().(*analysis.Analyzer)
	defer idx.analyzers.Put(an)
	for _, t := range terms {
		if t.whole || t.part {
			continue // an identifier's whole is its form; its parts are not defined
		}
		k := slices.Index(q.keys[:len(q.form)], t.term)
		if k < 0 || q.neg[k] || q.form[k] != noForm {
			continue // unknown, or its form added
		}
		form, ok := an.DefForm([]byte(t.word))
		if !ok {
			continue // its term is its form
		}
		id, ok, err := idx.lookupWord(form)
		if err != nil {
			return err
		}
		q.form[k] = undefined
		if ok {
			j := q.addKey(form, id, false, q.group[k])
			q.neg[j] = true // read, and scored only as k's definitions
			q.form[k] = j
		}
	}
	return nil
}

// Values of parsedQuery.form besides a list.
const (
	noForm    = -1 // the word's own list holds its definitions
	undefined = -2 // no page defines the word as written
)

// addKey adds a known term to the query's lists.
func (q *parsedQuery) addKey(term string, id uint32, driver bool, group int) int {
	q.ids = append(q.ids, id)
	q.keys = append(q.keys, term)
	q.count = append(q.count, 1)
	q.driver = append(q.driver, driver)
	q.neg = append(q.neg, false)
	q.capital = append(q.capital, false)
	q.group = append(q.group, group)
	return len(q.keys) - 1
}

// phraseTerms is the sequence of terms a phrase must hold word after
// word (identifier wholes sit at their first part's position: left out).
func phraseTerms(ts []queryTerm) []string {
	var out []string
	for _, t := range ts {
		if !t.whole {
			out = append(out, t.term)
		}
	}
	return out
}

// phraseKeys maps a phrase's terms to the query's lists, adding the terms
// the words did not bring as lists that neither drive nor score; ok is
// false when a term is in no page.
func (idx *Index) phraseKeys(q *parsedQuery, terms []string) ([]int, bool, error) {
	var ks []int
	for _, t := range terms {
		i := slices.Index(q.keys, t)
		if i < 0 {
			id, ok, err := idx.lookupWord(t)
			if err != nil || !ok {
				return nil, false, err
			}
			i = q.addKey(t, id, false, -1)
			q.neg[i] = true // read for the filter only
		}
		ks = append(ks, i)
	}
	return ks, true, nil
}

// keep reports whether the current match passes the query's filters: it
// holds every phrase, no excluded word or phrase, and is on a site: host.
func (idx *Index) keep(doc uint32, lists [][]byte, q *parsedQuery) bool {
	for _, p := range q.phrases {
		if !hasPhrase(lists, p) {
			return false
		}
	}
	for _, p := range q.minus {
		if hasPhrase(lists, p) {
			return false
		}
	}
	if len(q.sites) > 0 {
		info, err := idx.docInfo(doc)
		if err != nil || !onSite(info.url, q.sites) {
			return false
		}
	}
	return true
}

// hasPhrase reports whether the lists hold the words ks at consecutive
// positions of one kind of text (the body, the title, the URL, one
// page's anchors). Body positions past 4,095 are all stored as 4,095, so
// words there match as if adjacent.
func hasPhrase(lists [][]byte, ks []int) bool {
	first := lists[ks[0]]
	if len(first) == 0 {
		return false
	}
	if len(ks) == 1 {
		return true
	}
	for j := range len(first) / 2 {
		h := hit.At(first, j)
		if h.Type() == hit.Emph {
			continue // the body's plain hits hold the same words, by their full positions
		}
		ok := true
		for k, w := range ks[1:] {
			if !hasHitAt(lists[w], h.Class(), h.Pos()+k+1) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func hasHitAt(l []byte, class, pos int) bool {
	for j := range len(l) / 2 {
		h := hit.At(l, j)
		if h.Class() == class && (h.Pos() == pos || pos > hit.MaxPlainPos && h.Pos() == hit.MaxPlainPos && class == 0) {
			return true
		}
	}
	return false
}

// intersectFirst enables the walk of the pages holding every word first
// (off only in the test that checks it changes nothing).
var intersectFirst = true

// rareFirst enables the union's walk without the intersection first when
// a word is on no more pages than wanted (off only in the test that checks
// it changes nothing).
var rareFirst = true

// skippedLater counts the matches skipped in a segment scanned after
// another (the candidates of the earlier segments let the bounds skip
// them); boundsKept and boundsScored count the candidates kept by their
// bound and those then scored (for the tests).
var skippedLater, boundsKept, boundsScored atomic.Int64

// tierFloor enables the pass over the matches below the coordination
// tier the results need (see floorOf; off only in the tests that check
// it changes nothing); floorSkipped counts them (for the tests).
var (
	tierFloor    = true
	floorSkipped atomic.Int64
)

// segmentOrder enables the scan of the segments one after the other (off
// only in the tests that check it changes nothing).
var segmentOrder = true

// pruning enables the skipping of matches whose score bound cannot enter
// the candidates (off only in the tests that check it changes nothing).
var pruning = true

// segShortcuts enables what spares a scan the segments that hold none
// of the matches it needs (off only in the tests that check it changes
// nothing): a word's lookups in the segments cached (wordLists), a
// segment that lacks a word every match holds passed without a list
// read (andPassed counts them, for the tests), one without a match at
// or above the floor of the coordination tiers without a walk
// (floorPassed), and a segment's short lists opened when a match of it
// is first bounded.
var (
	segShortcuts           = true
	andPassed, floorPassed atomic.Int64
)

func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

// queryTerm is a term of a query.
type queryTerm struct {
	term        string
	word        string // as the query wrote it
	stop, whole bool
	part        bool // a part of the identifier whole before it ("path" of "os.path")
}

// queryTerms analyses a query as the indexer analysed the pages.
func queryTerms(an *analysis.Analyzer, query string) []queryTerm {
	var out []queryTerm
	wholeEnd := -1
	an.Tokens([]byte(query), func(t analysis.Token) {
		part := !t.Whole && t.Start < wholeEnd
		if t.Whole {
			wholeEnd = t.End
		}
		out = append(out, queryTerm{string(t.Term), query[t.Start:t.End], t.Stop, t.Whole, part})
	})
	return out
}

// avgWords is the mean word count of the fetched pages (BM25's average
// length): the manifest's count (PageWords) where it has one, else
// estimated once from the same share of each segment's entries,
// about avgSample in all with the deleted ones, in runs of avgRun
// consecutive ones spread evenly over its table (each weighing the
// entries it stands for; a deleted one, superseded, is passed): opening
// a large index reads neither every entry nor, for each docID sampled, a
// search in every segment (on a year's 36 segments, a third of the CPU
// of one query on an index opened for it), and a run reads one or two of
// the table's blocks, each checked on first read. An index of fewer docIDs than
// twice avgSample is read whole: its mean is exact, however it is
// segmented.
func (idx *Index) avgWords() float64 {
	if pw := idx.m.PageWords; pw != nil {
		if pw.Pages > 0 && pw.Words > 0 {
			return float64(pw.Words) / float64(pw.Pages)
		}
		return 1
	}
	idx.avgOnce.Do(func() {
		// One entry in stride read: all below twice avgSample docIDs.
		stride := max(1, int(idx.m.Docs)/avgSample)
		sum, n := 0.0, 0.0
		for _, s := range idx.segs {
			c := s.dt.count
			if c == 0 {
				continue
			}
			share := (c + stride - 1) / stride
			runs := max(1, (share+avgRun-1)/avgRun)
			read, sumS, nS := 0, 0.0, 0
			for j := range runs {
				from := int(int64(j) * int64(c) / int64(runs))
				to := min(c, from+avgRun, int((int64(j)+1)*int64(c)/int64(runs)))
				for i := from; i < to; i++ {
					r, err := s.dt.rec(i)
					if err != nil {
						break // tableErr reports it
					}
					read++
					if s.del.has(uint32(binary.LittleEndian.Uint64(r))) {
						continue
					}
					if e, err := decodeDocRec(r); err == nil && e.Status == StatusFetched {
						sumS += float64(e.Words)
						nS++
					}
				}
			}
			if read > 0 {
				w := float64(c) / float64(read) // the entries a sample stands for
				sum += w * sumS
				n += w * float64(nS)
			}
		}
		idx.avgLen = 1
		if n > 0 && sum > 0 {
			idx.avgLen = sum / n
		}
	})
	return idx.avgLen
}

// countPageWords counts the live fetched pages and their words from
// every segment's entries.
func (idx *Index) countPageWords() (PageWords, error) {
	var pw PageWords
	if err := idx.eachLive(func(_ uint32, e DocEntry) error {
		pw.add(e, 1)
		return nil
	}); err != nil {
		return PageWords{}, err
	}
	return pw, nil
}

// avgSample is about how many entries avgWords reads, in runs of avgRun
// (variables for the tests, which sample a small index).
var avgSample, avgRun = 4096, 32

// avgState holds the estimate of avgWords and the scoring figures of the
// documents met so far.
type avgState struct {
	avgOnce sync.Once
	avgLen  float64

	searches  atomic.Int64 // begun on the index: docStats caches from the second on
	statsOnce sync.Once
	stats     []atomic.Pointer[statChunk] // by docID / statChunkDocs, allocated when first met

	dfCache slotTable[atomic.Uint64] // docFreq's cache: (wordID+1)<<32 | df, by a hash of the wordID

	lexOnce  sync.Once
	lexSeed  maphash.Seed
	lexCache slotTable[atomic.Pointer[lexEntry]] // lookupWord's cache, by a hash of the word

	wlCache slotTable[atomic.Pointer[wordLists]] // wordLists' cache, by a hash of the wordID
	// denseBytes is the bytes of the lists decoded (denseOf) that
	// wlCache holds.
	denseBytes atomic.Int64

	liveCache slotTable[atomic.Pointer[liveEntry]] // liveDocs' cache, by a hash of the segment and wordID
	liveBytes atomic.Int64                         // the docIDs it holds, in bytes
}

// lexEntry is a word's lookup in the lexicon, cached.
type lexEntry struct {
	word string
	id   uint32
	ok   bool
}

// lookupWord returns the wordID of a query's term. The lexicon is a
// binary search per run and a read of the word (an index that merges
// seldom has many runs), so the lookups are cached by word, found or not:
// an open index does not change (a build's index, whose lexicon takes new
// words, is not cached).
func (idx *Index) lookupWord(w string) (uint32, bool, error) {
	if idx.lex.batch != nil {
		return idx.lex.Lookup([]byte(w))
	}
	idx.lexOnce.Do(func() { idx.lexSeed = maphash.MakeSeed() })
	slot := idx.lexCache.slot(uint32(maphash.String(idx.lexSeed, w))&(1<<lexCacheBits-1), lexCacheBits)
	if e := slot.Load(); e != nil && e.word == w {
		return e.id, e.ok, nil
	}
	id, ok, err := idx.lex.Lookup([]byte(w))
	if err == nil {
		slot.Store(&lexEntry{w, id, ok})
	}
	return id, ok, err
}

// lexCacheBits sizes lookupWord's cache: 1<<lexCacheBits entries, the
// words of the queries met, a word's entry taken over by the next word of
// the slot.
const lexCacheBits = 12

// dfCacheBits sizes docFreq's cache: 1<<dfCacheBits entries (8 bytes
// each), the words of the queries met, a word's entry taken over by the
// next word of the same slot.
const dfCacheBits = 14

// docStat is what scoring reads of a document besides its hits.
type docStat struct {
	words      uint32
	titleWords uint16
	prior      float32 // p = r/(1+r) of r = log2(1 + rank * N), PageRank scaled so the mean page has r = 1
}

// statChunkDocs is the docIDs of a chunk of the docStats cache.
const statChunkDocs = 4096

// statChunk caches the docStats of statChunkDocs consecutive docIDs, each
// in one word written atomically: the prior's bits, the words (statWords
// bits), the title words (statTitleBits) and a set bit. A document whose
// counts do not fit is not cached. Two searches that fill the same entry
// write the same value.
type statChunk [statChunkDocs]atomic.Uint64

const (
	statSet       = 1 << 63
	statWordBits  = 24
	statTitleBits = 7
)

// docStats returns doc's length, title length and prior, from a cache
// indexed by docID (8 bytes a document, in chunks allocated when a search
// first meets one of their documents): a table lookup per match would
// cost more than scoring its hits, and a hash map's lookup nearly as
// much; the matches of a segment are spread over the docIDs, so each is
// mostly a cache line of its own, and the smaller the entry the more of
// them the processor's caches hold. An open index does not change, so
// the cache never goes stale. A miss reads the page's lengths in the
// document statistics table (docstats.go), or for a page of a segment the
// table does not cover (or of an index of format 12) in its entry in its
// segment, and then its rank. Damage is reported by tableErr.
//
// The first search on an index reads the tables without the cache: its
// documents are mostly met once, and an index opened for one query (a
// search command) would allocate, clear and fill the chunks of most
// docIDs in vain: about a twelfth of the command's CPU, with the
// collections the allocations bring on.
func (idx *Index) docStats(sg *segment, doc uint32) docStat {
	if idx.searches.Load() < 2 {
		return idx.readDocStat(sg, doc)
	}
	var c *statChunk
	idx.statsOnce.Do(func() {
		idx.stats = make([]atomic.Pointer[statChunk], int(idx.m.Docs)/statChunkDocs+1)
	})
	if ci := int(doc / statChunkDocs); ci < len(idx.stats) {
		if c = idx.stats[ci].Load(); c == nil {
			idx.stats[ci].CompareAndSwap(nil, new(statChunk))
			c = idx.stats[ci].Load()
		}
		if a := c[doc%statChunkDocs].Load(); a&statSet != 0 {
			return docStat{prior: math.Float32frombits(uint32(a)), words: uint32(a>>32) & (1<<statWordBits - 1),
				titleWords: uint16(a>>(32+statWordBits)) & (1<<statTitleBits - 1)}
		}
	}
	st := idx.readDocStat(sg, doc)
	if c != nil && st.words < 1<<statWordBits && st.titleWords < 1<<statTitleBits {
		c[doc%statChunkDocs].Store(uint64(math.Float32bits(st.prior)) | uint64(st.words)<<32 | uint64(st.titleWords)<<(32+statWordBits) | statSet)
	}
	return st
}

// readDocStat reads doc's docStat in the tables, uncached.
func (idx *Index) readDocStat(sg *segment, doc uint32) docStat {
	var words uint32
	var titleWords uint16
	if idx.coveredBy(sg, doc) {
		if r, err := idx.dstats.rec(int(doc)); err == nil {
			words, titleWords = decodeDocStat(r)
		}
	} else {
		e, _, _ := sg.entry(doc)
		words, titleWords = e.Words, e.TitleWords
	}
	rank, _ := idx.rank(doc)
	return statOf(words, titleWords, rank, idx.m.Docs)
}

// tableErr returns the first damage found in the tables read by scoring.
func (idx *Index) tableErr() error {
	if err := idx.ranks.failed(); err != nil {
		return err
	}
	if err := idx.dstats.failed(); err != nil {
		return err
	}
	for _, s := range idx.segs {
		if err := s.dt.failed(); err != nil {
			return err
		}
	}
	return nil
}

// failed is the damage found in t, if any (nil for no table).
func (t *table) failed() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// docFreq is the number of live documents holding word id, over all
// segments: the global statistic that keeps scores comparable across
// segments. It is kept exact by the builds (see docFreqs).
// A word's frequency is the sum of its changes over the df runs (a
// binary search per run, and an index that merges seldom has many), so
// the frequencies read are cached: an open index does not change.
func (idx *Index) docFreq(id uint32) (int, error) {
	slot := idx.dfCache.slot((id*0x9e3779b1)>>(32-dfCacheBits), dfCacheBits) // a wordID's low bits are its place in its barrel: mixed
	if v := slot.Load(); v>>32 == uint64(id)+1 {
		return int(uint32(v)), nil
	}
	n, err := dfOf(idx.df, id)
	if err == nil && n <= math.MaxUint32 {
		slot.Store((uint64(id)+1)<<32 | uint64(n))
	}
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

// parsedQuery is a query's distinct known words, their weights, and the
// sequence of the query's words (identifier wholes left out) as indexes
// into them.
type parsedQuery struct {
	keys   []string
	ids    []uint32
	idf    []float64
	count  []int  // occurrences in the query
	driver []bool // a match needs one of these (stop words do not drive)
	of     int    // the units coordination counts (words known or not, OR groups)
	// defNeed is the counted units a page must define for the definition
	// feature: all but those that are only an identifier's parts (a page
	// defining RETURN_VALUE defines the query "RETURN_VALUE", not its
	// parts "return" and "value", which the index leaves out of a
	// definition).
	defNeed  uint64
	unitW    [64]float64 // each unit's weight in coordination (by its bit; see coord.go)
	unitSum  float64
	unitDesc []float64 // the units' weights, largest first (needUnits)
	seq      []int
	avgLen   float64

	neg     []bool // lists read only by the filters: they neither drive nor score
	capital []bool // the query wrote the word with a capital letter
	// form is, for each of the query's own lists, the list of its exact
	// form (addForms), which holds its definition hits, or noForm or
	// undefined; lists added after it (forms) have none.
	form    []int
	fields  bool    // the model reads the per-field features
	group   []int   // each list's coordination unit
	or      bool    // some unit is an OR group
	phrases [][]int // lists that must hold these words in a row
	minus   [][]int // lists that must not
	sites   []string
	// driveDF is the live pages holding a driving word (the last one):
	// with one driving word, its matches.
	driveDF int
	// wl is each list's lookups in the segments (wordLists), read by the
	// first scan and kept for a second; dense its lists decoded
	// (denseOf), nil where not.
	wl    []*wordLists
	dense [][]*denseList
}

// filtered reports whether matches must pass keep.
func (q *parsedQuery) filtered() bool {
	return len(q.phrases) > 0 || len(q.minus) > 0 || len(q.sites) > 0
}

// segCursor walks one segment's matches of a query in docID order: the
// documents holding any driving word that the segment does not mark
// deleted, with the hits of every query word they hold.
type segCursor struct {
	sg    *segment
	cs    []cursor
	sc    []cursor // the short lists, read by the pruner's bounds
	tc    []cursor // the short lists again, walked by nextTitled to their title hits
	drive []bool
	neg   []bool
	all   bool // a match holds every driving word
	lists [][]byte
	ord   []int32 // with all: the driving lists, fewest postings first (nextAll)
	doc   uint32  // the current match
	ok    bool
	live  bool       // the segment is mostly deleted: its cached lists jump to their live documents (cursor.live)
	skip  *skipState // with the counted scan: the matches that cannot enter
	tpos  int        // nextTarget's place in skip.targets
	// The segment's deletions: the first search on an index asks a
	// cursor over their list (del), later ones the window dwin of their
	// bits (wins), kept by the open index.
	del  delCursor
	wins bool
	dw   uint32   // the window of docIDs of dwin (math.MaxUint32: none yet)
	dwin *liveWin // the segment's deletions in window dw
	// With short: the short lists are opened (openShort), from q.wl's
	// lookups in the k-th segment of idx.
	shortOpen bool
	k         int
	q         *parsedQuery
	idx       *Index
}

// skipState is what a counted scan (see scan) knows of the matches that
// cannot enter the candidates, shared by its cursors: they jump over
// them with the skip tables instead of walking them.
type skipState struct {
	// last is the last docID the scan reads (the MaxMatches-th match).
	last uint32
	// need is the driving lists a match must hold (the fewest units that
	// can reach the coordination tier of the worst candidate kept, when
	// no unit is an OR group).
	need int
	// titled: the worst candidate scores above the bound of every page
	// without a title hit, so only a match with a title hit and need
	// driving lists, or one with more than need, can enter: the matches
	// are walked in the order of the short lists and of the pivot of
	// need+1 lists (nextTitled).
	titled bool
	// targets are the matches at or above the floor of the coordination
	// tiers, in docID order (see floorOf): while need is not above
	// targetNeed, the cursors walk them alone.
	targets    []uint32
	targetNeed int
}

// newSegCursor opens the query's lists in sg, the k-th segment (with
// short, the short lists too), as q.wl found them, into c; its cs is nil
// when the segment holds no driving word, or with all, not every one:
// then no list is read. The cursors are taken from the start of slab
// (3*len(ids) of them, zeroed here, the short lists' by openShort), the
// lists from lists (len(ids)), with all the order of the driving lists
// from ord (len(ids)). find moves it to the first match.
func (idx *Index) newSegCursor(c *segCursor, sg *segment, k int, q *parsedQuery, all, short bool, skip *skipState, slab []cursor, lists [][]byte, ord []int32) error {
	ids, drive, neg := q.ids, q.driver, q.neg
	*c = segCursor{sg: sg, drive: drive, neg: neg, all: all, skip: skip, live: cachesLive(sg), k: k, q: q, idx: idx, del: newDelCursor(sg.del), wins: idx.searches.Load() >= 2, dw: math.MaxUint32}
	any := false
	for i := range ids {
		if !drive[i] {
			continue
		}
		if q.wl[i].segs[k].nf == 0 {
			if all && segShortcuts {
				andPassed.Add(1)
				return nil // a match holds every driving word
			}
			continue
		}
		any = true
	}
	if !any {
		return nil // no match in the segment
	}
	cs := slab[:3*len(ids)] // the full lists, the short, and the short again
	clear(cs[:len(ids)])    // the short ones when opened (openShort): mostly never
	c.lists = lists[:len(ids):len(ids)]
	var err error
	for i, id := range ids {
		if l := &q.wl[i].segs[k]; l.nf > 0 {
			full, nf := l.full, l.nf
			x := &cs[i]
			x.list, x.n = full, nf
			if x.it, x.ok = l.fullAt.iter(full); !l.fullAt.valid || !segShortcuts {
				x.it = newPostingIter(full)
				if x.ok = x.it.next(); x.it.err != nil {
					return x.it.err
				}
			} else if d := q.dense[i]; d != nil && d[k] != nil {
				x.it.dd = d[k] // at its first posting: the place of its last seek
				denseCursors.Add(1)
				if sg.del != nil {
					denseDeleted.Add(1)
				}
			}
			if c.live && drive[i] {
				if x.live, x.cached, err = idx.liveDocs(sg, id, full, false); err != nil {
					return err
				}
				switch {
				case !x.cached: // walked as in any segment
				case len(x.live) == 0:
					x.ok = false // no live page holds the word
				case x.it.doc < x.live[0]:
					x.ok = x.it.seek(x.live[0])
				}
			}
		}
	}
	c.cs = cs[:len(ids):len(ids)]
	if all {
		// The rarest list proposes, the commoner ones seek only to the
		// documents the rarer ones all hold: most of a common word's
		// seeks are then never made.
		o := ord[:0:len(ids)]
		for i := range ids {
			if drive[i] {
				o = append(o, int32(i))
			}
		}
		slices.SortStableFunc(o, func(a, b int32) int { return cmp.Compare(c.cs[a].n, c.cs[b].n) })
		c.ord = o
	}
	if short {
		c.sc = cs[len(ids) : 2*len(ids) : 2*len(ids)]
		c.tc = cs[2*len(ids) : 3*len(ids) : 3*len(ids)]
		if !segShortcuts {
			c.openShort()
			return c.err()
		}
	}
	return nil
}

// openShort opens the short lists of c, read by the pruner's bounds
// (c.sc) and by nextTitled (c.tc), the first time either reads them:
// where a segment's matches are few, they are mostly never read. Opened
// late, they stand where opening them with the full lists would have
// left them: their walks only seek forward. A list found damaged ends,
// as in a walk: c.err reports it.
func (c *segCursor) openShort() {
	if c.shortOpen || c.sc == nil {
		return
	}
	c.shortOpen = true
	clear(c.sc)
	clear(c.tc)
	ids, k := c.q.ids, c.k
	for i, id := range ids {
		l := &c.q.wl[i].segs[k]
		if l.ns == 0 {
			continue
		}
		x := &c.sc[i]
		if x.it, x.ok = l.shortAt.iter(l.short); !l.shortAt.valid || !segShortcuts {
			x.it = newPostingIter(l.short)
			if x.ok = x.it.next(); x.it.err != nil {
				continue
			}
		}
		t := &c.tc[i]
		*t = *x
		if c.live {
			// nextTitled walks the live postings with a title hit.
			var err error
			if t.live, t.cached, err = c.idx.liveDocs(c.sg, id, l.short, true); err != nil {
				t.it.err, t.ok = err, false
				continue
			}
			switch {
			case !t.cached: // walked as in any segment
			case len(t.live) == 0:
				t.ok = false
			case t.it.doc < t.live[0]:
				t.ok = t.it.seek(t.live[0])
			}
		}
	}
}

// deleted reports whether the segment has deleted doc (find has it
// inlined by hand: delSet.has, not inlined, was a twentieth of a query's
// CPU).
func (c *segCursor) deleted(doc uint32) bool {
	if !c.wins {
		return c.del.deleted(doc)
	}
	if doc>>liveWinShift != c.dw {
		c.delWindow(doc)
	}
	return c.dwin[doc>>6&(liveWinDocs/64-1)]>>(doc&63)&1 != 0
}

func (c *segCursor) delWindow(doc uint32) {
	c.dw, c.dwin = doc>>liveWinShift, c.sg.del.win(doc)
}

// find moves to the first live document at or after the driving lists'
// positions.
func (c *segCursor) find() error {
	c.ok = false
	for {
		doc, any := c.next()
		if !any {
			break
		}
		var gone bool // superseded by a later segment (deleted, inlined)
		if c.wins {
			if doc>>liveWinShift != c.dw {
				c.delWindow(doc)
			}
			gone = c.dwin[doc>>6&(liveWinDocs/64-1)]>>(doc&63)&1 != 0
		} else {
			gone = c.del.deleted(doc)
		}
		if gone {
			if c.live {
				// Each driving list on it jumps to its next live
				// document: a segment mostly deleted holds few.
				for i := range c.cs {
					if x := &c.cs[i]; c.drive[i] && x.ok && x.it.doc == doc {
						if !x.cached {
							x.ok = x.it.seek(c.sg.nextLive(doc + 1))
							continue
						}
						for x.at < len(x.live) && x.live[x.at] <= doc && x.at+1 < len(x.live) && x.live[x.at+1] <= doc {
							x.at++ // mostly near
						}
						j, _ := slices.BinarySearch(x.live[x.at:], doc+1)
						if x.at += j; x.at == len(x.live) {
							x.ok = false
						} else {
							x.ok = x.it.seek(x.live[x.at])
						}
					}
				}
				continue
			}
			// The driving lists pass it: to the next posting, or in a
			// segment mostly deleted (read without the cache) to its
			// next live document (passDeleted).
			if t := c.sg.passDeleted(doc + 1); t == doc+1 {
				c.step(doc)
			} else {
				for i := range c.cs {
					if x := &c.cs[i]; c.drive[i] && x.ok && x.it.doc < t {
						x.ok = x.it.seek(t)
					}
				}
			}
			continue // a list found damaged has ended: c.err reports it below
		}
		for i := range c.cs {
			x := &c.cs[i]
			if !c.drive[i] && x.ok && x.it.doc < doc {
				x.ok = x.it.seek(doc)
			}
			c.lists[i] = nil
			if x.ok && x.it.doc == doc {
				if x.ok = x.it.load(); x.ok { // read, if a seek stood on it unread (seekDoc)
					c.lists[i] = x.it.hits
				}
			}
		}
		c.doc, c.ok = doc, true
		return nil // a list found damaged has ended: the scan reports it when done
	}
	return c.err()
}

// next is the next candidate: the smallest current document of the
// driving lists, or with all, the first document they all hold (seeking
// with the skip tables).
func (c *segCursor) next() (uint32, bool) {
	doc, any := uint32(0), false
	if k := c.skip; k != nil && !c.all {
		switch {
		case k.titled:
			doc, any = c.nextTitled(k.need)
		case k.targets != nil && k.need <= k.targetNeed:
			doc, any = c.nextTarget(k.targets)
		case k.need > 1:
			doc, any = c.nextPivot(k.need)
		default:
			doc, any = c.first()
		}
		return doc, any && doc <= k.last
	}
	if !c.all {
		for i := range c.cs {
			if c.drive[i] && c.cs[i].ok && (!any || c.cs[i].it.doc < doc) {
				doc, any = c.cs[i].it.doc, true
			}
		}
		return doc, any
	}
	return c.nextAll()
}

// nextAll is the first live document all the driving lists hold, at or
// after their positions: a candidate, taken from the rarest list, is
// sought in the lists from the rarest on, and the first that passes it
// gives the next candidate (no list before it holds a document between).
func (c *segCursor) nextAll() (uint32, bool) {
	if len(c.ord) == 0 || !c.cs[c.ord[0]].ok {
		return 0, false
	}
	doc := c.cs[c.ord[0]].it.doc
	for {
		if c.live && c.cs[c.ord[0]].cached {
			// The rarest list's next live document (the segment is
			// mostly deleted).
			x := &c.cs[c.ord[0]]
			j, _ := slices.BinarySearch(x.live[x.at:], doc)
			if x.at += j; x.at == len(x.live) {
				x.ok = false
				return 0, false
			}
			doc = x.live[x.at]
		} else if c.sg.del != nil {
			doc = c.sg.passDeleted(doc) // past a mostly deleted segment's deleted documents
		}
		same := true
		for _, i := range c.ord {
			x := &c.cs[i]
			if !x.ok {
				return 0, false
			}
			if x.it.doc < doc {
				if x.it.dd != nil && segShortcuts {
					x.ok = x.it.seekDoc(doc) // its posting read if it is a match's (find)
				} else {
					x.ok = x.it.seek(doc)
				}
				if !x.ok {
					return 0, false
				}
			}
			if x.it.doc != doc {
				doc, same = x.it.doc, false
				break
			}
		}
		if same {
			return doc, true
		}
	}
}

// first is the smallest current document of the driving lists.
func (c *segCursor) first() (uint32, bool) {
	doc, any := uint32(0), false
	for i := range c.cs {
		if c.drive[i] && c.cs[i].ok && (!any || c.cs[i].it.doc < doc) {
			doc, any = c.cs[i].it.doc, true
		}
	}
	return doc, any
}

// nextTarget is the first document of ts (sorted) a driving list holds,
// at or after the lists' positions: the lists seek from one of ts to the
// next.
func (c *segCursor) nextTarget(ts []uint32) (uint32, bool) {
	for {
		lo, any := c.first()
		if !any {
			return 0, false
		}
		j := c.tpos
		for end := min(len(ts), j+8); j < end && ts[j] < lo; j++ { // mostly near
		}
		if j < len(ts) && ts[j] < lo {
			k, _ := slices.BinarySearch(ts[j:], lo)
			j += k
		}
		if c.tpos = j; j == len(ts) {
			return 0, false
		}
		t := ts[j]
		if t == lo {
			return t, true
		}
		for i := range c.cs {
			if x := &c.cs[i]; c.drive[i] && x.ok && x.it.doc < t {
				x.ok = x.it.seek(t)
			}
		}
	}
}

// driveDocs appends the current document of each driving list that is
// not at its end.
func (c *segCursor) driveDocs(docs []uint32) []uint32 {
	for i := range c.cs {
		if c.drive[i] && c.cs[i].ok {
			docs = append(docs, c.cs[i].it.doc)
		}
	}
	return docs
}

// nextPivot is the first document at least need driving lists hold:
// while the need-th smallest current document (the pivot) is ahead of
// the smallest, the lists behind it seek to it (fewer than need lists
// can hold a document before the pivot), as WAND does with unit weights.
func (c *segCursor) nextPivot(need int) (uint32, bool) {
	var buf [16]uint32
	for {
		docs := c.driveDocs(buf[:0])
		if len(docs) < need {
			return 0, false
		}
		slices.Sort(docs)
		pivot := docs[need-1]
		if docs[0] == pivot {
			return pivot, true
		}
		for i := range c.cs {
			if x := &c.cs[i]; c.drive[i] && x.ok && x.it.doc < pivot {
				x.ok = x.it.seek(pivot)
			}
		}
	}
}

// nextTitled is the first document that can still enter when the worst
// candidate kept holds need driving lists and scores above the bound of
// every page without a title hit: a document more driving lists hold (the
// pivot of need+1 lists, as nextPivot finds it), or one a driving list
// holds that has a title hit of a scoring word (the short lists lead,
// past their postings of anchor hits only, and the driving lists seek to
// their documents). Every document passed holds at most need driving
// lists and no title hit.
func (c *segCursor) nextTitled(need int) (uint32, bool) {
	c.openShort()
	var buf [16]uint32
	for {
		docs := c.driveDocs(buf[:0])
		if len(docs) == 0 {
			return 0, false
		}
		slices.Sort(docs)
		lo := docs[0]
		pivot, byCount := uint32(0), len(docs) > need
		if byCount {
			if pivot = docs[need]; pivot == lo {
				return lo, true // need+1 lists hold it
			}
		}
		t, found := uint32(0), false
		for i := range c.tc {
			x := &c.tc[i]
			if c.neg[i] || !x.ok {
				continue
			}
			if x.cached && x.it.doc < lo {
				// From one live posting with a title hit to the next.
				j, _ := slices.BinarySearch(x.live[x.at:], lo)
				if x.at += j; x.at == len(x.live) {
					x.ok = false
					continue
				}
				if x.ok = x.it.seek(x.live[x.at]); !x.ok {
					continue
				}
			}
			if x.it.doc < lo {
				if x.ok = x.it.seek(lo); !x.ok {
					continue
				}
			}
			// Past postings of anchor hits only, and of deleted pages
			// (passDeleted).
			for c.deleted(x.it.doc) || !hasTitleHit(x.it.hits) {
				if c.deleted(x.it.doc) {
					x.ok = x.it.seek(c.sg.passDeleted(x.it.doc + 1))
				} else {
					x.ok = x.it.next()
				}
				if !x.ok {
					break
				}
			}
			if !x.ok {
				continue
			}
			if !found || x.it.doc < t {
				t, found = x.it.doc, true
			}
		}
		if !found && !byCount {
			return 0, false
		}
		target := t
		if !found || byCount && pivot < t {
			target, found = pivot, false
		}
		held := false
		for i := range c.cs {
			if x := &c.cs[i]; c.drive[i] && x.ok && x.it.doc < target {
				x.ok = x.it.seek(target)
			}
			held = held || c.drive[i] && c.cs[i].ok && c.cs[i].it.doc == target
		}
		if found && held {
			return target, true
		}
	}
}

// hasTitleHit reports whether a short posting's hits hold a title hit.
func hasTitleHit(hits []byte) bool {
	for j := 0; j+1 < len(hits); j += 2 {
		if hits[j]&0x7f == 0x70|hit.Title {
			return true
		}
	}
	return false
}

// step moves the driving lists past doc.
func (c *segCursor) step(doc uint32) {
	for i := range c.cs {
		if x := &c.cs[i]; c.drive[i] && x.ok && x.it.doc == doc {
			x.ok = x.it.next()
		}
	}
}

func (c *segCursor) err() error {
	for i := range c.cs {
		if c.cs[i].it.err != nil {
			return c.cs[i].it.err
		}
	}
	if !c.shortOpen {
		return nil // the short lists are not read
	}
	for i := range c.sc {
		if c.sc[i].it.err != nil {
			return c.sc[i].it.err
		}
	}
	for i := range c.tc {
		if c.tc[i].it.err != nil {
			return c.tc[i].it.err
		}
	}
	return nil
}

// advance moves past the current match.
func (c *segCursor) advance() error {
	c.step(c.doc)
	return c.find()
}

// scan runs the query over every segment as over one index: the segments'
// matches are merged in docID order (a document's postings are all in one
// segment, so each live document is met once), scored with global
// statistics, and the scan stops after opt.MaxMatches matches, at the
// docID where one index holding the same documents would stop. The work
// is that of one index, plus the deleted postings the lists still hold.
func (idx *Index) scan(q *parsedQuery, opt SearchOptions, all bool) ([]scored, int, bool, error) {
	rerank := len(q.seq) > 1
	depth := opt.N
	if rerank {
		depth = max(RerankDepth, opt.N)
	}
	pr := newPruner(q, opt.Weights, opt.Model)
	if !pruning {
		pr = nil
	}
	// A scan of every page holding one of the words, without filters,
	// counts its matches first (a pass over the lists' headers, far
	// cheaper than a match's bound): knowing Matches and the last docID
	// it reads, it need not walk the matches that cannot enter.
	var skip *skipState
	if pr != nil && !all && !q.filtered() {
		skip = &skipState{need: 1}
	}
	// The cursors, their lists and the candidates are held in buffers a
	// next scan reuses.
	nl := len(q.ids)
	buf := scanBufs.Get().(*scanBuf)
	defer buf.put()
	if q.wl == nil || !segShortcuts {
		q.wl, q.dense = make([]*wordLists, nl), make([][]*denseList, nl)
		for i, id := range q.ids {
			var err error
			if q.wl[i], err = idx.wordLists(id); err != nil {
				return nil, 0, false, err
			}
			if segShortcuts {
				q.dense[i] = idx.denseOf(q.wl[i])
			}
		}
	}
	segcs, curs, clists, ords := buf.cursors(len(idx.segs), nl)
	h := buf.heap[:0] // a min-heap by current docID
	for k, sg := range idx.segs {
		c := &segcs[len(h)]
		err := idx.newSegCursor(c, sg, k, q, all, pr != nil, skip, curs[3*nl*len(h):], clists[nl*len(h):], ords[nl*len(h):])
		if err != nil {
			return nil, 0, false, err
		}
		if c.cs != nil {
			h = append(h, c)
		}
	}
	buf.heap = h
	opened := segcs[:len(h)]
	matches := 0
	// floor is the lowest coordination tier that can change the results
	// (see floorOf): a match below it is passed unscored.
	floor, counted := 0, 0
	if skip != nil {
		var tc *tierCount
		if tierFloor {
			tc = &buf.tiers
		}
		n, last, err := idx.countMatches(h, q, opt.MaxMatches, tc, &buf.count)
		if err != nil {
			return nil, 0, false, err
		}
		skip.last, matches, counted = last, n, n
		if tc != nil && tc.ok {
			floor, counted = q.floorOf(tc, opt.N)
			if !q.or {
				skip.need = max(1, q.needUnits(floor))
			}
			if floor > 0 && segShortcuts {
				// A segment whose matches counted are all below the
				// floor holds no match that can change the results: its
				// cursors are not walked.
				has := buf.has[:0]
				for range h {
					has = append(has, false)
				}
				for j, ci := range tc.curs {
					if int(tc.tier[tc.sets[j]]) >= floor {
						has[ci] = true
					}
				}
				kept := h[:0]
				for j, c := range h {
					if has[j] {
						kept = append(kept, c)
					}
				}
				floorPassed.Add(int64(len(h) - len(kept)))
				h, buf.has = kept, has
			}
			if floor > 0 {
				buf.targets = tc.above(buf.targets[:0], floor)
				floorSkipped.Add(int64(n - len(buf.targets)))
				if len(buf.targets) < n/2 {
					// The cursors walk only the matches at or above it
					// (where they are most of the matches, walking them
					// all costs less than seeking each).
					skip.targets, skip.targetNeed = buf.targets, skip.need
				}
			}
		}
	}
	// Where the scan cannot meet more matches than it keeps candidates,
	// every match is one: the candidates are kept with a bound of their
	// score with proximity (a quarter of a score's cost), and only those
	// whose bound can enter the results are scored, best bound first. Not
	// with a floor: the matches above it are mostly all scored.
	maxProx := max(0, slices.Max(opt.Weights.Prox[:]))
	boundsFirst := pr != nil && rerank && !q.fields && opt.Model.Prior >= 0 && opt.Model.W[FeatProximity] >= 0 &&
		floor == 0 && atMost(nil, q, all, skip, counted) <= depth
	live := h[:0]
	for _, c := range h {
		if err := c.find(); err != nil {
			return nil, 0, false, err
		}
		if c.ok {
			live = append(live, c)
		}
	}
	h = live
	// Each live document is in one segment, and the candidates are kept
	// by their score, not by when they are met: where the scan does not
	// stop at the MaxMatches-th match in docID order (a counted scan stops
	// at its docID in each segment), the segments are scanned one after
	// the other instead of merged in docID order, sharing the candidates
	// and so the score a match must beat.
	bySeg := segmentOrder && (skip != nil || atMost(h, q, all, nil, 0) < opt.MaxMatches)
	less := func(i, j int) bool { return h[i].doc < h[j].doc }
	down := func(i int) {
		if bySeg {
			if !h[0].ok {
				h = h[1:]
			}
			return
		}
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
	for i := len(h)/2 - 1; i >= 0 && !bySeg; i-- {
		down(i)
	}
	// The candidates: a heap of keys without pointers (moving them costs
	// no write barriers), their lists, segments and features by slot.
	top, slotLists, slotSeg, slotParts := buf.top[:0], buf.lists[:0], buf.seg[:0], buf.parts[:0]
	var first *segCursor // the segment scanned first
	if len(h) > 0 {
		first = h[0]
	}
	later := int64(0) // matches skipped past it (bySeg)
	for len(h) > 0 && (skip != nil || matches < opt.MaxMatches) {
		c := h[0]
		if q.filtered() && !idx.keep(c.doc, c.lists, q) {
			if err := c.advance(); err != nil {
				return nil, 0, false, err
			}
			if !c.ok && !bySeg {
				h[0] = h[len(h)-1]
				h = h[:len(h)-1]
			}
			down(0)
			continue
		}
		if skip == nil {
			matches++
		}
		out := false
		m := -1        // the match's tier, once computed
		if floor > 0 { // a match below it, met walking a pivot of need lists
			m = matchedOf(c.lists, q)
			out = m < floor
		}
		if !out && pr != nil && len(top) == depth {
			c.openShort()
			// A match after the worst kept in docID order ranks after it
			// on a tie; one before, only below it.
			if m < 0 {
				m = matchedOf(c.lists, q)
			}
			thr := top[0].score
			if c.doc < top[0].doc {
				thr = math.Nextafter(thr, math.Inf(-1))
			}
			out = m < int(top[0].matched) || m == int(top[0].matched) && pr.skip(idx, c, q, m, thr)
			if out && c != first {
				later++
			}
		}
		if !out {
			var pt parts
			var s float64
			if boundsFirst {
				if m < 0 {
					m = matchedOf(c.lists, q)
				}
				c.openShort()
				s = pr.bound(idx, c, q, m, math.Inf(-1), maxProx*proxIDF(c.lists, q))
			} else {
				s, m = idx.score(c.sg, c.doc, c.lists, q, opt.Weights, opt.Model, nil, !rerank, &pt)
			}
			if cand := (rank{doc: c.doc, matched: int32(m), score: s}); len(top) < depth || cand.better(top[0]) {
				// The hits stay in the mapped barrels while the index is
				// open; the slot of the candidate dropped is reused.
				if len(top) == depth {
					cand.slot = top[0].slot
				} else {
					cand.slot = int32(len(slotSeg))
					if n := len(slotLists) + nl; n <= cap(slotLists) {
						slotLists = slotLists[:n]
					} else {
						slotLists = append(slotLists, make([][]byte, nl)...)
					}
					slotSeg, slotParts = append(slotSeg, nil), append(slotParts, parts{})
				}
				copy(slotLists[int(cand.slot)*nl:], c.lists)
				slotSeg[cand.slot], slotParts[cand.slot] = c.sg, pt
				top = keepTop(top, cand, depth)
				if skip != nil && len(top) == depth && !q.or && !boundsFirst {
					skip.need = q.needUnits(int(top[0].matched))
					skip.titled = top[0].matched == coordQ && (pr.noTitle < top[0].score || pr.noTitle == top[0].score && !bySeg)
				}
			}
		}
		if err := c.advance(); err != nil {
			return nil, 0, false, err
		}
		if bySeg {
			down(0)
		} else if !c.ok {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
			down(0)
		} else if len(h) > 1 && (h[1].doc < c.doc || len(h) > 2 && h[2].doc < c.doc) {
			down(0) // segments hold runs of docIDs: mostly the same cursor stays first
		}
	}
	for i := range opened { // the damage the cursors met
		if err := opened[i].err(); err != nil {
			return nil, 0, false, err
		}
	}
	if pr != nil {
		skippedMatches.Add(pr.skipped)
	}
	if bySeg {
		skippedLater.Add(later)
	}
	buf.top, buf.lists, buf.seg, buf.parts = top, slotLists, slotSeg, slotParts
	out := buf.out[:0]
	for _, r := range top {
		k := int(r.slot)
		out = append(out, scored{doc: r.doc, matched: int(r.matched), score: r.score, lists: slotLists[k*nl : (k+1)*nl : (k+1)*nl], sg: slotSeg[k], parts: slotParts[k]})
	}
	buf.out = out
	sel := top[:0]
	if boundsFirst {
		boundsKept.Add(int64(len(out)))
	}
	if boundsFirst || rerank && pruning && opt.Model.Prior >= 0 && opt.Model.W[FeatProximity] >= 0 && !slices.ContainsFunc(out, func(t scored) bool { return !t.parts.ok }) {
		// Proximity adds at most the largest proximity weight times the
		// words' idf: the candidates are re-scored best bound first, until
		// none left can enter the results.
		order := buf.order[:0]
		for i, t := range out {
			ub := t.score // boundsFirst: the bound
			if !boundsFirst {
				ub = handScore(opt.Model, t.parts.ir1, maxProx*proxIDF(t.lists, q), t.parts.tm, t.parts.lead, t.parts.p, t.parts.def)
			}
			order = append(order, rank{score: ub, doc: t.doc, matched: int32(t.matched), slot: int32(i)})
		}
		buf.order = order
		// Best bound first, taken from a heap: the re-scoring mostly
		// stops after a few, where sorting them all cost more than it.
		for i := len(order)/2 - 1; i >= 0; i-- {
			siftBest(order, i)
		}
		for len(order) > 0 {
			o := order[0]
			order[0] = order[len(order)-1]
			order = order[:len(order)-1]
			siftBest(order, 0)
			if len(sel) == opt.N && (o.matched < sel[0].matched || o.matched == sel[0].matched && o.score < sel[0].score) {
				break
			}
			t := &out[o.slot]
			if boundsFirst {
				boundsScored.Add(1)
				t.score, _ = idx.score(t.sg, t.doc, t.lists, q, opt.Weights, opt.Model, nil, true, &t.parts)
			} else {
				ir2, _ := proximity(t.lists, q, opt.Weights)
				t.score = handScore(opt.Model, t.parts.ir1, ir2, t.parts.tm, t.parts.lead, t.parts.p, t.parts.def)
			}
			sel = keepTop(sel, rank{score: t.score, doc: t.doc, matched: int32(t.matched), slot: o.slot}, opt.N)
		}
	} else {
		if rerank {
			for i := range out {
				t := &out[i]
				if t.parts.ok { // the hand weights: the first stage's features, and proximity
					ir2, _ := proximity(t.lists, q, opt.Weights)
					t.score = handScore(opt.Model, t.parts.ir1, ir2, t.parts.tm, t.parts.lead, t.parts.p, t.parts.def)
				} else {
					t.score, _ = idx.score(t.sg, t.doc, t.lists, q, opt.Weights, opt.Model, nil, true, nil)
				}
			}
		}
		// The best opt.N: selected by a heap of opt.N, then sorted.
		for i, t := range out {
			sel = keepTop(sel, rank{score: t.score, doc: t.doc, matched: int32(t.matched), slot: int32(i)}, opt.N)
		}
	}
	slices.SortFunc(sel, func(a, b rank) int {
		switch {
		case a.better(b):
			return -1
		case b.better(a):
			return 1
		}
		return 0
	})
	// The results outlive the buffers: their lists are copied.
	res := make([]scored, len(sel))
	lists := make([][]byte, len(res)*nl)
	for i, r := range sel {
		res[i] = out[r.slot]
		res[i].lists = lists[i*nl : (i+1)*nl : (i+1)*nl]
		copy(res[i].lists, out[r.slot].lists)
	}
	return res, matches, matches >= opt.MaxMatches, nil
}

// atMost is a bound of the matches a scan of the cursors h (nil: of
// every segment) meets: those counted (with skip), or the postings of the
// driving lists, deleted ones included (with all, those of its shortest
// word).
func atMost(h []*segCursor, q *parsedQuery, all bool, skip *skipState, counted int) int {
	if skip != nil {
		return counted
	}
	most, sum := math.MaxInt, 0
	for i, d := range q.driver {
		if !d {
			continue
		}
		n := 0
		for _, c := range h {
			n += int(c.cs[i].n)
		}
		if h == nil {
			for _, l := range q.wl[i].segs {
				n += int(l.nf)
			}
		}
		most, sum = min(most, n), sum+n
	}
	if !all {
		return sum
	}
	return most
}

// countMatches counts the matches of q's scan of every page holding one
// of its driving words, up to limit, and returns the last docID the scan
// reads: the limit-th match, or the largest docID when there are fewer.
// One driving word in one segment without deletions is counted by its
// posting count (and skip table), one on fewer pages than limit by its
// document frequency; otherwise the lists' live postings are
// marked in a bitmap of a window of docIDs at a time (those of a segment
// mostly deleted from the cache of live postings, liveDocs).
//
// With tc, and a query of several but at most 8 driving words, it also
// counts the matches of each set of driving words held (tc.by, by the
// words' places among the driving lists), and sets tc.ok.
//
// The lists' walks start where the cursors' stand (they have not moved),
// in the buffers of cb.
func (idx *Index) countMatches(cs []*segCursor, q *parsedQuery, limit int, tc *tierCount, cb *countBuf) (int, uint32, error) {
	defer cb.drop()
	lists, segs, ids := cb.lists[:0], cb.segs[:0], cb.ids[:0]
	bit := cb.bit[:0]   // each list's driving word, as a bit of tc's sets
	from := cb.from[:0] // each list's cursor, in cs
	xs := cb.xs[:0]     // and its list's cursor
	defer func() {
		cb.lists, cb.segs, cb.ids, cb.bit, cb.from, cb.xs = lists, segs, ids, bit, from, xs
	}()
	total := 0
	drivers := countTrue(q.driver)
	if tc != nil {
		tc.ok = false
		if drivers < 2 || drivers > 8 {
			tc = nil
		}
	}
	for ci, c := range cs {
		k := 0
		for i := range c.cs {
			if !q.driver[i] {
				continue
			}
			if x := &c.cs[i]; x.n > 0 {
				lists, segs, ids = append(lists, x.list), append(segs, c.sg), append(ids, q.ids[i])
				bit = append(bit, 1<<k)
				from, xs = append(from, ci), append(xs, x)
				total += int(x.n)
			}
			k++
		}
	}
	if len(lists) == 0 {
		return 0, math.MaxUint32, nil
	}
	if len(lists) == 1 && segs[0].del == nil {
		if total < limit {
			return total, math.MaxUint32, nil
		}
		d, err := nthDoc(lists[0], limit-1)
		return limit, d, err
	}
	if countTrue(q.driver) == 1 && q.driveDF < limit {
		// One word: a live document is in one segment's list, so the
		// matches are the lists' live postings, which the document
		// frequency counts (Verify checks it does).
		return q.driveDF, math.MaxUint32, nil
	}
	n := len(lists)
	cb.its, cb.oks, cb.live, cb.cached, cb.pos = grown(cb.its, n), grown(cb.oks, n), grown(cb.live, n), grown(cb.cached, n), grown(cb.pos, n)
	its, oks := cb.its[:n], cb.oks[:n]
	live, cached := cb.live[:n], cb.cached[:n] // with cached: the list's live documents
	pos := cb.pos[:n]                          // the place in live
	// The segment's deleted documents, but for a list of live ones: by a
	// cursor over their list in the first search on the index, by their
	// bits in later ones (as segCursor).
	wins := idx.searches.Load() >= 2
	cb.dels, cb.bits = grown(cb.dels, n), grown(cb.bits, n)
	dels, delBits := cb.dels[:n], cb.bits[:n]
	for i, l := range lists {
		dels[i], delBits[i] = newDelCursor(segs[i].del), segs[i].del
		if !cachesLive(segs[i]) && segShortcuts {
			if d := xs[i].it.dd; d != nil {
				// Its docIDs decoded (denseOf), the deleted ones
				// passed.
				live[i], cached[i], oks[i] = d.docs, true, len(d.docs) > 0
				continue
			}
			// Where its cursor stands: at the first posting.
			its[i], oks[i] = xs[i].it, xs[i].ok
			continue
		}
		if cachesLive(segs[i]) {
			d, ok, err := idx.liveDocs(segs[i], ids[i], l, false)
			if err != nil {
				return 0, 0, err
			}
			if ok {
				live[i], cached[i], oks[i], dels[i], delBits[i] = d, true, len(d) > 0, newDelCursor(nil), nil
				continue
			}
		}
		its[i] = newPostingIter(l)
		if oks[i] = its[i].next(); its[i].err != nil {
			return 0, 0, its[i].err
		}
	}
	const window = 1 << 16
	var bm [window / 64]uint64
	var held []uint8 // with tc: the driving words each document of the window holds
	var at []int32   // and the cursor of its segment
	if tc != nil {
		if tc.held == nil {
			tc.held, tc.at = make([]uint8, window), make([]int32, window)
		}
		held, at = tc.held[:window], tc.at[:window]
		clear(tc.by[:])
		tc.docs, tc.sets, tc.curs = tc.docs[:0], tc.sets[:0], tc.curs[:0]
	}
	count := 0
	for lo := uint64(0); ; lo += window {
		clear(bm[:])
		more := false
		for i := range its {
			if cached[i] {
				d, j, del, b := live[i], pos[i], &dels[i], delBits[i]
				for ; j < len(d) && uint64(d[j]) < lo+window; j++ {
					if wins && b.has(d[j]) || !wins && del.deleted(d[j]) {
						continue
					}
					k := uint64(d[j]) - lo
					bm[k/64] |= 1 << (k % 64)
					if held != nil {
						held[k] |= bit[i]
						at[k] = int32(from[i]) // a live document is in one segment
					}
				}
				pos[i] = j
				more = more || j < len(d)
				continue
			}
			it := &its[i]
			dw, dwin := uint32(math.MaxUint32), &emptyLiveWindow
			for oks[i] && uint64(it.doc) < lo+window {
				gone := false
				if wins { // del.has, inlined
					if it.doc>>liveWinShift != dw {
						dw, dwin = it.doc>>liveWinShift, delBits[i].win(it.doc)
					}
					gone = dwin[it.doc>>6&(liveWinDocs/64-1)]>>(it.doc&63)&1 != 0
				} else {
					gone = dels[i].deleted(it.doc)
				}
				if gone {
					// Passed: in a segment mostly deleted, with its run
					// of deleted documents, by the skip table to the
					// segment's next live one (passDeleted).
					oks[i] = it.seek(segs[i].passDeleted(it.doc + 1))
					continue
				}
				k := uint64(it.doc) - lo
				bm[k/64] |= 1 << (k % 64)
				if held != nil {
					held[k] |= bit[i]
					at[k] = int32(from[i])
				}
				oks[i] = it.next()
			}
			if it.err != nil {
				clear(held)
				return 0, 0, it.err
			}
			more = more || oks[i]
		}
		if held != nil {
			// Each match's set of words, in docID order, up to the limit.
			for w, x := range bm {
				for ; x != 0; x &= x - 1 {
					k := w*64 + bits.TrailingZeros64(x)
					tc.by[held[k]]++
					tc.docs = append(tc.docs, uint32(lo)+uint32(k))
					tc.sets = append(tc.sets, held[k])
					tc.curs = append(tc.curs, at[k])
					held[k] = 0
					if count++; count == limit {
						clear(held)
						tc.ok = true
						return limit, uint32(lo) + uint32(k), nil
					}
				}
			}
			if !more {
				tc.ok = true
				return count, math.MaxUint32, nil
			}
			continue
		}
		for w, x := range bm {
			c := bits.OnesCount64(x)
			if count+c >= limit {
				for ; ; x &= x - 1 {
					if count++; count == limit {
						return limit, uint32(lo) + uint32(w*64+bits.TrailingZeros64(x)), nil
					}
				}
			}
			count += c
		}
		if !more {
			return count, math.MaxUint32, nil
		}
	}
}

// tierCount is countMatches' count of the matches by the driving words
// they hold.
type tierCount struct {
	ok   bool
	by   [256]int32 // matches by their set of driving words (bit k: the k-th driving word)
	held []uint8    // scratch: a window's documents' sets, kept zeroed
	at   []int32    // scratch: a window's documents' cursors (where held is set)
	curs []int32    // the matches' cursors (their segments), by place in the cursors counted
	docs []uint32   // the matches counted, in docID order
	sets []uint8    // and their sets
	tier [256]int32 // by set: its coordination tier (floorOf)
}

// above appends to ts the matches counted whose tier is floor or higher,
// in docID order.
func (tc *tierCount) above(ts []uint32, floor int) []uint32 {
	for j, d := range tc.docs {
		if int(tc.tier[tc.sets[j]]) >= floor {
			ts = append(ts, d)
		}
	}
	return ts
}

// floorOf is the lowest coordination tier a match can hold and still
// change the results, from the matches counted by their driving words
// (tc.ok), and how many matches hold it or a higher one: the highest tier
// that n matches (the results wanted, at most the candidates kept) hold
// or top. Candidates and results are ranked by tier first. If no more
// than the candidates kept hold it or higher, every one of them is a
// candidate, and a match below it ranks after n candidates: it is no
// result. If more, the candidates all hold it or higher: a match below
// it is no candidate. 0 and all the matches when fewer than n are
// counted.
func (q *parsedQuery) floorOf(tc *tierCount, n int) (floor, above int) {
	tiers := &tc.tier
	var sets [256]uint8 // the sets some match holds, by tier descending
	ns := 0
	var unitOf [8]uint64 // the k-th driving word's unit bit
	k := 0
	for i, d := range q.driver {
		if d {
			unitOf[k] = 1 << (q.group[i] & 63)
			k++
		}
	}
	total := 0
	for set, c := range tc.by {
		if c == 0 {
			continue
		}
		var units uint64
		for b := set; b != 0; b &= b - 1 {
			units |= unitOf[bits.TrailingZeros(uint(b))]
		}
		tiers[set] = int32(q.coordTier(units))
		sets[ns] = uint8(set)
		ns++
		total += int(c)
	}
	if total < n {
		return 0, total
	}
	order := sets[:ns]
	slices.SortFunc(order, func(a, b uint8) int { return cmp.Compare(tiers[b], tiers[a]) })
	cum := 0
	for j := 0; j < len(order); {
		t := tiers[order[j]]
		for ; j < len(order) && tiers[order[j]] == t; j++ {
			cum += int(tc.by[order[j]])
		}
		if cum >= n {
			return int(t), cum
		}
	}
	return 0, total
}

// nthDoc is the docID of posting k (from 0) of a list that has more than
// k: the skip table jumps to its block.
func nthDoc(list []byte, k int) (uint32, error) {
	it := newPostingIter(list)
	if b := k / skipEvery; b > 0 && b < len(it.skips)/8 {
		it.pos = int(binary.BigEndian.Uint32(it.skips[8*b+4:]))
		it.prev = int64(binary.BigEndian.Uint32(it.skips[8*b:])) - 1
		k -= b * skipEvery
	}
	for i := 0; i <= k; i++ {
		if !it.next() {
			if it.err == nil {
				it.err = corrupt("inverted list: fewer postings than its count")
			}
			return 0, it.err
		}
	}
	return it.doc, nil
}

// scanBuf holds a scan's cursors and candidates, reused by the next scan.
type scanBuf struct {
	top   []rank
	lists [][]byte
	seg   []*segment
	parts []parts
	out   []scored
	order []rank

	tiers   tierCount
	count   countBuf
	targets []uint32
	has     []bool // by cursor: it holds a match the results may need

	segcs  []segCursor
	heap   []*segCursor
	curs   []cursor
	clists [][]byte
	ords   []int32
}

var scanBufs = sync.Pool{New: func() any { return new(scanBuf) }}

// cursors returns room for the cursors of segs segments of a query of nl
// lists: the segment cursors, and list cursors (3*nl a segment), zeroed
// current lists and orders of the driving lists (nl a segment) for them.
func (b *scanBuf) cursors(segs, nl int) ([]segCursor, []cursor, [][]byte, []int32) {
	if cap(b.segcs) < segs {
		b.segcs = make([]segCursor, segs)
	}
	if n := 3 * nl * segs; cap(b.curs) < n {
		b.curs = make([]cursor, n)
	} else {
		b.curs = b.curs[:n] // zeroed by newSegCursor, a segment's when it takes them
	}
	if n := nl * segs; cap(b.clists) < n {
		b.clists = make([][]byte, n)
	} else {
		b.clists = b.clists[:n]
		clear(b.clists)
	}
	if n := nl * segs; cap(b.ords) < n {
		b.ords = make([]int32, n)
	}
	return b.segcs[:segs], b.curs, b.clists, b.ords[:nl*segs]
}

// countBuf holds countMatches' lists and walks, reused by the next
// count.
type countBuf struct {
	lists  [][]byte
	segs   []*segment
	ids    []uint32
	bit    []uint8
	from   []int
	xs     []*cursor
	its    []postingIter
	oks    []bool
	live   [][]uint32
	dels   []delCursor
	bits   []docBits
	cached []bool
	pos    []int
}

// drop clears what cb holds of the index and of the cursors (the walks
// zeroed for the next count).
func (cb *countBuf) drop() {
	clear(cb.lists[:cap(cb.lists)])
	clear(cb.segs[:cap(cb.segs)])
	clear(cb.xs[:cap(cb.xs)])
	clear(cb.its[:cap(cb.its)])
	clear(cb.live[:cap(cb.live)])
	clear(cb.dels[:cap(cb.dels)])
	clear(cb.bits[:cap(cb.bits)])
	clear(cb.oks[:cap(cb.oks)])
	clear(cb.cached[:cap(cb.cached)])
	clear(cb.pos[:cap(cb.pos)])
}

// grown is s with room for n, its first n zeroed.
func grown[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	clear(s[:n])
	return s[:n]
}

// put returns b to the pool, dropping its references to the index.
func (b *scanBuf) put() {
	clear(b.lists)
	clear(b.seg)
	clear(b.out)
	clear(b.segcs[:cap(b.segcs)])
	clear(b.heap[:cap(b.heap)])
	scanBufs.Put(b)
}

// rank is a candidate's place in the scan's heap: its ordering key, and
// the slot of its lists.
type rank struct {
	score   float64
	doc     uint32
	matched int32
	slot    int32
}

// better orders results: more of the query's words, by idf, first (coordination),
// then by score, then by docID.
func (a rank) better(b rank) bool {
	if a.matched != b.matched {
		return a.matched > b.matched
	}
	return a.score > b.score || a.score == b.score && a.doc < b.doc
}

// siftBest moves h[i] down the heap h, which holds the best at its root.
func siftBest(h []rank, i int) {
	for {
		k := 2*i + 1
		if k >= len(h) {
			return
		}
		if k+1 < len(h) && h[k+1].better(h[k]) {
			k++
		}
		if !h[k].better(h[i]) {
			return
		}
		h[i], h[k] = h[k], h[i]
		i = k
	}
}

// keepTop adds s to top, a heap of at most n candidates with the worst at
// its root, dropping the worst when full: a match enters in O(log n),
// where a sorted insertion moved up to n.
func keepTop(top []rank, s rank, n int) []rank {
	worse := func(i, j int) bool { return top[j].better(top[i]) }
	if len(top) < n {
		top = append(top, s)
		for i := len(top) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(i, p) {
				break
			}
			top[i], top[p] = top[p], top[i]
			i = p
		}
		return top
	}
	if !s.better(top[0]) {
		return top
	}
	top[0] = s
	for i := 0; ; {
		k := 2*i + 1
		if k >= len(top) {
			break
		}
		if k+1 < len(top) && worse(k+1, k) {
			k++
		}
		if !worse(k, i) {
			break
		}
		top[i], top[k] = top[k], top[i]
		i = k
	}
	return top
}

const proxHits = 64 // plain hits per word looked at for proximity

// window is the smallest span of body positions holding a hit of each of
// the words whose plain hits are in lists (nil lists skipped), looking at
// the first proxHits hits of each, and how many words it holds.
func window(lists [][]byte, words []int) (span, held int) {
	wb := windowBufs.Get().(*windowBuf)
	defer windowBufs.Put(wb)
	hits, starts := wb.hits[:0], wb.starts[:0]
	// Each word's plain hits come in position order: the words' runs are
	// merged (sorted only if one is not in order).
	inOrder := true
	for _, w := range words {
		l, n := lists[w], 0
		if len(l) == 0 {
			continue
		}
		held++
		start, prev := len(hits), int32(-1)
		for j := 0; j+1 < len(l) && n < proxHits; j += 2 {
			if l[j]&0x70 != 0x70 { // not fancy (font 7)
				pos := int32(binary.BigEndian.Uint16(l[j:]) & 0xfff)
				inOrder = inOrder && pos >= prev
				prev = pos
				hits = append(hits, ph{pos, int32(w)})
				n++
			}
		}
		if n == 0 {
			held-- // only fancy hits: not in the text
		} else {
			starts = append(starts, start)
		}
	}
	wb.hits, wb.starts = hits, starts
	if held < 2 {
		return 0, held
	}
	if inOrder {
		hits = wb.mergeRuns(hits, starts)
	} else {
		slices.SortFunc(hits, func(a, b ph) int { return int(a.pos - b.pos) })
	}
	var cnt [64]int
	have, lo, best := 0, 0, 1<<30
	for _, x := range hits {
		if cnt[x.w%64] == 0 {
			have++
		}
		cnt[x.w%64]++
		for have == held {
			if s := int(x.pos-hits[lo].pos) + 1; s < best {
				best = s
			}
			y := hits[lo]
			cnt[y.w%64]--
			if cnt[y.w%64] == 0 {
				have--
			}
			lo++
		}
	}
	return best, held
}

// mergeRuns merges the sorted runs of hits that begin at starts into one
// run in position order, two runs at a time (log2 of the runs passes: a
// long title of a query holds a dozen words), in hits and wb.merged.
func (wb *windowBuf) mergeRuns(hits []ph, starts []int) []ph {
	other := slices.Grow(wb.merged[:0], len(hits))[:len(hits)]
	for len(starts) > 1 {
		next := starts[:0]
		for r := 0; r < len(starts); r += 2 {
			a := starts[r]
			next = append(next, a)
			if r+1 == len(starts) { // an odd run out: copied as it is
				copy(other[a:], hits[a:])
				break
			}
			b, end := starts[r+1], len(hits)
			if r+2 < len(starts) {
				end = starts[r+2]
			}
			i, j, k := a, b, a
			for i < b && j < end {
				if hits[j].pos < hits[i].pos {
					other[k] = hits[j]
					j++
				} else {
					other[k] = hits[i]
					i++
				}
				k++
			}
			k += copy(other[k:], hits[i:b])
			copy(other[k:], hits[j:end])
		}
		starts = next
		hits, other = other, hits
	}
	wb.hits, wb.merged = hits, other
	return hits
}

// ph is a plain hit's position and word, for window.
type ph struct{ pos, w int32 }

// windowBuf is window's scratch.
type windowBuf struct {
	hits, merged []ph
	starts       []int
}

var windowBufs = sync.Pool{New: func() any { return new(windowBuf) }}

// fieldK1 saturates the per-field counts of a model's field features.
const fieldK1 = 1.2

// score scores one page for the query, and gives its coordination tier
// (the idf-weighted share of the query's units it holds, coordTier). Each word's hits are counted by type and
// weighted by the type-weights (relative font size for plain hits, then
// URL, title, anchor, meta), and the weighted count is saturated and
// normalised by the page's length as BM25F does, times the word's idf.
// Proximity adds the smallest window of text holding all the words the
// page has; the title match, the title's lead and the definition term (the idf of
// the query's words, if the page defines them all) are added. The model
// combines these (and, if it reads them, per-field scores) into the text
// score, which the prior then lifts by a bounded share.
func (idx *Index) score(sg *segment, doc uint32, lists [][]byte, q *parsedQuery, w *Weights, m *Model, ex *Explain, withProx bool, pt *parts) (float64, int) {
	st := idx.docStats(sg, doc)
	norm := w.K1 * (1 - w.B + w.B*float64(st.words)/q.avgLen)
	fields := ex != nil || q.fields
	bodyNorm := 0.25 + 0.75*float64(st.words)/q.avgLen
	var f [NumFeatures]float64
	var titleBuf [16]int
	var titleHits []int
	if len(lists) > len(titleBuf) {
		titleHits = make([]int, len(lists))
	} else {
		titleHits = titleBuf[:len(lists)]
	}
	// A title "begins with" the query when its words sit in the title's
	// first len+1 places (one more for a leading article).
	leadMax := len(q.seq) + 1
	var units uint64
	ir1, lead, def := 0.0, 0.0, 0.0
	var defUnits uint64 // the units the page defines
	var defBuf [64]defPos
	defAt := defBuf[:0] // the driving words' definition hits
	var emBuf [64]defPos
	emph, emUnits, emAt := 0.0, uint64(0), emBuf[:0] // the same of the emphasis hits, for a model that weighs them
	if ex != nil {
		ex.Counts = map[string]map[string]int{}
	}
	for i, l := range lists {
		if len(l) == 0 || q.neg[i] {
			continue
		}
		if q.driver[i] {
			units |= 1 << (q.group[i] & 63) // a query of over 64 units (the tools clip at 32 terms) may count two as one
		}
		var counts [numTypes]int
		present := countTypes(l, &counts)
		dl := l // the hits that say the page defines the word
		if i < len(q.form) && q.form[i] != noForm {
			dl = nil
			if j := q.form[i]; j >= 0 && counts[TypeDef] > 0 {
				dl = lists[j]
			}
		}
		leads, caps, capDefs := counts[TypeTitle] > 0 && titleLeads(l, leadMax), 0, 0
		if counts[TypeDef] > 0 && q.capital[i] {
			capDefs = capitalDefs(dl)
		}
		if fields && q.capital[i] { // read again only for a model that weighs them
			for j := range len(l) / 2 {
				if hit.At(l, j).Capital() {
					caps++
				}
			}
		}
		// Summed over the types the posting holds, in the order of the
		// types (the same sum as over all of them): asking each type's
		// count, as good as random, was a sixth of a common-word query's
		// CPU.
		tf := 0.0
		for m := present; m != 0; m &= m - 1 {
			t := bits.TrailingZeros32(m)
			tf += w.Type[t] * float64(counts[t])
		}
		if ex != nil {
			for t, c := range counts {
				if c > 0 {
					if ex.Counts[q.keys[i]] == nil {
						ex.Counts[q.keys[i]] = map[string]int{}
					}
					ex.Counts[q.keys[i]][TypeNames[t]] = c
				}
			}
		}
		idf := q.idf[i]
		ir1 += idf * tf * (w.K1 + 1) / (tf + norm)
		if i < len(q.form) && q.form[i] != noForm && counts[TypeDef] > 0 {
			counts[TypeDef] = defCount(dl)
			if ex != nil && ex.Counts[q.keys[i]] != nil {
				ex.Counts[q.keys[i]][TypeNames[TypeDef]] = counts[TypeDef]
				if counts[TypeDef] == 0 {
					delete(ex.Counts[q.keys[i]], TypeNames[TypeDef])
				}
			}
		}
		if q.capital[i] {
			// A word the query writes with a capital is defined by a
			// name written so: "Text" is typing's class Text, not the
			// parameter text.
			counts[TypeDef] = capDefs
			if ex != nil && ex.Counts[q.keys[i]] != nil {
				ex.Counts[q.keys[i]][TypeNames[TypeDef]] = capDefs
				if capDefs == 0 {
					delete(ex.Counts[q.keys[i]], TypeNames[TypeDef])
				}
			}
		}
		if counts[TypeDef] > 0 { // the page defines the word
			def += idf
			if q.driver[i] {
				defUnits |= 1 << (q.group[i] & 63)
				if q.of > 1 && q.defNeed&(1<<(q.group[i]&63)) != 0 {
					for j := 0; j+1 < len(dl); j += 2 {
						if typeByHigh[dl[j]] == TypeDef && (!q.capital[i] || dl[j]&0x80 != 0) && len(defAt) < cap(defAt) {
							defAt = append(defAt, defPos{dl[j+1], uint8(q.group[i] & 63)})
						}
					}
				}
			}
		}
		titleHits[i] = counts[TypeTitle]
		if leads {
			lead += idf
		}
		if fields {
			bm := func(c int, nrm float64) float64 {
				return idf * float64(c) * (fieldK1 + 1) / (float64(c) + fieldK1*nrm)
			}
			f[FeatTitle] += bm(counts[TypeTitle], 1)
			f[FeatAnchor] += bm(counts[TypeAnchor], 1)
			f[FeatHeading] += bm(counts[2]+counts[3]+counts[4]+counts[5]+counts[6], 1)
			f[FeatBody] += bm(counts[0]+counts[1], bodyNorm)
			f[FeatURL] += bm(counts[TypeURL], 1)
			if q.capital[i] {
				f[FeatCapital] += bm(caps, 1)
			}
			if counts[TypeEmph] > 0 && q.driver[i] { // the page sets the word off
				emph += idf
				emUnits |= 1 << (q.group[i] & 63)
				if q.defNeed&(1<<(q.group[i]&63)) != 0 {
					for j := 0; j+1 < len(l) && len(emAt) < cap(emAt); j += 2 {
						if typeByHigh[l[j]] == TypeEmph {
							emAt = append(emAt, defPos{l[j+1], uint8(q.group[i] & 63)})
						}
					}
				}
			}
		}
	}
	matched := q.coordTier(units)
	ir2, span := 0.0, 0
	if withProx {
		ir2, span = proximity(lists, q, w)
	}
	// Title match: the idf-weighted share of query words in the title
	// times the share of title words (with repeats) the query holds.
	inTitle, qw, tw := 0, 0.0, 0.0
	for i := range lists {
		if q.neg[i] {
			continue
		}
		qw += q.idf[i]
		if n := titleHits[i]; n > 0 {
			tw += q.idf[i]
			inTitle += min(n, q.count[i])
		}
	}
	tm := 0.0
	if inTitle > 0 && qw > 0 {
		words := max(int(st.titleWords), inTitle)
		tm = tw / qw * float64(inTitle) / float64(words)
	}
	if qw > 0 {
		lead /= qw
	}
	if defUnits&q.defNeed != q.defNeed {
		// The page defines the query only if it defines all of it: a page
		// defining one word of another page's title is no answer to it.
		def = 0
	} else if bits.OnesCount64(q.defNeed) > 1 && !oneEntry(defAt, q) {
		// Every word is defined, but not in one defined name: a glossary
		// defining "iterator" and "object" apart is no answer to
		// "iterator objects".
		def = 0
		if ex != nil {
			ex.DefinedApart = true
		}
	}
	p := float64(st.prior)
	var s float64
	if fields {
		f[FeatText], f[FeatProximity], f[FeatTitleMatch], f[FeatTitleLead], f[FeatDef] = ir1, ir2, tm, lead, def
		if emUnits&q.defNeed == q.defNeed {
			if oneRun(emAt, q, 0) {
				f[FeatEmph] = emph
			}
			if oneRun(emAt, q, hit.EmphDfn) {
				f[FeatDfn] = emph
			}
		}
		if q.of > 0 {
			f[FeatCoord] = float64(matched) / coordQ
		}
		s = m.Score(&f, p)
	} else { // the hand weights' model: four features, and no loop over the others
		s = handScore(m, ir1, ir2, tm, lead, p, def)
		if pt != nil {
			*pt = parts{ir1, tm, lead, p, def, true}
		}
	}
	if ex != nil {
		ex.Matched, ex.Of, ex.Window = bits.OnesCount64(units), q.of, span
		ex.IRSingle, ex.IRProx, ex.TitleMatch, ex.TitleLead = ir1, m.W[FeatProximity]*ir2, m.W[FeatTitleMatch]*tm, m.W[FeatTitleLead]*lead
		ex.IR = s / (1 + m.Prior*p)
		rank, _ := idx.rank(doc) // damage is reported by tableErr
		ex.Rank, ex.Prior, ex.RankPart = float64(rank), p, ex.IR*m.Prior*p
		ex.feats = f
		ex.Features = map[string]float64{}
		for i, v := range f {
			ex.Features[FeatureNames[i]] = v
		}
	}
	return s, matched
}

// countTypes counts the hits of a posting by weight type (a hit's type
// is in its high byte) and returns the set of types it holds, a bit a
// type. A long posting is counted into four tables in turn: one table's
// counts would each wait for the previous increment of the same type, and
// most hits of a page are of one or two types.
func countTypes(l []byte, counts *[numTypes]int) (present uint32) {
	j := 0
	if len(l) >= 32 {
		var c [4][16]int32
		for ; j+8 <= len(l); j += 8 {
			h := l[j : j+8 : j+8]
			t0, t1, t2, t3 := typeByHigh[h[0]]&15, typeByHigh[h[2]]&15, typeByHigh[h[4]]&15, typeByHigh[h[6]]&15
			c[0][t0]++
			c[1][t1]++
			c[2][t2]++
			c[3][t3]++
			present |= 1<<t0 | 1<<t1 | 1<<t2 | 1<<t3
		}
		for t := range counts {
			counts[t] = int(c[0][t] + c[1][t] + c[2][t] + c[3][t])
		}
	}
	for ; j+1 < len(l); j += 2 {
		t := typeByHigh[l[j]]
		counts[t]++
		present |= 1 << t
	}
	return present
}

// titleLeads reports whether a posting holds a title hit among the
// title's first leadMax places (a title hit's position is its low byte).
func titleLeads(l []byte, leadMax int) bool {
	for j := 0; j+1 < len(l); j += 2 {
		if typeByHigh[l[j]] == TypeTitle && int(l[j+1]) < leadMax {
			return true
		}
	}
	return false
}

// defCount counts a posting's definition hits.
func defCount(l []byte) int {
	n := 0
	for j := 0; j+1 < len(l); j += 2 {
		if typeByHigh[l[j]] == TypeDef {
			n++
		}
	}
	return n
}

// capitalDefs counts a posting's definition hits written with a capital.
func capitalDefs(l []byte) int {
	n := 0
	for j := 0; j+1 < len(l); j += 2 {
		if typeByHigh[l[j]] == TypeDef && l[j]&0x80 != 0 {
			n++
		}
	}
	return n
}

// defPos is a definition hit of a query word: its position, and the
// word's coordination unit.
type defPos struct{ pos, unit uint8 }

// oneEntry reports whether one defined name holds all the query's
// coordination units: their definition hits at consecutive positions (the
// index leaves a position out between two entries; an index built before
// that reads two adjacent entries as one). Positions past the last one a
// hit holds (255) are all the same, and hold no name. at holds up to 64
// hits; a page that defines the words more often than that may be missed.
func oneEntry(at []defPos, q *parsedQuery) bool {
	n := bits.OnesCount64(q.defNeed)
	if n < 2 {
		return true
	}
	slices.SortFunc(at, func(a, b defPos) int { return int(a.pos) - int(b.pos) })
	for s := range at {
		var got uint64
		for _, d := range at[s:] {
			if int(d.pos) >= int(at[s].pos)+n || d.pos == hit.MaxFancyPos {
				break
			}
			got |= 1 << d.unit
		}
		if bits.OnesCount64(got) >= n {
			return true
		}
	}
	return false
}

// oneRun reports whether one emphasised run (with dfn, one of a
// definition's markup) holds all the query's coordination units, as
// oneEntry does for definitions: their emphasis hits at consecutive
// positions, which are the words' plain positions modulo 128 (so a run
// may wrap from 127 to 0).
func oneRun(at []defPos, q *parsedQuery, dfn uint8) bool {
	n := bits.OnesCount64(q.defNeed)
	if n < 2 {
		return dfn == 0 || slices.ContainsFunc(at, func(d defPos) bool { return d.pos&dfn != 0 })
	}
	for _, s := range at {
		if s.pos&dfn != dfn {
			continue
		}
		var got uint64
		for _, d := range at {
			if d.pos&dfn == dfn && (d.pos-s.pos)&(hit.EmphDfn-1) < uint8(n) { // modulo 128
				got |= 1 << d.unit
			}
		}
		if bits.OnesCount64(got) >= n {
			return true
		}
	}
	return false
}

// handScore is the score of the hand weights' model.
func handScore(m *Model, ir1, ir2, tm, lead, p, def float64) float64 {
	return (m.W[FeatText]*ir1 + m.W[FeatProximity]*ir2 + m.W[FeatTitleMatch]*tm + m.W[FeatTitleLead]*lead + m.W[FeatDef]*def) * (1 + m.Prior*p)
}

// proxIDF is the idf proximity weighs for the page of lists.
func proxIDF(lists [][]byte, q *parsedQuery) float64 {
	var wbuf [16]int
	words := wbuf[:0]
	for _, i := range q.seq {
		if !slices.Contains(words, i) {
			words = append(words, i)
		}
	}
	return idfOf(lists, q, words)
}

// idfOf sums the idf of the words the page of lists holds.
func idfOf(lists [][]byte, q *parsedQuery, words []int) float64 {
	idfSum := 0.0
	for _, i := range words {
		if len(lists[i]) > 0 {
			idfSum += q.idf[i]
		}
	}
	return idfSum
}

// proximity is the proximity feature of a page for the query (0 for a
// query of one word), and the window it is made of.
func proximity(lists [][]byte, q *parsedQuery, w *Weights) (float64, int) {
	if len(q.seq) < 2 {
		return 0, 0
	}
	var wbuf [16]int
	words := wbuf[:0]
	for _, i := range q.seq {
		if !slices.Contains(words, i) {
			words = append(words, i)
		}
	}
	span, held := window(lists, words)
	if held < 2 {
		return 0, span
	}
	idfSum := idfOf(lists, q, words)
	// The mean gap between the words, binned as the paper bins the
	// distance of two hits.
	gap := 1 + (span-held)/(held-1)
	return w.Prox[proxBin(gap)] * idfSum, span
}
