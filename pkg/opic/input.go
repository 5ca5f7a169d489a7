package opic

import (
	"bytes"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// An Item is one input line: an edge, a page, or a fetch record.
type Item struct {
	Kind  Kind
	URL   string   // the page (the edge's source)
	Links []string // the edge's target, or the record's links
	// HasLinks tells whether Links is known: false for a record without
	// "links" (a failed fetch, a 304 Not Modified), whose page keeps the
	// links it had.
	HasLinks bool
	// FetchedAt is the record's fetched_at; zero if it has none.
	FetchedAt time.Time
	// Record is the parsed record of a RecordItem or PageItem.
	Record *record.Record
}

// Kind tells what a line holds.
type Kind int

// The kinds of input line.
const (
	EdgeItem   Kind = iota // "src<TAB>dst"
	PageItem               // a plain URL line: a page, no links known
	RecordItem             // a JSON record; with "links" (or a redirect's "final_url") its links
)

// ParseLine reads one input line. Lines starting with '{' are records,
// lines with a tab are edges, other lines are pages (URL records).
func ParseLine(line []byte) (Item, error) {
	// Trim spaces but not tabs: "\tb" is an edge with no source.
	t := bytes.Trim(line, " \r\n\v\f")
	if len(t) > 0 && t[0] != '{' && bytes.IndexByte(t, '\t') >= 0 {
		return parseEdge(t)
	}
	rec, err := record.Parse(line)
	if err != nil {
		return Item{}, err
	}
	it := Item{Kind: PageItem, URL: rec.URL(), Record: rec}
	if len(t) > 0 && t[0] == '{' {
		it.Kind = RecordItem
	}
	if it.URL == "" {
		return Item{}, errors.New(`record has no "url"`)
	}
	if it.Kind == PageItem {
		// A plain line is a page only if it is a URL: binary or stray text
		// is an error for its line, not a page of the graph.
		if err := checkText(t); err != nil {
			return Item{}, fmt.Errorf("not a URL line: %v", err)
		}
		if _, err := urlx.Split(it.URL); err != nil {
			return Item{}, fmt.Errorf("not a URL line: %q: %v", clip(it.URL), err)
		}
		return it, nil
	}
	if rec.Has("links") && !rec.IsNull("links") {
		it.HasLinks = true
		if _, err := rec.Decode("links", &it.Links); err != nil {
			return Item{}, fmt.Errorf(`"links" is not a list of strings: %v`, err)
		}
		// Empty strings are not pages.
		k := 0
		for _, l := range it.Links {
			if l != "" {
				it.Links[k] = l
				k++
			}
		}
		it.Links = it.Links[:k]
	} else if f, ok := rec.String("final_url"); ok && f != "" && f != it.URL {
		it.Links = []string{f} // a redirect is the page's one link
		it.HasLinks = true
	}
	if rec.Has("fetched_at") && !rec.IsNull("fetched_at") {
		ft, _, err := rec.Time("fetched_at")
		if err != nil {
			return Item{}, fmt.Errorf(`bad "fetched_at": %v`, err)
		}
		it.FetchedAt = ft
	}
	return it, nil
}

func parseEdge(t []byte) (Item, error) {
	src, dst, _ := bytes.Cut(t, []byte{'\t'})
	if bytes.IndexByte(dst, '\t') >= 0 {
		return Item{}, fmt.Errorf("edge line has %d fields, want src<TAB>dst", bytes.Count(t, []byte{'\t'})+1)
	}
	src, dst = bytes.TrimSpace(src), bytes.TrimSpace(dst)
	if len(src) == 0 || len(dst) == 0 {
		return Item{}, errors.New("edge line with an empty source or target, want src<TAB>dst")
	}
	// Edge ends may be any names ("a<TAB>b"), but text: binary is an error.
	if err := checkText(src); err != nil {
		return Item{}, fmt.Errorf("edge source: %v", err)
	}
	if err := checkText(dst); err != nil {
		return Item{}, fmt.Errorf("edge target: %v", err)
	}
	return Item{Kind: EdgeItem, URL: string(src), Links: []string{string(dst)}, HasLinks: true}, nil
}

// checkText rejects what cannot be a page's name: invalid UTF-8 and control
// characters.
func checkText(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("invalid UTF-8 (binary input?)")
	}
	for i, r := range string(b) {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return fmt.Errorf("control character %U at byte %d (binary input?)", r, i)
		}
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// Host returns the host the item is sharded by: the record's (see
// record.RecordHost) or that of the edge's source; "" if none.
func (it Item) Host() string {
	if it.Record != nil {
		return record.RecordHost(it.Record)
	}
	h, err := urlx.Host(it.URL)
	if err != nil {
		return ""
	}
	return h
}
