package warc

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Record types of WARC/1.1.
const (
	TypeWarcinfo     = "warcinfo"
	TypeResponse     = "response"
	TypeResource     = "resource"
	TypeRequest      = "request"
	TypeMetadata     = "metadata"
	TypeRevisit      = "revisit"
	TypeConversion   = "conversion"
	TypeContinuation = "continuation"
)

// Header field names used by this package and its callers.
const (
	FieldType          = "WARC-Type"
	FieldRecordID      = "WARC-Record-ID"
	FieldDate          = "WARC-Date"
	FieldTargetURI     = "WARC-Target-URI"
	FieldIPAddress     = "WARC-IP-Address"
	FieldConcurrentTo  = "WARC-Concurrent-To"
	FieldWarcinfoID    = "WARC-Warcinfo-ID"
	FieldFilename      = "WARC-Filename"
	FieldPayloadDigest = "WARC-Payload-Digest"
	FieldBlockDigest   = "WARC-Block-Digest"
	FieldTruncated     = "WARC-Truncated"
	FieldProfile       = "WARC-Profile"
	// WARC-Refers-To-Target-URI and WARC-Refers-To-Date name the capture a
	// revisit record refers to.
	FieldRefersToTargetURI = "WARC-Refers-To-Target-URI"
	FieldRefersToDate      = "WARC-Refers-To-Date"
	FieldContentType       = "Content-Type"
	FieldContentLength     = "Content-Length"
)

// Content types of HTTP exchange records.
const (
	ContentTypeHTTPRequest  = "application/http;msgtype=request"
	ContentTypeHTTPResponse = "application/http;msgtype=response"
)

// A Field is one named header field. Names compare case-insensitively.
type Field struct {
	Name, Value string
}

// A Header is a record's header fields in their order.
type Header []Field

// Get returns the value of the first field called name, or "".
func (h Header) Get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// Set replaces the value of the first field called name, removing any
// others, or appends the field.
func (h *Header) Set(name, value string) {
	for i, f := range *h {
		if strings.EqualFold(f.Name, name) {
			(*h)[i].Value = value
			h.delFrom(name, i+1)
			return
		}
	}
	*h = append(*h, Field{name, value})
}

// Add appends a field, keeping others of the same name.
func (h *Header) Add(name, value string) { *h = append(*h, Field{name, value}) }

// Del removes every field called name.
func (h *Header) Del(name string) { h.delFrom(name, 0) }

func (h *Header) delFrom(name string, from int) {
	out := (*h)[:from]
	for _, f := range (*h)[from:] {
		if !strings.EqualFold(f.Name, name) {
			out = append(out, f)
		}
	}
	*h = out
}

// A Record is one WARC record. When read, Body yields the content block and
// is valid until the next call to Reader.Next. When written, Body supplies
// the block; the Writer sets Content-Length and the digests.
type Record struct {
	Version string // "WARC/1.1" or "WARC/1.0"; empty means WARC/1.1 when writing
	Header  Header
	Body    io.Reader

	// Offset is where the record starts in its file: the first byte of its
	// gzip member, or of its version line in an uncompressed file. For a
	// record that shares a gzip member with earlier ones it is the member's
	// offset. Set by Reader and ReadAt.
	Offset int64
}

// Type returns WARC-Type.
func (r *Record) Type() string { return r.Header.Get(FieldType) }

// ID returns WARC-Record-ID.
func (r *Record) ID() string { return r.Header.Get(FieldRecordID) }

// TargetURI returns WARC-Target-URI without the angle brackets WARC/1.0
// writers sometimes put around it.
func (r *Record) TargetURI() string {
	u := r.Header.Get(FieldTargetURI)
	if len(u) >= 2 && u[0] == '<' && u[len(u)-1] == '>' {
		u = u[1 : len(u)-1]
	}
	return u
}

// Date returns WARC-Date, or the zero time if it is missing or malformed.
func (r *Record) Date() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, r.Header.Get(FieldDate))
	return t
}

// ContentLength returns the declared length of the content block, -1 if it
// is missing or malformed.
func (r *Record) ContentLength() int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(r.Header.Get(FieldContentLength)), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// HTTPResponse parses the HTTP response held in a response record (or a
// revisit of one). Its Body yields the payload as archived: chunked transfer
// coding removed, Content-Encoding (gzip, br...) still applied, cut short if
// the record is marked WARC-Truncated.
func (r *Record) HTTPResponse() (*http.Response, error) {
	return http.ReadResponse(bufio.NewReader(r.Body), nil)
}

// HTTPRequest parses the HTTP request held in a request record.
func (r *Record) HTTPRequest() (*http.Request, error) {
	return http.ReadRequest(bufio.NewReader(r.Body))
}

// Digest returns the WARC digest of b: "sha1:" and the base-32 SHA-1, the
// form of WARC-Payload-Digest and WARC-Block-Digest.
func Digest(b []byte) string {
	sum := sha1.Sum(b)
	return DigestString(sum[:])
}

// DigestString formats a SHA-1 sum (as from hash.Hash.Sum) as a WARC digest.
func DigestString(sum []byte) string {
	return "sha1:" + base32.StdEncoding.EncodeToString(sum)
}

// NewRecordID returns a fresh "<urn:uuid:...>" record id (a random UUID).
func NewRecordID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return "<urn:uuid:" + string(b[:]) + ">"
}

// FormatDate formats t as a WARC-Date (UTC, second precision: what every
// WARC/1.0 reader accepts).
func FormatDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }
