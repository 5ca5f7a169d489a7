package record

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/urlx"
)

// scanFields are the fields the FieldScanner tests ask for: numbers, a
// time, a raw one, one the lines rarely have, a key given twice with two
// kinds, and "url" itself (the url is read whether asked for or not).
var scanFields = []Field{
	{Key: "url"}, {Key: "host"}, {Key: "w", Kind: NumberField}, {Key: "t", Kind: TimeField},
	{Key: "x"}, {Key: "missing", Kind: NumberField}, {Key: "n", Kind: NumberField}, {Key: "n", Kind: TimeField},
	{Key: "u", Kind: TimeField},
}

// scanners are a FieldScanner of scanFields and one without "url" among
// its fields, its first field a number.
func scanners() []*FieldScanner {
	return []*FieldScanner{NewFieldScanner(scanFields...), NewFieldScanner(scanFields[2:]...)}
}

// plainURLHost is the rule FieldScanner.Host documents, written out
// plainly: the host of "http://" or "https://", then lower-case letters,
// digits, '-' and inner '.', then '/', '?', '#' or the end, with no
// control character anywhere.
func plainURLHost(url string) (string, bool) {
	rest, ok := strings.CutPrefix(url, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(url, "http://"); !ok {
			return "", false
		}
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host := rest[:end]
	for _, c := range []byte(host) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return "", false
		}
	}
	for _, c := range []byte(url) {
		if c < 0x20 || c == 0x7f {
			return "", false
		}
	}
	if host == "" || host[len(host)-1] == '.' {
		return "", false
	}
	return host, true
}

// checkScan holds Scan to ParseView on one line, the reader rank used
// before: where Scan takes the line, ParseView accepts it and each field
// is the record's raw value byte for byte, each number RawFloat's, each
// time RawUnixTime's, the url Record.URL's and the host urlx.Host's;
// where ParseView takes an object in valid UTF-8 with no escaped key, so
// does Scan. It returns whether Scan took the line.
func checkScan(t *testing.T, s *FieldScanner, fields []Field, line []byte) bool {
	t.Helper()
	var r Record
	err := ParseView(&r, line)
	if !s.Scan(line) {
		if err != nil || !r.borrowed {
			return false // a bad line, a plain URL or one not UTF-8
		}
		for _, f := range r.fields {
			if string(r.src[f.start+1:f.start+1+len(f.key)]) != f.key || r.src[f.start+1+len(f.key)] != '"' {
				return false // an escaped key
			}
		}
		t.Fatalf("Scan left %q, which ParseView takes as it is", line)
	}
	if err != nil {
		t.Fatalf("Scan took %q, ParseView: %v", line, err)
	}
	for k, f := range fields {
		raw, has := r.Raw(f.Key)
		if got := s.Value(k); has != (got != nil) || !bytes.Equal(got, raw) {
			t.Fatalf("%q: field %q = %q, Raw gives %q (%v)", line, f.Key, got, raw, has)
		}
		// Number: RawFloat's value, for every bare number of the simple
		// form of a NumberField (and for no other value).
		v, ok := s.Number(k)
		want, wok, werr := RawFloat(f.Key, raw)
		_, simple := parseSimpleFloat(raw)
		numeric := false
		for _, g := range fields {
			numeric = numeric || g.Key == f.Key && g.Kind == NumberField
		}
		if ok != (numeric && f.Key != "url" && simple && len(raw) > 0 && raw[0] != '"') ||
			ok && (!wok || werr != nil || math.Float64bits(v) != math.Float64bits(want)) {
			t.Fatalf("%q: number %q = %v (%v), RawFloat %v %v %v", line, f.Key, v, ok, want, wok, werr)
		}
		// UnixTime: RawUnixTime's, for every time field it reads.
		timed := false
		for _, g := range fields {
			timed = timed || g.Key == f.Key && g.Kind == TimeField
		}
		sec, nsec, ok := s.UnixTime(k)
		wsec, wnsec, wok := RawUnixTime(raw)
		if ok != (timed && f.Key != "url" && wok) || ok && (sec != wsec || nsec != wnsec) {
			t.Fatalf("%q: time %q = %v %v (%v), RawUnixTime %v %v %v", line, f.Key, sec, nsec, ok, wsec, wnsec, wok)
		}
	}
	if s.URL() != r.URL() {
		t.Fatalf("%q: url %q, Record.URL %q", line, s.URL(), r.URL())
	}
	rawURL, _ := r.Raw("url")
	host, ok := s.Host()
	if want, plain := plainURLHost(s.URL()); plain && !bytes.Contains(rawURL, []byte(`\`)) && (!ok || host != want) {
		t.Fatalf("%q: host %q (%v), want %q from the url's pass", line, host, ok, want)
	}
	if ok {
		if want, err := urlx.Host(s.URL()); err != nil || host != want {
			t.Fatalf("%q: host %q, urlx.Host %q %v", line, host, want, err)
		}
	}
	return true
}

// checkScanners runs checkScan with every scanner of scanners.
func checkScanners(t *testing.T, ss []*FieldScanner, line []byte) bool {
	t.Helper()
	took := checkScan(t, ss[0], scanFields, line)
	if checkScan(t, ss[1], scanFields[2:], line) != took {
		t.Fatalf("%q: the scanners disagree on taking it", line)
	}
	return took
}

// fieldLines are lines of every kind FieldScanner meets: escapes, unicode,
// missing fields, fields in any order, unknown fields, duplicated keys,
// spaces, and malformed lines.
var fieldLines = []string{
	`{"url":"https://h1.example/p/0","w":0.3188,"t":"2026-11-19T19:41:59Z","n":51}`,
	`{"t":"2026-11-19T19:41:59.5Z","n":"2026-11-19T19:41:59Z","w":"2.5","url":"http://a.example"}`,
	`{"url":"http:\/\/a.example\/x","w":1e3,"t":"2026-11-19T19:41:59\u005a"}`,
	`{"url":"https://a.example/\u00e9t\u00e9?q=\ud83d\ude00","x":"\u2028"}`,
	`{"url":"https://a.example/été/日本","x":"日本語","w":-0.5}`,
	`{"url":"https://b\u00fccher.example/","host":"B.example"}`,
	`{"url":"https://A.example/","w":01}`, `{"url":"https://a.example:8080/x"}`,
	`{"url":"https://u@a.example/"}`, `{"url":"https://a.example./"}`, `{"url":"https://a..b/"}`,
	`{"url":"https://"}`, `{"url":"http://"}`, `{"url":"http:///x"}`, `{"url":""}`, `{"url":"ftp://a.example/"}`,
	"{\"url\":\"https://a.example/\x7f\"}", "{\"url\":\"https://a.example/ab\x7fcdefghijklmnop\"}", `{"url":"https://a.example/\u007f"}`, `{"url":"https://a.example/\u0001"}`,
	`{"url":"https://a.example?q#f"}`, `{"url":"https://a.example#f"}`, `{"url":"https://a-b.c-d.example"}`,
	`{"url":"https://a.example","x":{"url":"inner","w":[1,2,{"t":"x"}]},"w":2}`,
	`{"url":"https://a.example","url":"https://b.example","w":1,"w":2,"t":"2026-11-19T19:41:59Z","t":null}`,
	`{"w":1,"url":"https://first.example","url":2}`, `{"url":2,"url":"https://second.example"}`,
	` { "url" : "https://a.example/x" , "w" : 2 , "t" : "2026-11-19T19:41:59Z" } `,
	"\t{\"url\":\"https://a.example/\"}\r", `{"url":"https://a.example","w":null,"t":17,"n":true,"x":false}`,
	`{"url":"https://a.example","t":"2026-02-30T00:00:00Z"}`, `{"url":"https://a.example","t":"2026-11-19T19:41:59+01:00"}`,
	`{"url":"https://a.example","t":"2026-11-19T19:41:59.123456789Z"}`, `{"url":"https://a.example","t":"2026-11-19T19:41:5Z"}`,
	`{"url":"https://a.example","w":123456789012345678,"n":-0,"missing":1.5}`,
	`{"url":"https://a.example","u":"2026-11-19T19:41:59Z","x":["é",{"k":"\ud800"}]}`,
	`{"url":"https://a.example","\u0077":2}`, `{"\u0075rl":"https://a.example"}`, `{"url":"https://a.example","w\u00e9":2}`,
	`{"url":"https://a.example","wé":2,"日本":"語"}`, `{}`, `{"w":1}`, `{"url":1}`, `{"url":null}`,
	`{"url":"https://a.example"`, `{"url":"https://a.example"}x`, `{"url":"https://a.example",}`,
	`{"url":"https://a.example","w":}`, `{"url":"https://a.example","w":1.}`, `{"url":"https://a.example","w":-}`,
	`{"url":"https://a.example\"}`, `{"url":"https://a.example\x"}`, `{"url":"https://a.example\u12"}`,
	"{\"url\":\"https://a.example/\x01\"}", "{\"url\":\"https://a.example/\xff\"}", "{\"url\":\"https://a.example\",\"x\":\"\xc3\"}",
	"{\"url\":\"https://a.example\",\"x\":[\"\xe2\x82\"]}", "{\"url\":\"https://a.example\",\"\xff\":1}",
	`{"url":"https://a.example" "w":1}`, `{"url" "https://a.example"}`, `{url:"https://a.example"}`,
	`{"url":"https://a.example","t":"2026-11-19T19:41:59Z`, `{"url":"https://a.example","w":tru}`,
	`https://plain.example/line`, `[1]`, `"url"`, ``, `   `, `{"url":"https://a.example","x":[1,}`,
}

func TestFieldScanner(t *testing.T) {
	ss := scanners()
	taken := 0
	for _, line := range fieldLines {
		if checkScanners(t, ss, []byte(line)) {
			taken++
		}
	}
	if taken < 30 || taken > len(fieldLines)-25 {
		t.Errorf("Scan took %d lines of %d: the cases miss one side", taken, len(fieldLines))
	}
	s := NewFieldScanner(scanFields...)
	for _, c := range []struct {
		line, url, host string
		took            bool
	}{
		{`{"url":"https://h1.example/p/0","w":0.3188}`, "https://h1.example/p/0", "h1.example", true},
		{`{"url":"http:\/\/a.example\/x"}`, "http://a.example/x", "", true}, // escaped: the host is left to urlx.Host
		{`{"url":"https://a.example/\u00e9?\ud83d\ude00"}`, "https://a.example/é?😀", "", true},
		{`{"url":"https://a.example/été"}`, "https://a.example/été", "a.example", true},
		{`{"url":"https://A.example/"}`, "https://A.example/", "", true},
		{`{"w":1,"url":"http://a-b.example?q"}`, "http://a-b.example?q", "a-b.example", true},
		{`{"url":"https://a.example","url":"https://b.example"}`, "https://a.example", "a.example", true},
		{`{"\u0075rl":"https://a.example"}`, "", "", false},     // an escaped key: ParseView's
		{"{\"url\":\"https://a.example/\xff\"}", "", "", false}, // not UTF-8: ParseView copies it
		{`{"url":"https://a.example","w":1,}`, "", "", false},   // bad JSON: ParseView words it
		{`https://plain.example/`, "", "", false},               // a plain URL line
		{`{"url":"https://a.example","x":"\ud800"}`, "https://a.example", "a.example", true},
	} {
		took := s.Scan([]byte(c.line))
		host, _ := s.Host()
		if took != c.took || took && (s.URL() != c.url || host != c.host) {
			t.Errorf("%s: took %v, url %q, host %q; want %v, %q, %q", c.line, took, s.URL(), host, c.took, c.url, c.host)
		}
	}
	// The numbers and times of the common line, and a duplicated key's
	// first value.
	if !s.Scan([]byte(`{"x":[1],"t":"2026-11-19T19:41:59Z","w":2.25,"url":"https://a.example","w":3,"n":7}`)) {
		t.Fatal("the common line was not taken")
	}
	if w, ok := s.Number(2); !ok || w != 2.25 {
		t.Errorf("w = %v %v, want the first value 2.25", w, ok)
	}
	if sec, nsec, ok := s.UnixTime(3); !ok || sec != 1795117319 || nsec != 0 {
		t.Errorf("t = %v %v %v", sec, nsec, ok)
	}
	if n, ok := s.Number(6); !ok || n != 7 || string(s.Value(7)) != "7" {
		t.Errorf("n = %v %v, raw %q", n, ok, s.Value(7))
	}
	if _, _, ok := s.UnixTime(7); ok || string(s.Value(4)) != "[1]" || s.Value(5) != nil {
		t.Errorf("n as a time %v, x %q, missing %q", ok, s.Value(4), s.Value(5))
	}
	// Nothing of one line is left for the next.
	if !s.Scan([]byte(`{"url":"http:\/\/b.example"}`)) || s.Value(2) != nil || s.Value(3) != nil || s.Value(4) != nil {
		t.Fatalf("a line without fields: %q %q %q", s.Value(2), s.Value(3), s.Value(4))
	}
	if _, ok := s.Number(2); ok {
		t.Error("a number left from the line before")
	}
	if _, _, ok := s.UnixTime(3); ok {
		t.Error("a time left from the line before")
	}
	if h, ok := s.Host(); ok {
		t.Errorf("a host %q left from the line before", h)
	}
}

// Times read one after another as RawUnixTime reads each: on the date of
// the time before (which the scanner keeps) and off it, good and bad
// times of day, before 1970, other forms between.
func TestFieldScannerTimes(t *testing.T) {
	ss := scanners()
	read := 0
	for _, v := range []string{
		"2026-11-19T19:41:59Z", "2026-11-19T00:00:00Z", "2026-11-19T23:59:59Z", "2026-11-19T24:00:00Z",
		"2026-11-19T23:60:00Z", "2026-11-19T23:00:60Z", "2026-11-19x19:41:59Z", "2026-11-19T19-41:59Z",
		"2026-11-19T19:41-59Z", "2026-11-19T19:41:59z", "2026-11-19T1a:41:59Z", "2026-11-19T19:41:59.5Z",
		"2026-11-18T19:41:59Z", "2026-11-28T19:41:59Z", "2026-12-19T19:41:59Z", "2025-11-19T19:41:59Z",
		"1969-12-31T23:59:59Z", "1969-12-31T00:00:01Z", "1970-01-01T00:00:00Z", "0000-01-01T00:00:00Z",
		"2024-02-29T12:00:00Z", "2023-02-29T12:00:00Z", "2023-02-29T12:00:01Z", "2026-11-19T19:41:59Z",
	} {
		if !checkScanners(t, ss, []byte(`{"url":"https://a.example","t":"`+v+`","u":"`+v+`"}`)) {
			t.Fatalf("%s: not taken", v)
		}
		if _, _, ok := ss[0].UnixTime(3); ok {
			read++
		}
	}
	if read < 12 {
		t.Errorf("%d times read: the cases miss the common form", read)
	}
}

// Fields may come in any order, with unknown fields between them: every
// order of the common line's fields is read the same, on one scanner
// (which guesses each key from the line before).
func TestFieldScannerAnyOrder(t *testing.T) {
	parts := []string{`"url":"https://h7.example/p/1"`, `"w":0.5881`, `"t":"2026-11-17T04:53:33Z"`,
		`"n":214`, `"zz":{"a":[1,"é"]}`, `"x":"\u00e9"`}
	ss := scanners()
	var perm func(rest, done []string)
	count := 0
	perm = func(rest, done []string) {
		if len(rest) == 0 {
			line := []byte("{" + strings.Join(done, ",") + "}")
			if !checkScanners(t, ss, line) {
				t.Fatalf("%s not taken", line)
			}
			if w, ok := ss[0].Number(2); !ok || w != 0.5881 || ss[0].URL() != "https://h7.example/p/1" {
				t.Fatalf("%s: w %v %v, url %q", line, w, ok, ss[0].URL())
			}
			count++
			return
		}
		for i := range rest {
			next := append(append([]string{}, rest[:i]...), rest[i+1:]...)
			perm(next, append(done, rest[i]))
		}
	}
	perm(parts, nil)
	if count != 720 {
		t.Errorf("%d orders", count)
	}
}

// Lines of megabytes: a long url (its host still read in its pass), long
// unknown fields of every kind before the fields asked for, and a long
// line cut short.
func TestFieldScannerLongLines(t *testing.T) {
	ss := scanners()
	long := strings.Repeat("abcdefghé日", 100_000)
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	for _, line := range []string{
		`{"url":"https://long.example/` + long + `","w":2}`,
		`{"x":"` + long + `","y":[` + strings.Repeat(`"\u00e9",`, 100_000) + `1],"z":` + deep + `,"url":"https://a.example","w":3}`,
		`{"url":"https://a.example/` + strings.Repeat(`\/`, 100_000) + `"}`,
		`{"url":"https://a.example","x":"` + long,
	} {
		checkScanners(t, ss, []byte(line))
	}
	s := ss[0]
	if !s.Scan([]byte(`{"url":"https://long.example/` + long + `","w":2}`)) {
		t.Fatal("the long url was not taken")
	}
	if h, ok := s.Host(); !ok || h != "long.example" || len(s.URL()) != len("https://long.example/")+len(long) {
		t.Errorf("long url: host %q %v, %d bytes", h, ok, len(s.URL()))
	}
	if w, ok := s.Number(2); !ok || w != 2 {
		t.Errorf("w after the long url: %v %v", w, ok)
	}
}

// Scanning the common line allocates nothing, nor does an escaped url
// once the scanner's buffer has grown.
func TestFieldScannerAllocs(t *testing.T) {
	s := NewFieldScanner(scanFields...)
	lines := [][]byte{[]byte(`{"url":"https://h1.example/p/0","w":0.3188,"t":"2026-11-19T19:41:59Z","n":51}`),
		[]byte(`{"url":"https:\/\/h1.example\/p\/\u00e9","x":[1,{"a":"b"}],"w":"1"}`)}
	if n := testing.AllocsPerRun(100, func() {
		for _, line := range lines {
			if !s.Scan(line) {
				t.Fatal("not taken")
			}
		}
	}); n != 0 {
		t.Errorf("%v allocations a run", n)
	}
}

// HostSeen hears of a url's plain host as the url's pass reads it, before
// the rest of the line (a bad line still gives the hint), and of no other
// url's; where the line is taken and its url plain, the hint is Host's.
func TestFieldScannerHostSeen(t *testing.T) {
	s := NewFieldScanner(scanFields...)
	var seen []string
	s.HostSeen = func(host string) { seen = append(seen, host) }
	for _, c := range []struct {
		line, want string
	}{
		{`{"url":"https://h1.example/p/0","w":1}`, "h1.example"},
		{`{"w":1,"url":"http://a-b.example?q","t":"2026-11-19T19:41:59Z"}`, "a-b.example"},
		{`{"url":"https://a.example","w":1,}`, "a.example"},         // a bad line: still a hint
		{`{"url":"https://a.example/` + "\x7f" + `"}`, "a.example"}, // not plain after all
		{`{"url":"https://A.example/"}`, ""},
		{`{"url":"https://a.example:80/"}`, ""},
		{`{"url":"http:\/\/a.example\/"}`, ""},
		{`{"url":"ftp://a.example/"}`, ""},
		{`{"w":1}`, ""},
	} {
		seen = seen[:0]
		took := s.Scan([]byte(c.line))
		if c.want == "" && len(seen) != 0 || c.want != "" && (len(seen) != 1 || seen[0] != c.want) {
			t.Errorf("%s: HostSeen heard %q, want %q", c.line, seen, c.want)
		}
		if h, ok := s.Host(); took && ok && (len(seen) != 1 || seen[0] != h) {
			t.Errorf("%s: Host %q, HostSeen heard %q", c.line, h, seen)
		}
	}
}

// FuzzFieldScanner holds the FieldScanner to ParseView and the record's
// getters (checkScan) on any line, with two scanners reused from line to
// line as rank reuses its one.
func FuzzFieldScanner(f *testing.F) {
	for _, line := range fieldLines {
		f.Add([]byte(line))
	}
	ss := scanners()
	f.Fuzz(func(t *testing.T, line []byte) { checkScanners(t, ss, line) })
}
