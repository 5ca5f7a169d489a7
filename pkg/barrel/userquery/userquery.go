// Package userquery checks a query as a person or a query log gave it,
// before the searcher sees it: invalid UTF-8 is replaced, and a query is
// clipped to MaxTerms terms and MaxBytes bytes, so that no line of a batch
// (a pasted page, a binary file) costs more than a bounded query. Each
// change is reported as a Problem, for the note a tool prints naming the
// line, and for --strict.
//
// A term here is a run of letters, digits and combining marks: an upper
// bound of the words any analysis of the searcher makes of it (an
// identifier such as os.path.join counts as three), so the clip does not
// depend on the analysis the index was built with.
package userquery

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTerms is the most terms a query keeps; the rest is dropped. A query
// of more words is a pasted text, not a question (web search engines
// stop at a similar number: Google at 32 words).
const MaxTerms = 32

// MaxBytes is the most bytes a query keeps (cut at a character boundary):
// it bounds a query of a few very long terms.
const MaxBytes = 1024

// Query is a checked query.
type Query struct {
	Text     string   // what to search
	Terms    int      // terms in Text
	Problems []string // what was wrong with the query as given, if anything
}

// OK reports whether the query was searchable as given.
func (q Query) OK() bool { return len(q.Problems) == 0 }

// Check returns raw made safe to search, with what was changed.
func Check(raw string) Query {
	var q Query
	if !utf8.ValidString(raw) {
		raw = strings.ToValidUTF8(raw, "\uFFFD")
		q.Problems = append(q.Problems, "invalid UTF-8 replaced by U+FFFD")
	}
	text, terms, total := clip(raw)
	if total > MaxTerms {
		q.Problems = append(q.Problems, fmt.Sprintf("%d terms, clipped to the first %d", total, MaxTerms))
	} else if len(text) < len(strings.TrimSpace(raw)) {
		q.Problems = append(q.Problems, fmt.Sprintf("%d bytes, clipped to %d", len(raw), MaxBytes))
	}
	q.Text, q.Terms = text, terms
	switch {
	case strings.TrimSpace(raw) == "":
		q.Problems = append(q.Problems, "empty query")
	case terms == 0:
		q.Problems = append(q.Problems, "no words, only punctuation or symbols")
	}
	return q
}

// clip returns s up to the end of its MaxTerms-th term and at most
// MaxBytes long, trimmed; the terms kept; and the terms of all of s.
func clip(s string) (text string, kept, total int) {
	end := len(s)
	inTerm := false
	for i, r := range s {
		term := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if term && !inTerm {
			total++
			if total == MaxTerms+1 && end == len(s) {
				end = i
			}
		}
		if i+utf8.RuneLen(r) > MaxBytes && end > i {
			end = i
		}
		if term && i < end {
			if !inTerm {
				kept++
			}
		}
		inTerm = term
	}
	return strings.TrimSpace(s[:end]), kept, total
}
