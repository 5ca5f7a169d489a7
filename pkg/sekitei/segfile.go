package sekitei

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sekitei/crawlkit/pkg/record"
)

// TSVHeader is the header line of the segments table.
const TSVHeader = "host\tsegment\tregex\turls\tgood\tgood_share\tquota"

// AppendTSV appends the segment as a row of the segments table.
func (s *Segment) AppendTSV(b []byte) []byte {
	b = append(b, s.Host...)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(s.ID), 10)
	b = append(b, '\t')
	b = append(b, s.Regex...)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(s.URLs), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(s.Good), 10)
	b = append(b, '\t')
	b = strconv.AppendFloat(b, s.GoodShare, 'f', -1, 64)
	b = append(b, '\t')
	return strconv.AppendInt(b, int64(s.Quota), 10)
}

// AppendJSON appends the segment as one JSON object (no newline).
func (s *Segment) AppendJSON(b []byte) []byte {
	b = append(b, `{"host":`...)
	b = record.AppendString(b, s.Host)
	b = append(b, `,"segment":`...)
	b = strconv.AppendInt(b, int64(s.ID), 10)
	b = append(b, `,"regex":`...)
	b = record.AppendString(b, s.Regex)
	b = append(b, `,"urls":`...)
	b = strconv.AppendInt(b, int64(s.URLs), 10)
	b = append(b, `,"good":`...)
	b = strconv.AppendInt(b, int64(s.Good), 10)
	b = append(b, `,"good_share":`...)
	b = record.AppendFloat(b, s.GoodShare)
	b = append(b, `,"quota":`...)
	b = strconv.AppendInt(b, int64(s.Quota), 10)
	if len(s.Features) > 0 {
		b = append(b, `,"features":[`...)
		for i, f := range s.Features {
			if i > 0 {
				b = append(b, ',')
			}
			b = record.AppendString(b, f)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// A SegmentsError is a bad line of a segments file.
type SegmentsError struct {
	Line int
	Err  error
}

func (e *SegmentsError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// ReadSegments reads a segments file, as `sekitei segments` writes it in
// NDJSON or TSV (with or without header), into sites by host. Each host's
// segments are put in order of their ids; a host whose last segment is not
// the rest segment gets one, so every URL of a known host has a segment.
// Any bad line makes the whole file refused: segments half read would assign
// URLs to the wrong segments.
func ReadSegments(r io.Reader) (map[string]*Site, error) {
	return ReadSegmentsFunc(r, nil)
}

// ReadSegmentsFunc is ReadSegments for tools that go on after a bad line:
// each bad line is given to bad, and skipped if bad returns nil. A nil bad
// refuses the file at its first bad line.
func ReadSegmentsFunc(r io.Reader, bad func(*SegmentsError) error) (map[string]*Site, error) {
	if bad == nil {
		bad = func(e *SegmentsError) error { return e }
	}
	sites := map[string]*Site{}
	ids := map[string]map[int]bool{}
	lr := record.NewLineReader(r)
	for {
		line, n, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || n == 1 && string(line) == TSVHeader {
			continue
		}
		seg, err := parseSegmentLine(line)
		if err == nil && ids[seg.Host][seg.ID] {
			err = fmt.Errorf("host %q has segment %d twice", seg.Host, seg.ID)
		}
		if err != nil {
			if err := bad(&SegmentsError{n, err}); err != nil {
				return nil, err
			}
			continue
		}
		if ids[seg.Host] == nil {
			ids[seg.Host] = map[int]bool{}
			sites[seg.Host] = &Site{Host: seg.Host}
		}
		ids[seg.Host][seg.ID] = true
		sites[seg.Host].Segments = append(sites[seg.Host].Segments, seg)
	}
	if len(sites) == 0 {
		return nil, errors.New("no segments in the file")
	}
	for _, site := range sites {
		sort.SliceStable(site.Segments, func(a, b int) bool { return site.Segments[a].ID < site.Segments[b].ID })
		last := site.Segments[len(site.Segments)-1]
		if last.Regex != RestRegex {
			m, _ := newMatcher(RestRegex)
			site.Segments = append(site.Segments, Segment{Host: site.Host, ID: last.ID + 1, Regex: RestRegex, m: m})
		}
	}
	return sites, nil
}

func parseSegmentLine(line []byte) (Segment, error) {
	var seg Segment
	if !utf8.Valid(line) {
		return seg, errors.New("not valid UTF-8")
	}
	if line[0] == '{' {
		var raw struct {
			Host      *string  `json:"host"`
			ID        *int     `json:"segment"`
			Regex     *string  `json:"regex"`
			URLs      int      `json:"urls"`
			Good      int      `json:"good"`
			GoodShare float64  `json:"good_share"`
			Quota     int      `json:"quota"`
			Features  []string `json:"features"`
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			return seg, fmt.Errorf("not a segment record: %v", err)
		}
		if raw.Host == nil || raw.ID == nil || raw.Regex == nil {
			return seg, errors.New(`a segment record needs "host", "segment" and "regex"`)
		}
		seg = Segment{Host: *raw.Host, ID: *raw.ID, Regex: *raw.Regex, URLs: raw.URLs, Good: raw.Good,
			GoodShare: raw.GoodShare, Quota: raw.Quota, Features: raw.Features}
	} else {
		cols := strings.Split(string(line), "\t")
		if len(cols) != 7 {
			return seg, fmt.Errorf("want 7 tab-separated columns (%s), got %d", strings.ReplaceAll(TSVHeader, "\t", " "), len(cols))
		}
		seg.Host, seg.Regex = cols[0], cols[2]
		var err error
		ints := []*int{&seg.ID, &seg.URLs, &seg.Good, &seg.Quota}
		for i, col := range []string{cols[1], cols[3], cols[4], cols[6]} {
			if *ints[i], err = strconv.Atoi(col); err != nil {
				return seg, fmt.Errorf("column %d: not an integer: %q", []int{2, 4, 5, 7}[i], col)
			}
		}
		if seg.GoodShare, err = strconv.ParseFloat(cols[5], 64); err != nil || math.IsNaN(seg.GoodShare) {
			return seg, fmt.Errorf("column 6: not a number: %q", cols[5])
		}
	}
	switch {
	case seg.Host == "":
		return seg, errors.New("empty host")
	case seg.ID < 0:
		return seg, fmt.Errorf("negative segment id %d", seg.ID)
	case seg.URLs < 0 || seg.Good < 0 || seg.Quota < 0:
		return seg, errors.New("negative count")
	case seg.Regex == "":
		return seg, errors.New("empty regex")
	}
	m, err := newMatcher(seg.Regex)
	if err != nil {
		return seg, fmt.Errorf("regex %q does not compile: %v", seg.Regex, err)
	}
	seg.m = m
	return seg, nil
}

// SegmentOf returns the segment a URL falls into among sites, or nil when
// its host has no segments; err is set for a URL that is not absolute
// http(s).
func SegmentOf(sites map[string]*Site, rawURL string) (*Segment, error) {
	p, err := splitURL(rawURL)
	if err != nil {
		return nil, err
	}
	site := sites[p.host]
	if site == nil {
		return nil, nil
	}
	if i := site.match(p.subject); i < len(site.Segments) {
		return &site.Segments[i], nil
	}
	return nil, nil
}
