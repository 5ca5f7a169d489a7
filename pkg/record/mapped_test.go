package record

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readAllLines collects the lines and numbers a LineReader gives.
func readAllLines(t *testing.T, lr *LineReader) []string {
	t.Helper()
	var out []string
	for {
		line, n, err := lr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Repeat("#", n)+string(line))
	}
}

// The in-memory reader splits lines exactly as the streaming one: CRLF, a
// byte order mark, blank lines and a last line without a newline.
func TestBytesLineReaderMatchesStream(t *testing.T) {
	for _, data := range []string{
		"", "\n", "a", "a\n", "\xEF\xBB\xBFa\r\nb\n\n c \r\n", "x\n\ny", strings.Repeat("z", 300<<10) + "\nq",
	} {
		want := readAllLines(t, NewLineReader(strings.NewReader(data)))
		got := readAllLines(t, NewBytesLineReader([]byte(data)))
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%.40q: in memory %.80q, streamed %.80q", data, got, want)
		}
	}
}

// ParseView gives the record ParseInto gives, without copying the line,
// and a reused record is not harmed by the views it held before.
func TestParseViewMatchesParseInto(t *testing.T) {
	lines := []string{
		fetchLine(1),
		`{"url":"https://a.example/x","n":1}`,
		`  {"url":"https://a.example/y", "n" : [1,2]}  `,
		"https://plain.example/url",
		`{"url":"https://a.example/\u00e9","k":"v\"q"}`,
		"{\"url\":\"https://bad.example/\xff\"}",
		`{"url":1}`,
		`{"url":"u"`,
		`{"no_url":true}`,
	}
	view, into := new(Record), new(Record)
	for round := 0; round < 2; round++ {
		for _, l := range lines {
			line := []byte(l)
			verr := ParseView(view, line)
			ierr := ParseInto(into, []byte(l))
			if (verr == nil) != (ierr == nil) || verr != nil && verr.Error() != ierr.Error() {
				t.Fatalf("%q: ParseView error %v, ParseInto %v", l, verr, ierr)
			}
			if verr != nil {
				continue
			}
			view.SetInt("added", 7)
			into.SetInt("added", 7)
			if got, want := view.AppendJSON(nil), into.AppendJSON(nil); !bytes.Equal(got, want) {
				t.Errorf("%q: ParseView wrote %s, ParseInto %s", l, got, want)
			}
			if view.URL() != into.URL() {
				t.Errorf("%q: url %q, want %q", l, view.URL(), into.URL())
			}
			if string(line) != l {
				t.Fatalf("ParseView changed its line: %q", line)
			}
		}
	}
}

func TestStringView(t *testing.T) {
	r, err := Parse([]byte(`{"url":"https://a.example/","plain":"abc","esc":"a\"b","n":1,"empty":""}`))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"plain": "abc", "esc": `a"b`, "empty": ""} {
		if got, ok := r.StringView(key); !ok || got != want {
			t.Errorf("StringView(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	if _, ok := r.StringView("n"); ok {
		t.Error("StringView of a number is ok")
	}
	if _, ok := r.StringView("missing"); ok {
		t.Error("StringView of a missing key is ok")
	}
}

// ReadWhole maps a regular file from its current offset and consumes it;
// a pipe is read; an empty rest is no data.
func TestReadWhole(t *testing.T) {
	name := filepath.Join(t.TempDir(), "in.ndjson")
	content := "first line\nsecond line\n"
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(6, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	data, release, err := ReadWhole(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != content[6:] {
		t.Errorf("mapped %q, want %q", data, content[6:])
	}
	release()
	if rest, _ := io.ReadAll(f); len(rest) != 0 {
		t.Errorf("file not consumed: %q left", rest)
	}
	data, release, err = ReadWhole(f)
	if err != nil || len(data) != 0 {
		t.Errorf("at the end: %q, %v", data, err)
	}
	release()

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { pw.WriteString(content); pw.Close() }()
	data, release, err = ReadWhole(pr)
	pr.Close()
	if err != nil || string(data) != content {
		t.Errorf("pipe: %q, %v", data, err)
	}
	release()
}

// EachLineIn reports bad lines as EachLine does, naming the input.
func TestEachLineInReports(t *testing.T) {
	var stderr strings.Builder
	in := &Input{Tool: "t", Stderr: &stderr}
	var good []string
	data := []byte("{\"url\":\"a\"}\n{bad\n\n{\"url\":\"b\"}")
	r := new(Record)
	err := in.EachLineIn(context.Background(), "pages.ndjson", data, func(_ string, line []byte, n int) error {
		if err := ParseView(r, line); err != nil {
			return &DataError{Line: n, Err: err}
		}
		good = append(good, r.URL())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(good, ",") != "a,b" || !strings.HasPrefix(stderr.String(), "t: pages.ndjson: line 2: ") {
		t.Errorf("good %q, stderr %q", good, stderr.String())
	}
}

// The fast form of Time gives exactly time.Parse's result, and leaves
// every other form (and every out-of-range field) to it.
func TestParseTimeZMatchesTimeParse(t *testing.T) {
	cases := []string{
		"2026-11-20T10:00:00Z", "2026-11-20T10:00:00.5Z", "2026-11-20T10:00:00.123456789Z",
		"2026-11-20T10:00:00.1234567891Z", "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z",
		"2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-11-00T00:00:00Z",
		"2026-11-20T24:00:00Z", "2026-11-20T10:60:00Z", "2026-11-20T10:00:60Z", "0000-01-01T00:00:00Z",
		"2026-11-20t10:00:00Z", "2026-11-20T10:00:00z", "2026-11-20T10:00:00.Z", "2026-11-20T10:00:00+01:00",
		"2026-11-2OT10:00:00Z", "2026/11/20T10:00:00Z", "2026-11-20T10:00:00", "1900-02-29T00:00:00Z",
		"2000-02-29T00:00:00Z", "2026-11-20T10:00:00,5Z", "+026-11-20T10:00:00Z", "2026-11-20T10:00:00.-5Z",
	}
	for y := 1999; y <= 2101; y += 17 {
		for m := 1; m <= 12; m++ {
			for _, d := range []int{1, 28, 29, 30, 31} {
				cases = append(cases, fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, m, d, (y+m)%24, d*2, m*5, y%1000))
			}
		}
	}
	// Every day of the years where a calendar computation goes wrong, if
	// it does: around 0, the centuries, the epoch, leap years, the last.
	for _, y := range []int{0, 1, 4, 99, 100, 399, 400, 401, 1600, 1899, 1900, 1969, 1970, 1971, 2000, 2024, 2026, 2100, 9999} {
		for m := 1; m <= 12; m++ {
			for d := 1; d <= 31; d++ {
				cases = append(cases, fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", y, m, d, d%24, (d*7)%60, (m*11)%60))
			}
		}
	}
	for _, s := range cases[:3] {
		if _, ok := parseTimeZ(s); !ok {
			t.Errorf("%q: not taken by the fast form", s)
		}
	}
	for _, s := range cases {
		want, werr := time.Parse(time.RFC3339Nano, s)
		got, ok := parseTimeZ(s)
		if ok && (werr != nil || !got.Equal(want) || got.Location() != want.Location()) {
			t.Errorf("%q: fast %v, time.Parse %v, %v", s, got, want, werr)
		}
		r, err := Parse([]byte(`{"url":"u","t":"` + s + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		rt, rok, rerr := r.Time("t")
		if (rerr == nil) != (werr == nil) || rok != (werr == nil) || werr == nil && rt != want {
			t.Errorf("%q: Time gives %v, %v, %v; time.Parse %v, %v", s, rt, rok, rerr, want, werr)
		}
	}
}

func TestEstimateLines(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 200000} {
		data := bytes.Repeat([]byte(`{"url":"https://h1.example/p/1","weight":1.5}`+"\n"), n)
		got := EstimateLines(data)
		if got < n || got > n+n/10+16 {
			t.Errorf("%d lines: estimated %d", n, got)
		}
	}
}

// TestParseTimeZEveryByte puts every byte at every digit place of a time
// (the digits are tested eight bytes at a time): a digit gives the time
// time.Parse gives, or none where the field goes out of range; any other
// byte gives none, never a time.
func TestParseTimeZEveryByte(t *testing.T) {
	base := "2024-02-29T23:59:58Z"
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		for c := 0; c < 256; c++ {
			b := []byte(base)
			b[i] = byte(c)
			s := string(b)
			got, ok := parseTimeZ(s)
			if c < '0' || c > '9' {
				if ok {
					t.Errorf("%q: taken as %v", s, got)
				}
				continue
			}
			want, err := time.Parse(time.RFC3339Nano, s)
			if ok != (err == nil) || ok && !got.Equal(want) {
				t.Errorf("%q: fast %v, %v; time.Parse %v, %v", s, got, ok, want, err)
			}
		}
	}
}
