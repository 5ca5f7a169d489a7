package recrawl

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

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
	// URL and Host may share the record's line (see record.StringView),
	// or, from a PageReader, its buffer until its next Read: clone them
	// to keep them.
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
	p := PageInput{Tau: math.Inf(1)}
	p.URL, _ = rec.StringView("url") // not kept: no copy
	p.Host = pageHost(rawOrEmpty(rec, "host"), p.URL)
	if p.Host == "" {
		return p, noHost(p.URL)
	}
	wf := weightField(opt)
	w, ok, err := record.RawFloat(wf, rawOrEmpty(rec, wf))
	if p.W, err = checkWeight(wf, w, ok, err, opt); err != nil {
		return p, err
	}
	d, ok, err := record.RawFloat("change_rate", rawOrEmpty(rec, "change_rate"))
	if p.Delta, err = checkChangeRate(d, ok, err, opt); err != nil {
		return p, err
	}
	last := rawOrEmpty(rec, "last_fetch")
	if tau, ok := tauOf(last, opt.Now); ok {
		p.Tau = tau
	} else if p.Tau, err = lastFetchTau(last, opt.Now); err != nil {
		return p, err
	}
	k, ok, err := record.RawFloat("host_rate", rawOrEmpty(rec, "host_rate"))
	p.HostRate, err = checkHostRate(k, ok, err)
	return p, err
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

func noHost(url string) error { return fmt.Errorf("no host in url %q", clip(url)) }

// checkWeight gives the page's weight from the weight field's RawFloat.
func checkWeight(wf string, w float64, ok bool, err error, opt *PageOptions) (float64, error) {
	switch {
	case err != nil:
		return 0, err
	case !ok:
		if w = opt.DefaultWeight; w == 0 {
			w = 1
		}
	case w <= 0:
		return 0, fmt.Errorf("field %q: weight must be positive, got %v", wf, w)
	}
	return w, nil
}

// checkChangeRate gives the page's change rate from change_rate's RawFloat.
func checkChangeRate(d float64, ok bool, err error, opt *PageOptions) (float64, error) {
	switch {
	case err != nil:
		return 0, err
	case !ok:
		if opt.DefaultChangeRate <= 0 {
			return 0, errors.New(`missing "change_rate" (changes per day; run recrawl estimate, or give --default-change-rate)`)
		}
		d = opt.DefaultChangeRate
	case d <= 0:
		return 0, fmt.Errorf(`field "change_rate": must be positive (changes per day), got %v`, d)
	case d > 1e6:
		return 0, fmt.Errorf(`field "change_rate": %v changes per day is not plausible`, d)
	}
	return d, nil
}

// lastFetchTau is the page's tau from a last_fetch tauOf does not take:
// +Inf if it is missing or null.
func lastFetchTau(raw []byte, now time.Time) (float64, error) {
	last, ok, err := record.RawTime("last_fetch", raw)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return math.Inf(1), nil
	case last.After(now):
		return 0, fmt.Errorf(`field "last_fetch": %s is in the future (now is %s)`,
			last.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return float64(now.Sub(last)) / float64(Day), nil
}

// checkHostRate gives the page's host rate (0: none) from host_rate's
// RawFloat.
func checkHostRate(k float64, ok bool, err error) (float64, error) {
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return 0, nil
	case k <= 0:
		return 0, fmt.Errorf(`field "host_rate": must be positive (crawls per day), got %v`, k)
	}
	return k, nil
}

// tauOf is the days from a last_fetch to now, as lastFetchTau computes
// them from RawTime and now.Sub, for the common raw value that
// record.RawUnixTime reads (see tauAt); ok is false for any other value,
// left to lastFetchTau.
func tauOf(raw []byte, now time.Time) (float64, bool) {
	sec, nsec, ok := record.RawUnixTime(raw)
	if !ok {
		return 0, false
	}
	return tauAt(sec, nsec, now)
}

// tauAt is tauOf for a time given as Unix seconds and nanoseconds: ok
// where it is not after now and less than 2^33 seconds (272 years) before
// it, where Sub cannot saturate.
func tauAt(sec int64, nsec int, now time.Time) (float64, bool) {
	ds, dns := now.Unix()-sec, now.Nanosecond()-nsec
	if ds < 0 || ds == 0 && dns < 0 || ds >= 1<<33 {
		return 0, false
	}
	return float64(time.Duration(ds)*time.Second+time.Duration(dns)) / float64(Day), true
}

// A PageReader parses page lines one after another, as record.ParseView
// and ParsePage would, with the same pages and the same errors, but
// without a Record for the common line: a record.FieldScanner takes the
// six fields from the line in the one pass that checks it, with the
// numbers, the last fetch and the url's host read as it goes (reading
// the records was most of recrawl rank's time). Any other line (a plain
// URL, bytes that are not UTF-8, an escaped key, bad JSON) goes the
// general way.
type PageReader struct {
	opt  *PageOptions
	scan *record.FieldScanner
	wf   string // the weight field
	rec  record.Record
	to   *Pages // the Pages the pages go to (AddsTo); nil if not said
}

// AddsTo says that the pages read are added to ps, in the order read:
// Read then starts fetching each page's host entry of ps as soon as the
// scan of the url has read the host (record.FieldScanner.HostSeen), so
// that Add finds it in the cache. It changes no page.
func (pr *PageReader) AddsTo(ps *Pages) {
	pr.to = ps
	pr.scan.HostSeen = ps.hosts.prefetch
}

// The fields of a PageReader's scanner, by index.
const (
	fURL = iota
	fHost
	fWeight
	fChangeRate
	fLastFetch
	fHostRate
)

// NewPageReader returns a PageReader with the given options.
func NewPageReader(opt *PageOptions) *PageReader {
	wf := weightField(opt)
	return &PageReader{opt: opt, wf: wf, scan: record.NewFieldScanner(
		record.Field{Key: "url"}, record.Field{Key: "host"}, record.Field{Key: wf, Kind: record.NumberField},
		record.Field{Key: "change_rate", Kind: record.NumberField}, record.Field{Key: "last_fetch", Kind: record.TimeField},
		record.Field{Key: "host_rate", Kind: record.NumberField})}
}

// Read parses one line. A line that is not a record gives ParseView's
// error, one that is not a page ParsePage's. URL and Host of the page may
// be views of line, or of the reader's buffer until the next Read (see
// PageInput).
func (pr *PageReader) Read(line []byte) (PageInput, error) {
	s := pr.scan
	if !s.Scan(line) {
		if err := record.ParseView(&pr.rec, line); err != nil {
			return PageInput{}, err
		}
		return ParsePage(&pr.rec, pr.opt)
	}
	p := PageInput{URL: s.URL()}
	if h, ok := s.Host(); ok && s.Value(fHost) == nil {
		p.Host = h // read in the url's pass
	} else if p.Host = pageHost(s.Value(fHost), p.URL); p.Host == "" {
		return p, noHost(p.URL)
	}
	if pr.to != nil {
		pr.to.touch(p.Host)
	}
	var err error
	w, ok := s.Number(fWeight)
	if !ok {
		w, ok, err = record.RawFloat(pr.wf, s.Value(fWeight))
	}
	if p.W, err = checkWeight(pr.wf, w, ok, err, pr.opt); err != nil {
		return p, err
	}
	d, ok := s.Number(fChangeRate)
	if !ok {
		d, ok, err = record.RawFloat("change_rate", s.Value(fChangeRate))
	}
	if p.Delta, err = checkChangeRate(d, ok, err, pr.opt); err != nil {
		return p, err
	}
	if sec, nsec, ok := s.UnixTime(fLastFetch); ok {
		p.Tau, ok = tauAt(sec, nsec, pr.opt.Now)
		if !ok {
			p.Tau, err = lastFetchTau(s.Value(fLastFetch), pr.opt.Now)
		}
	} else {
		p.Tau, err = lastFetchTau(s.Value(fLastFetch), pr.opt.Now)
	}
	if err != nil {
		return p, err
	}
	if k, ok := s.Number(fHostRate); ok {
		p.HostRate, err = checkHostRate(k, ok, nil)
	} else {
		k, ok, err = record.RawFloat("host_rate", s.Value(fHostRate))
		p.HostRate, err = checkHostRate(k, ok, err)
	}
	return p, err
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
