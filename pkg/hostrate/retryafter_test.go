package hostrate

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const max = 10 * time.Minute
	cases := []struct {
		v    string
		want time.Duration
		bad  bool
	}{
		{"", 0, false},
		{"  ", 0, false},
		{"0", 0, false},
		{"120", 2 * time.Minute, false},
		{" 30 ", 30 * time.Second, false},
		{"600", max, false},
		{"601", max, true},
		{"86400", max, true},
		{"9223372036854775807", max, true},
		{"99999999999999999999999999", max, true},
		{"-1", 0, true},
		{"1.5", 0, true},
		{"+5", 0, true},
		{"soon", 0, true},
		{"0x10", 0, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, false},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"Thu, 01 Jan 1970 00:00:00 GMT", 0, true},
		{now.Add(48 * time.Hour).Format(http.TimeFormat), max, true},
		{"Sunday, 01-Mar-26 12:05:00 GMT", 5 * time.Minute, false}, // RFC 850
		{"Sun Mar  1 12:01:00 2026", time.Minute, false},           // asctime
		{"Sun, 32 Mar 2026 12:00:00 GMT", 0, true},
	}
	for _, c := range cases {
		got, err := ParseRetryAfter(c.v, now, max)
		if got != c.want || (err != nil) != c.bad {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, bad %v", c.v, got, err, c.want, c.bad)
		}
		if err != nil && !errors.Is(err, ErrRetryAfter) {
			t.Errorf("ParseRetryAfter(%q): error %v does not wrap ErrRetryAfter", c.v, err)
		}
	}
}

// FuzzParseRetryAfter: whatever a server sends, the wait is within [0, max]
// and the error message stays short.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "120", "86400", "99999999999999999999", "-1", "1.5", "soon",
		"Sun, 01 Mar 2026 12:05:00 GMT", "Thu, 01 Jan 1970 00:00:00 GMT", "Sunday, 01-Mar-26 12:05:00 GMT",
		"Sun Mar  1 12:01:00 2026", "Fri, 31 Dec 9999 23:59:59 GMT", "\x00\xff", " 7 "} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		const max = 10 * time.Minute
		d, err := ParseRetryAfter(v, now, max)
		if d < 0 || d > max {
			t.Fatalf("ParseRetryAfter(%q) = %v, outside [0, %v]", v, d, max)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Fatalf("error of %d bytes", len(err.Error()))
		}
	})
}

func TestClassify(t *testing.T) {
	timeout := &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}
	cases := []struct {
		err  error
		want ErrKind
	}{
		{nil, ErrNone},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, ErrRefused},
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, ErrReset},
		{fmt.Errorf("Get x: %w", timeout), ErrTimeout},
		{errors.New(`Get "http://x/": EOF`), ErrReset},
		{&net.DNSError{Err: "no such host", Name: "x"}, ErrOther},
	}
	for _, c := range cases {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
