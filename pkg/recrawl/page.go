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
	p := PageInput{Tau: math.Inf(1)}
	p.URL, _ = rec.StringView("url") // not kept: no copy
	p.Host = pageHost(rec, p.URL)
	if p.Host == "" {
		return p, fmt.Errorf("no host in url %q", clip(p.URL))
	}
	wf := opt.WeightField
	if wf == "" {
		wf = "weight"
	}
	w, ok, err := rec.Float(wf)
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
	d, ok, err := rec.Float("change_rate")
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
	if last, ok, err := rec.Time("last_fetch"); err != nil {
		return p, err
	} else if ok {
		if last.After(opt.Now) {
			return p, fmt.Errorf(`field "last_fetch": %s is in the future (now is %s)`,
				last.UTC().Format(time.RFC3339), opt.Now.UTC().Format(time.RFC3339))
		}
		p.Tau = float64(opt.Now.Sub(last)) / float64(Day)
	}
	if k, ok, err := rec.Float("host_rate"); err != nil {
		return p, err
	} else if ok {
		if k <= 0 {
			return p, fmt.Errorf(`field "host_rate": must be positive (crawls per day), got %v`, k)
		}
		p.HostRate = k
	}
	return p, nil
}

// pageHost is record.RecordHost for a url given as a view.
func pageHost(rec *record.Record, url string) string {
	if h, ok := rec.StringView("host"); ok && h != "" {
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
		c := rest[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' {
			continue
		}
		if c == '/' || c == '?' || c == '#' {
			end = i
			break
		}
		return "", false
	}
	if end == 0 || rest[end-1] == '.' {
		return "", false
	}
	for i := end; i < len(rest); i++ {
		if c := rest[i]; c < ' ' || c == 0x7f {
			return "", false
		}
	}
	return rest[:end], true
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}
