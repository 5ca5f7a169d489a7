package hostrate

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrRetryAfter is wrapped by every complaint of ParseRetryAfter.
var ErrRetryAfter = errors.New("bad Retry-After")

// ParseRetryAfter reads a Retry-After value (RFC 9110 section 10.2.3:
// delay-seconds or an HTTP-date) received at now, and returns how long to
// wait, always within [0, max]. An empty value is no wait and no error. A
// value that is not obeyed as written comes with an error wrapping
// ErrRetryAfter that says why: a date in the past (wait 0), a wait longer
// than max (wait max), or garbage, a negative or fractional number
// included (wait 0: the caller's own back-off applies).
func ParseRetryAfter(v string, now time.Time, max time.Duration) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	if allDigits(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > int64(max/time.Second) {
			return max, fmt.Errorf("%w: %s seconds is over the %v clamp", ErrRetryAfter, short(v), max)
		}
		d := time.Duration(n) * time.Second
		if d > max {
			return max, fmt.Errorf("%w: %s seconds is over the %v clamp", ErrRetryAfter, short(v), max)
		}
		return d, nil
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %s is neither seconds nor an HTTP date; ignored", ErrRetryAfter, short(v))
	}
	d := t.Sub(now)
	switch {
	case d < 0:
		return 0, fmt.Errorf("%w: %s is in the past", ErrRetryAfter, short(v))
	case d > max:
		return max, fmt.Errorf("%w: %s is %v away, over the %v clamp", ErrRetryAfter, short(v), d.Round(time.Second), max)
	}
	return d, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// short quotes s for an error message, bounded whatever a server sends.
func short(s string) string {
	q := strconv.Quote(s)
	if len(q) > 80 {
		q = q[:80] + "..."
	}
	return q
}

// Classify maps an error from an HTTP client (net/http, net) to an ErrKind,
// for Observation.Err. nil is ErrNone.
func Classify(err error) ErrKind {
	if err == nil {
		return ErrNone
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return ErrReset
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ErrTimeout
	}
	// net/http reports a server closing mid-exchange as EOF in the text.
	if s := err.Error(); strings.Contains(s, "EOF") || strings.Contains(s, "connection reset") {
		return ErrReset
	}
	return ErrOther
}
