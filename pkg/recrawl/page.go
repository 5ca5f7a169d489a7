package recrawl

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unsafe"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// Day is the unit of rates (per day) and of times inside the package.
const Day = 24 * time.Hour

// PageOptions says how page records are read.
type PageOptions struct {
	Now         time.Time // the ranking time; last_fetch after it is an error
	WeightField string    // "weight" by default; "importance" for opic's
	// DefaultWeight is used when the weight field is missing (default 1).
	DefaultWeight float64
	// DefaultChangeRate (per day) is used when change_rate is missing; 0
	// makes a missing change_rate an error.
	DefaultChangeRate float64
}

// A PageInput is one page as read from its record.
type PageInput struct {
	// URL and Host may share the record's line (see record.StringView):
	// clone them to keep them past it.
	URL   string
	Host  string
	W     float64 // weight, > 0
	Delta float64 // change rate per day, > 0
	// Tau is the time since the last fetch in days; +Inf if the page was
	// never fetched (no last_fetch).
	Tau float64
	// HostRate is the record's host_rate (per day), 0 if it has none.
	HostRate float64
}

// ParsePage reads the fields rank, solve and explain need from a record:
// url, host (or the url's), the weight field, change_rate, last_fetch and
// host_rate. Every problem is an error naming the field, so that the tool
// reports the line and goes on; no NaN or infinity gets through.
func ParsePage(rec *record.Record, opt *PageOptions) (PageInput, error) {
	var f pageFields
	f[fURL], _ = rec.Raw("url")
	f[fHost], _ = rec.Raw("host")
	f[fWeight] = rawOrEmpty(rec, weightField(opt))
	f[fChangeRate] = rawOrEmpty(rec, "change_rate")
	f[fLastFetch] = rawOrEmpty(rec, "last_fetch")
	f[fHostRate] = rawOrEmpty(rec, "host_rate")
	return parsePage(&f, nil, opt)
}

// rawOrEmpty is rec.Raw with nil only for a missing key.
func rawOrEmpty(rec *record.Record, key string) []byte {
	raw, ok := rec.Raw(key)
	if ok && raw == nil {
		return []byte{}
	}
	return raw
}

func weightField(opt *PageOptions) string {
	if opt.WeightField == "" {
		return "weight"
	}
	return opt.WeightField
}

// pageFields are the raw values of a page's fields (nil: missing), from a
// Record (ParsePage) or a record.Picker (PageReader).
type pageFields [6][]byte

const (
	fURL = iota
	fHost
	fWeight
	fChangeRate
	fLastFetch
	fHostRate
)

// pageNums are the numbers a record.Picker read as it scanned a page's
// fields (ok[k]: f[k] is a bare number, v[k] its value as RawFloat gives).
type pageNums struct {
	v  [6]float64
	ok [6]bool
	to *Pages // touched with the page's host (PageReader.AddsTo)
}

// float is record.RawFloat of field k, from n where the Picker read it.
func (n *pageNums) float(key string, f *pageFields, k int) (float64, bool, error) {
	if n != nil && n.ok[k] {
		return n.v[k], true, nil
	}
	return record.RawFloat(key, f[k])
}

func parsePage(f *pageFields, n *pageNums, opt *PageOptions) (PageInput, error) {
	p := PageInput{Tau: math.Inf(1)}
	p.URL, _ = record.RawString(f[fURL]) // not kept: no copy
	p.Host = pageHost(f[fHost], p.URL)
	if p.Host == "" {
		return p, fmt.Errorf("no host in url %q", clip(p.URL))
	}
	if n != nil && n.to != nil {
		n.to.touch(p.Host)
	}
	wf := weightField(opt)
	w, ok, err := n.float(wf, f, fWeight)
	switch {
	case err != nil:
		return p, err
	case !ok:
		w = opt.DefaultWeight
		if w == 0 {
			w = 1
		}
	case w <= 0:
		return p, fmt.Errorf("field %q: weight must be positive, got %v", wf, w)
	}
	p.W = w
	d, ok, err := n.float("change_rate", f, fChangeRate)
	switch {
	case err != nil:
		return p, err
	case !ok:
		if opt.DefaultChangeRate <= 0 {
			return p, errors.New(`missing "change_rate" (changes per day; run recrawl estimate, or give --default-change-rate)`)
		}
		d = opt.DefaultChangeRate
	case d <= 0:
		return p, fmt.Errorf(`field "change_rate": must be positive (changes per day), got %v`, d)
	case d > 1e6:
		return p, fmt.Errorf(`field "change_rate": %v changes per day is not plausible`, d)
	}
	p.Delta = d
	if tau, ok := tauOf(f[fLastFetch], opt.Now); ok {
		p.Tau = tau
	} else if last, ok, err := record.RawTime("last_fetch", f[fLastFetch]); err != nil {
		return p, err
	} else if ok {
		if last.After(opt.Now) {
			return p, fmt.Errorf(`field "last_fetch": %s is in the future (now is %s)`,
				last.UTC().Format(time.RFC3339), opt.Now.UTC().Format(time.RFC3339))
		}
		p.Tau = float64(opt.Now.Sub(last)) / float64(Day)
	}
	if k, ok, err := n.float("host_rate", f, fHostRate); err != nil {
		return p, err
	} else if ok {
		if k <= 0 {
			return p, fmt.Errorf(`field "host_rate": must be positive (crawls per day), got %v`, k)
		}
		p.HostRate = k
	}
	return p, nil
}

// tauOf is the days from a last_fetch to now, as parsePage's general way
// computes them from RawTime and now.Sub, for the common raw value that
// record.RawUnixTime reads, not after now and less than 2^33 seconds
// (272 years) before it, where Sub cannot saturate; ok is false for any
// other value, left to the general way.
func tauOf(raw []byte, now time.Time) (float64, bool) {
	sec, nsec, ok := record.RawUnixTime(raw)
	if !ok {
		return 0, false
	}
	ds, dns := now.Unix()-sec, now.Nanosecond()-nsec
	if ds < 0 || ds == 0 && dns < 0 || ds >= 1<<33 {
		return 0, false
	}
	return float64(time.Duration(ds)*time.Second+time.Duration(dns)) / float64(Day), true
}

// A PageReader parses page lines one after another, as record.ParseView
// and ParsePage would, with the same pages and the same errors, but
// without a Record for the common line: a record.Picker takes the six
// fields from the line in the pass that checks it (reading the records
// was most of recrawl rank's time). Any other line (a plain URL, bytes
// that are not UTF-8, an escaped key, bad JSON) goes the general way.
type PageReader struct {
	opt    *PageOptions
	picker *record.Picker
	rec    record.Record
	to     *Pages // the Pages the pages go to (AddsTo); nil if not said
}

// AddsTo says that the pages read are added to ps, in the order read:
// Read then starts fetching each page's host entry of ps as soon as it
// knows the host, so that Add finds it in the cache. It changes no page.
func (pr *PageReader) AddsTo(ps *Pages) { pr.to = ps }

// NewPageReader returns a PageReader with the given options.
func NewPageReader(opt *PageOptions) *PageReader {
	return &PageReader{opt: opt, picker: record.NewPicker("url", "host", weightField(opt), "change_rate", "last_fetch", "host_rate")}
}

// Read parses one line. A line that is not a record gives ParseView's
// error, one that is not a page ParsePage's. URL and Host of the page may
// be views of line (see PageInput).
func (pr *PageReader) Read(line []byte) (PageInput, error) {
	if pr.to != nil {
		// The host's slot comes in while the line is read.
		pr.to.hosts.prefetch(leadingHost(line))
	}
	if pr.picker.Pick(line) {
		var f pageFields
		var n pageNums
		for k := range f {
			f[k] = pr.picker.Value(k)
			n.v[k], n.ok[k] = pr.picker.Number(k)
		}
		n.to = pr.to
		return parsePage(&f, &n, pr.opt)
	}
	if err := record.ParseView(&pr.rec, line); err != nil {
		return PageInput{}, err
	}
	return ParsePage(&pr.rec, pr.opt)
}

// leadingHost is the host of a line that starts {"url":"http://host or
// {"url":"https://host, as plainHost would take it if the URL goes on
// well, or "". It is only a hint, to prefetch the host's slot before the
// line is read: a wrong one costs nothing but the prefetch.
func leadingHost(line []byte) string {
	const pre = `{"url":"http`
	if len(line) < len(pre)+5 || string(line[:len(pre)]) != pre {
		return ""
	}
	rest := line[len(pre):]
	if rest[0] == 's' {
		rest = rest[1:]
	}
	if len(rest) < 4 || string(rest[:3]) != "://" {
		return ""
	}
	rest = rest[3:]
	n := 0
	for n < len(rest) && n <= hostKeyMax && hostByte[rest[n]] == hostName {
		n++
	}
	if n == 0 || n > hostKeyMax {
		return ""
	}
	return unsafe.String(&rest[0], n)
}

// pageHost is record.RecordHost for a url given as a view.
func pageHost(hostRaw []byte, url string) string {
	if h, ok := record.RawString(hostRaw); ok && h != "" {
		return strings.ToLower(h)
	}
	if h, ok := plainHost(url); ok {
		return h
	}
	h, err := urlx.Host(url)
	if err != nil {
		return ""
	}
	return h
}

// plainHost is urlx.Host for the common URL whose host needs no
// normalizing: "http://" or "https://", a host of lower-case letters,
// digits, '-' and inner '.' (no userinfo, port, percent or IDN), then '/',
// '?', '#' or the end, and no control character anywhere. ok is false for
// any other URL, left to urlx.Host; where ok, the host is urlx.Host's.
func plainHost(url string) (host string, ok bool) {
	var rest string
	switch {
	case len(url) > 8 && url[:8] == "https://":
		rest = url[8:]
	case len(url) > 7 && url[:7] == "http://":
		rest = url[7:]
	default:
		return "", false
	}
	end := len(rest)
	for i := 0; i < len(rest); i++ {
		switch hostByte[rest[i]] {
		case hostName:
			continue
		case hostEnd:
			end = i
		default:
			return "", false
		}
		break
	}
	if end == 0 || rest[end-1] == '.' {
		return "", false
	}
	if urlx.HasControl(rest[end:]) {
		return "", false
	}
	return rest[:end], true
}

// hostByte classes the bytes of a URL for plainHost: those of a plain
// host name, those that end it, and the rest (0).
var hostByte = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = hostName
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = hostName
	}
	t['-'], t['.'] = hostName, hostName
	t['/'], t['?'], t['#'] = hostEnd, hostEnd, hostEnd
	return t
}()

const (
	hostName = 1 + iota
	hostEnd
)

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}
