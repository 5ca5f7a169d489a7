// Package cdxj indexes WARC files as CDXJ, the index pywb and other
// Webrecorder tools replay from: one line a capture,
//
//	SURT-key timestamp {"url":...,"mime":...,"status":...,"digest":...,"length":...,"offset":...,"filename":...}
//
// sorted, so that a replay tool finds a URL's captures by binary search.
// Response, revisit and resource records are indexed, as warcio's
// cdx-index does by default; the fields are computed as warcio computes
// them: mime is the HTTP Content-Type without parameters (warc/revisit for
// a revisit, the record's Content-Type for a resource), status the HTTP
// status as a string, digest the WARC-Payload-Digest without its "sha1:",
// length the record's bytes in the file (its gzip member), filename the
// file's base name. Absent values are left out of the JSON.
package cdxj

import (
	"bufio"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sekitei/crawlkit/pkg/warc"
)

// An Entry is one CDXJ line.
type Entry struct {
	URLKey    string // SURT form of URL
	Timestamp string // WARC-Date as 14 digits
	URL       string
	Mime      string
	Status    string
	Digest    string
	Length    int64
	Offset    int64
	Filename  string
}

// AppendLine appends e as a CDXJ line without its newline. The JSON is
// written as JavaScript's JSON.stringify writes it (warcio's output):
// only quotes, backslashes and control characters are escaped.
func (e *Entry) AppendLine(b []byte) []byte {
	b = append(b, e.URLKey...)
	b = append(b, ' ')
	b = append(b, e.Timestamp...)
	b = append(b, " {"...)
	first := true
	field := func(name, v string) {
		if v == "" {
			return
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, name)
		b = append(b, ':')
		b = appendString(b, v)
	}
	field("url", e.URL)
	field("mime", e.Mime)
	field("status", e.Status)
	field("digest", e.Digest)
	field("length", strconv.FormatInt(e.Length, 10))
	field("offset", strconv.FormatInt(e.Offset, 10))
	field("filename", e.Filename)
	return append(b, '}')
}

func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

var wwwPrefix = regexp.MustCompile(`^(https?://)www\d*\.`)

// SURT returns the key pywb and warcio sort a URL by: scheme and a leading
// www (www2...) dropped, the host's labels reversed and comma-joined, the
// port unless it is the scheme's default, ")", the path, and the query's
// parameters sorted; all lower-cased, the fragment dropped. A URL that is
// not http(s) or does not parse is its own key.
func SURT(raw string) string {
	if !strings.HasPrefix(raw, "http:") && !strings.HasPrefix(raw, "https:") {
		return raw
	}
	lower := strings.ToLower(wwwPrefix.ReplaceAllString(raw, "$1"))
	u, err := url.Parse(lower)
	if err != nil || u.Host == "" {
		return raw
	}
	host := u.Hostname()
	var b strings.Builder
	if strings.Contains(host, ":") {
		b.WriteString("[" + host + "]") // IPv6: no labels to reverse
	} else {
		labels := strings.Split(host, ".")
		slices.Reverse(labels)
		b.WriteString(strings.Join(labels, ","))
	}
	if p := u.Port(); p != "" && !(p == "80" && u.Scheme == "http" || p == "443" && u.Scheme == "https") {
		b.WriteString(":" + p)
	}
	b.WriteString(")")
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		slices.Sort(params)
		b.WriteString("?" + strings.Join(params, "&"))
	}
	return b.String()
}

// IndexFile returns the entries of the WARC file at path. A damaged record
// is skipped and reported to skip (nil: ignored); the records around it
// are indexed.
func IndexFile(path string, skip func(*warc.SkipError)) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r, err := warc.NewReader(f)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(path)
	var out []Entry
	// A record's length runs to the next record or damage, or the end.
	var bounds []int64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		var se *warc.SkipError
		if errors.As(err, &se) {
			bounds = append(bounds, se.Offset)
			if skip != nil {
				skip(se)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		bounds = append(bounds, rec.Offset)
		e, ok := entry(rec)
		if !ok {
			continue
		}
		e.Filename = name
		out = append(out, e)
	}
	bounds = append(bounds, st.Size())
	slices.Sort(bounds)
	for i := range out {
		j, _ := slices.BinarySearch(bounds, out[i].Offset+1)
		out[i].Length = bounds[j] - out[i].Offset
	}
	return out, nil
}

// entry computes a record's entry, but for its file, offset and length.
func entry(rec *warc.Record) (Entry, bool) {
	t := rec.Type()
	if t != warc.TypeResponse && t != warc.TypeRevisit && t != warc.TypeResource {
		return Entry{}, false
	}
	e := Entry{
		URL:       rec.TargetURI(),
		Timestamp: timestamp(rec.Header.Get(warc.FieldDate)),
		Offset:    rec.Offset,
	}
	e.URLKey = SURT(e.URL)
	if d := rec.Header.Get(warc.FieldPayloadDigest); d != "" {
		_, e.Digest, _ = strings.Cut(d, ":")
	}
	if t == warc.TypeResource {
		e.Mime = rec.Header.Get(warc.FieldContentType)
		return e, true
	}
	if t == warc.TypeRevisit {
		e.Mime = "warc/revisit"
	}
	if !strings.HasPrefix(rec.Header.Get(warc.FieldContentType), "application/http") {
		return e, true
	}
	status, ct := httpHead(rec.Body)
	e.Status = status
	if t == warc.TypeResponse {
		e.Mime, _, _ = strings.Cut(ct, ";")
		e.Mime = strings.TrimSpace(e.Mime)
	}
	return e, true
}

// httpHead reads the status code and Content-Type of an HTTP response
// head; a malformed head gives what could be read.
func httpHead(body io.Reader) (status, contentType string) {
	br := bufio.NewReaderSize(io.LimitReader(body, 1<<20), 4096)
	line, err := br.ReadString('\n')
	if err != nil && line == "" {
		return "", ""
	}
	if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[0], "HTTP/") {
		status = f[1]
	}
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" || err != nil && line == "" {
			return status, contentType
		}
		if name, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(name), "Content-Type") && contentType == "" {
			contentType = strings.TrimSpace(v)
		}
		if err != nil {
			return status, contentType
		}
	}
}

func timestamp(date string) string {
	var b []byte
	for i := 0; i < len(date) && len(b) < 14; i++ {
		if c := date[i]; c >= '0' && c <= '9' {
			b = append(b, c)
		}
	}
	return string(b)
}

// Sort orders entries as their lines sort (bytewise, as pywb's indexer
// and LC_ALL=C sort do).
func Sort(es []Entry) {
	type keyed struct {
		line string
		e    Entry
	}
	ks := make([]keyed, len(es))
	for i := range es {
		ks[i] = keyed{string(es[i].AppendLine(nil)), es[i]}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return strings.Compare(a.line, b.line) })
	for i := range ks {
		es[i] = ks[i].e
	}
}

// Write writes entries as sorted CDXJ lines.
func Write(w io.Writer, es []Entry) error {
	Sort(es)
	bw := bufio.NewWriter(w)
	var line []byte
	for i := range es {
		line = es[i].AppendLine(line[:0])
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
