package barrel

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"
	"unicode"
)

// Coordination weighs the query's units a page holds by their idf: a
// page's tier is its share of the query's total idf, so a page holding
// the rare word of "Python Enhancement Proposals PEP 617" (617, pep)
// ranks before one holding more of the common words. Pages holding
// every unit still come first, and pages holding the same units tie on
// it (then the score decides). The share is kept as an integer (coordQ
// the whole query) so that the scan compares tiers exactly.

// coordQ is the tier of a page holding every unit of the query.
const coordQ = 1 << 20

// setCoord computes the weight of each coordination unit (n pages
// fetched): the largest idf of its driving words (an OR group's
// alternatives), or a word's in one page for a unit no page holds.
func (q *parsedQuery) setCoord(counted map[int]bool, n float64) {
	q.unitW = [64]float64{}
	for u := range counted {
		w := 0.0
		for i, g := range q.group {
			if g == u && q.driver[i] && !q.neg[i] {
				w = max(w, q.idf[i])
			}
		}
		if w == 0 {
			w = math.Log(1 + (n-0.5)/1.5)
		}
		q.unitW[u&63] += w
	}
	q.unitSum = 0
	q.unitDesc = q.unitDesc[:0]
	for _, w := range q.unitW {
		q.unitSum += w
		if w > 0 {
			q.unitDesc = append(q.unitDesc, w)
		}
	}
	slices.SortFunc(q.unitDesc, func(a, b float64) int { return cmp.Compare(b, a) })
}

// coordTier is the tier of a page holding the units set in units (bit
// u&63 for unit u): the share of the query's idf they hold, times coordQ.
func (q *parsedQuery) coordTier(units uint64) int {
	if q.unitSum <= 0 {
		return 0
	}
	held := 0.0
	for b := units; b != 0; b &= b - 1 { // the set bits alone, in the same order
		held += q.unitW[bits.TrailingZeros64(b)]
	}
	if held >= q.unitSum {
		return coordQ
	}
	return int(math.Floor(coordQ * held / q.unitSum))
}

// needUnits is the fewest units a page must hold to reach tier: no set
// of k units holds more than the k largest weights (with a margin for
// rounding, as the sums run in another order), so a page holding fewer
// driving lists than that cannot reach it.
func (q *parsedQuery) needUnits(tier int) int {
	top := 0.0
	for k, w := range q.unitDesc {
		if coordQ*top*(1+1e-9) >= float64(tier)*q.unitSum {
			return k
		}
		top += w
	}
	return len(q.unitDesc)
}

// spelledOut marks as stop words the query's words that spell out an
// acronym the query also writes in capitals: in "Python Enhancement
// Proposals PEP 617" the words "Python Enhancement Proposals" say again
// what PEP says, and a page naming PEP 617 holds the query without
// them. The words are scored as stop words are (their hits still count),
// but they neither make a page a match nor weigh in its coordination,
// so a page holding the acronym and the rest of the query is not put
// below one that holds the spelt-out words too. An acronym is a word of
// two or more capital letters (as written) whose letters are the first
// letters of as many consecutive words of the query (not counting the
// acronym, an identifier's parts or stop words), and the query must hold
// another word besides the acronym and its words: a page holding only
// the spelt-out words is then no match (stop words make none), and in
// "New York NY" it would be one of the answers.
func spelledOut(terms []queryTerm) {
	var words []int // the terms an expansion can be made of
	for i, t := range terms {
		if !t.part && !t.stop && t.word != "" {
			words = append(words, i)
		}
	}
	for _, a := range words {
		acr := terms[a].word
		if len(acr) < 2 || strings.ToUpper(acr) != acr || strings.ToLower(acr) == acr {
			continue
		}
		if strings.IndexFunc(acr, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 {
			continue
		}
		n := len(acr)
		if len(words) < n+2 {
			continue
		}
		for s := 0; s+n <= len(words); s++ {
			run := words[s : s+n]
			if slices.Contains(run, a) {
				continue
			}
			ok := true
			for j, i := range run {
				w := terms[i].word
				if j > 0 && i != run[j-1]+1 || len(w) < 2 || unicode.ToUpper(rune(w[0])) != rune(acr[j]) {
					ok = false
					break
				}
			}
			if ok {
				for _, i := range run {
					terms[i].stop = true
				}
				break
			}
		}
	}
}
