package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParsePassesUnknownFieldsThroughInOrder(t *testing.T) {
	in := `{"z":1,"url":"http://a/x","nested":{"k":[1,2,{"q":"\u00e9\"x"}]},"a":null,"f":1.5e3}`
	r, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.AppendJSON(nil)); got != in {
		t.Fatalf("round trip changed the record:\n got %s\nwant %s", got, in)
	}
	r.SetString("host", "a")
	r.SetInt("z", 7) // replaced in place, order kept
	want := `{"z":7,"url":"http://a/x","nested":{"k":[1,2,{"q":"\u00e9\"x"}]},"a":null,"f":1.5e3,"host":"a"}`
	if got := string(r.AppendJSON(nil)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if !json.Valid(r.AppendJSON(nil)) {
		t.Fatal("output is not valid JSON")
	}
}

func TestParsePlainLineIsURLRecord(t *testing.T) {
	r, err := Parse([]byte("  http://example.com/a b  "))
	if err != nil {
		t.Fatal(err)
	}
	if r.URL() != "http://example.com/a b" {
		t.Fatalf("url = %q", r.URL())
	}
	if got := string(r.AppendJSON(nil)); got != `{"url":"http://example.com/a b"}` {
		t.Fatalf("got %s", got)
	}
}

func TestParseInvalidUTF8(t *testing.T) {
	// A plain line: invalid bytes are percent-encoded, the rest kept.
	r, err := Parse([]byte("http://x/\xff\xfeя"))
	if err != nil {
		t.Fatal(err)
	}
	if r.URL() != "http://x/%FF%FEя" {
		t.Fatalf("url = %q", r.URL())
	}
	// A JSON line: invalid bytes become U+FFFD and the output is valid.
	r, err = Parse([]byte("{\"url\":\"http://x/\xff\",\"t\":\"a\xc3\"}"))
	if err != nil {
		t.Fatal(err)
	}
	out := r.AppendJSON(nil)
	if !utf8.Valid(out) || !json.Valid(out) {
		t.Fatalf("invalid output %q", out)
	}
	if r.URL() != "http://x/\uFFFD" {
		t.Fatalf("url = %q", r.URL())
	}
}

func TestParseErrors(t *testing.T) {
	for _, line := range []string{
		`{"url":"x"`,              // unterminated
		`{"url":"x"} trailing`,    // data after the object
		`{"url":"x"} {"url":"y"}`, // two objects
		`{"url":1}`,               // url not a string
		`{"no":"url"}`,            // missing url
		`{"url":"x",}`,            // trailing comma
		`{url:"x"}`,               // unquoted key
		`{"url":"x","a":[1,}`,     // broken value
	} {
		if r, err := Parse([]byte(line)); err == nil {
			t.Errorf("Parse(%s) = %s, want an error", line, r.AppendJSON(nil))
		}
	}
}

func TestTypedGetters(t *testing.T) {
	r, err := Parse([]byte(`{"url":"u","f":2.5,"s":"3","b":true,"bs":"false","t":"2024-01-02T03:04:05Z","bad":"x","nan":"NaN","n":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := r.Float("f"); v != 2.5 || !ok || err != nil {
		t.Errorf("Float(f) = %v %v %v", v, ok, err)
	}
	if v, ok, err := r.Float("s"); v != 3 || !ok || err != nil {
		t.Errorf("Float(s) = %v %v %v", v, ok, err)
	}
	if _, ok, err := r.Float("missing"); ok || err != nil {
		t.Errorf("Float(missing) ok=%v err=%v", ok, err)
	}
	if _, ok, err := r.Float("n"); ok || err != nil {
		t.Errorf("Float(null) ok=%v err=%v", ok, err)
	}
	for _, k := range []string{"bad", "nan", "b"} {
		if _, _, err := r.Float(k); err == nil {
			t.Errorf("Float(%s) gave no error", k)
		}
	}
	if v, ok, err := r.Bool("b"); !v || !ok || err != nil {
		t.Errorf("Bool(b) = %v %v %v", v, ok, err)
	}
	if v, ok, err := r.Bool("bs"); v || !ok || err != nil {
		t.Errorf("Bool(bs) = %v %v %v", v, ok, err)
	}
	if tm, ok, err := r.Time("t"); !ok || err != nil || !tm.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("Time(t) = %v %v %v", tm, ok, err)
	}
	if _, _, err := r.Time("bad"); err == nil {
		t.Error("Time(bad) gave no error")
	}
	r.SetFloat("x", math.NaN())
	r.SetFloat("y", 0.1)
	r.SetFloat("z", 3)
	if got := string(r.AppendJSON(nil)); !strings.HasSuffix(got, `"x":null,"y":0.1,"z":3}`) {
		t.Errorf("floats written as %s", got)
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s", "\x00\x1f\t\n\r", "é中\U0001F600", "\u2028\u2029", "bad\xffutf8\xc3"} {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s: %v", s, got, err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if back != want {
			t.Errorf("AppendString(%q) decodes to %q, want %q", s, back, want)
		}
	}
}

func TestLineReaderLongLinesCRLFAndBOM(t *testing.T) {
	long := strings.Repeat("x", 10<<20) // 10 MiB, far past bufio's buffer
	in := "\xEF\xBB\xBFfirst\r\n" + long + "\n\nlast-no-newline"
	lr := NewLineReader(strings.NewReader(in))
	var lines []string
	var nums []int
	for {
		b, n, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
		nums = append(nums, n)
	}
	if len(lines) != 4 || lines[0] != "first" || lines[1] != long || lines[2] != "" || lines[3] != "last-no-newline" {
		t.Fatalf("got %d lines, first %q, second len %d", len(lines), lines[0], len(lines[1]))
	}
	if nums[3] != 4 {
		t.Fatalf("line numbers %v", nums)
	}
}

func TestInputReportsBadLinesAndGoesOn(t *testing.T) {
	long := `{"url":"http://a/` + strings.Repeat("p", 10<<20) + `"}`
	in := "http://a/1\n{broken\n\n" + long + "\r\n{\"url\":\"http://b/2\",\"k\":1}\n"
	var stderr bytes.Buffer
	input := &Input{Tool: "t", Stdin: strings.NewReader(in), Stderr: &stderr}
	var urls []string
	var lines []int
	err := input.Each(context.Background(), nil, func(r *Record) error {
		if strings.HasSuffix(r.URL(), "/2") {
			return r.Errorf("rejected by the tool")
		}
		urls = append(urls, r.URL())
		lines = append(lines, r.Line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(urls) != 2 || urls[0] != "http://a/1" || len(urls[1]) != len("http://a/")+10<<20 {
		t.Fatalf("urls %d", len(urls))
	}
	if lines[0] != 1 || lines[1] != 4 {
		t.Fatalf("lines %v", lines)
	}
	want := "t: line 2: invalid JSON: unterminated object\nt: line 5: rejected by the tool\n"
	if stderr.String() != want {
		t.Fatalf("stderr %q, want %q", stderr.String(), want)
	}
	if input.Bad != 2 {
		t.Fatalf("Bad = %d", input.Bad)
	}
}

func TestInputStrictStops(t *testing.T) {
	var stderr bytes.Buffer
	input := &Input{Tool: "t", Strict: true, Stdin: strings.NewReader("http://a/1\n{x\nhttp://a/3\n"), Stderr: &stderr}
	n := 0
	err := input.Each(context.Background(), nil, func(r *Record) error { n++; return nil })
	if !errors.Is(err, ErrStrict) || n != 1 {
		t.Fatalf("err %v after %d records", err, n)
	}
	if !strings.Contains(stderr.String(), "t: line 2:") {
		t.Fatalf("stderr %q", stderr.String())
	}
}

func TestInputStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	input := &Input{Tool: "t", Stdin: strings.NewReader(strings.Repeat("http://a/\n", 100))}
	n := 0
	err := input.Each(ctx, nil, func(r *Record) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Fatalf("err %v after %d", err, n)
	}
}

func TestShardSplitsByHostOnly(t *testing.T) {
	urls := []string{}
	for _, h := range []string{"a.com", "b.org", "c.net", "d.ru", "e.de", "f.fr", "g.io", "h.uk"} {
		for i := 0; i < 5; i++ {
			urls = append(urls, "http://"+h+"/p"+string(rune('0'+i)))
		}
	}
	urls = append(urls, "HTTP://A.COM/upper") // same host, other spelling
	const n = 3
	seen := map[string]int{} // host -> shard
	total := 0
	for i := 0; i < n; i++ {
		s := Shard{I: i, N: n}
		for _, u := range urls {
			r := New(u)
			if !s.Keeps(r) {
				continue
			}
			total++
			h := RecordHost(r)
			if prev, ok := seen[h]; ok && prev != i {
				t.Fatalf("host %s in shards %d and %d", h, prev, i)
			}
			seen[h] = i
		}
	}
	if total != len(urls) {
		t.Fatalf("shards kept %d of %d records", total, len(urls))
	}
	if _, err := ParseShard("3/3"); err == nil {
		t.Fatal("3/3 accepted")
	}
	if s, err := ParseShard("1/4"); err != nil || s != (Shard{1, 4}) {
		t.Fatalf("ParseShard(1/4) = %v %v", s, err)
	}
}

// recorder keeps every Write call separately, to see where lines were cut.
type recorder struct{ writes [][]byte }

func (w *recorder) Write(p []byte) (int, error) {
	w.writes = append(w.writes, append([]byte(nil), p...))
	return len(p), nil
}

func TestWriterWritesWholeLinesOnly(t *testing.T) {
	var rec recorder
	w := NewWriter(&rec)
	for i := 0; i < 5000; i++ {
		if err := w.Write(New("http://example.com/" + strings.Repeat("x", i%97))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, chunk := range rec.writes {
		if len(chunk) == 0 || chunk[len(chunk)-1] != '\n' {
			t.Fatalf("a write ended inside a line: %q", chunk[len(chunk)-20:])
		}
		lines += bytes.Count(chunk, []byte("\n"))
	}
	if lines != 5000 || len(rec.writes) < 2 {
		t.Fatalf("%d lines in %d writes", lines, len(rec.writes))
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"url":"http://a/","x":[1,{"y":"z"}]}`, `http://plain/url`, `{"url":"x"`, `{}`,
		`{"url":"a","url":"b"}`, "{\"url\":\"\xff\"}", `{"url":"\ud800"}`, `{"a":"}"}`, `[1,2]`, `"str"`,
		`{ "url" : "u" , "n" : -0.5e+3 , "l" : [ "a" , "\u00e9" ] }`, `{"url":"u","\u0061":1,"a":2}`,
		`{"url":"u","n":01}`, `{"url":"u","n":1.}`, `{"url":"u","s":"\ud83d\ude00\udc00"}`,
		"{\"url\":\"u\",\"c\":\"\t\"}", `{"url":"u","t":tru}`, `{"url":"u","x":1e400}`,
		"\u00a0{\"url\":\"u\"}", `{"url":"u","links":["a",1]}`, "{\"url\":\"u\",\"k\u2028\":1}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := Parse(line)
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			if err == nil {
				t.Fatalf("Parse(%q) accepted a blank line", line)
			}
			return
		}
		if trimmed[0] != '{' {
			if err != nil {
				t.Fatalf("Parse(%q) rejected a URL line: %v", line, err)
			}
			if utf8.Valid(trimmed) && r.URL() != string(trimmed) {
				t.Fatalf("Parse(%q).URL() = %q", line, r.URL())
			}
			var back map[string]string
			if err := json.Unmarshal(r.AppendJSON(nil), &back); err != nil || len(back) != 1 || back["url"] != r.URL() {
				t.Fatalf("URL line %q written as %q", line, r.AppendJSON(nil))
			}
			return
		}
		keys, raws, valid := stdObject(trimmed)
		if first := firstIndex(keys, "url"); valid && (first < 0 || raws[first][0] != '"') {
			valid = false
		}
		if (err == nil) != valid {
			t.Fatalf("Parse(%q) error %v, encoding/json accepts it: %v", line, err, valid)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "invalid JSON") && !strings.Contains(err.Error(), `"url"`) {
				t.Fatalf("Parse(%q) error %q names no cause", line, err)
			}
			return
		}
		checkAgainstStd(t, r, keys, raws)
		out := r.AppendJSON(nil)
		if !json.Valid(out) {
			t.Fatalf("Parse(%q) wrote invalid JSON %q", line, out)
		}
		// The output holds the same fields, and parses back to the same record.
		okeys, oraws, ovalid := stdObject(out)
		if !ovalid {
			t.Fatalf("output %q is not an object", out)
		}
		checkAgainstStd(t, r, okeys, oraws)
		r2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
		if got := r2.AppendJSON(nil); !bytes.Equal(got, out) {
			t.Fatalf("not stable: %q then %q", out, got)
		}
	})
}

// stdObject splits an object into its keys and raw values with encoding/json,
// duplicates kept, and reports whether encoding/json accepts b as an object.
func stdObject(b []byte) (keys []string, raws []json.RawMessage, ok bool) {
	if !json.Valid(b) {
		return nil, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, false
		}
		keys = append(keys, tok.(string))
		raws = append(raws, raw)
	}
	return keys, raws, true
}

func firstIndex(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

// checkAgainstStd checks that r has the keys given, in order, and that its
// getters agree with encoding/json on the first value of each.
func checkAgainstStd(t *testing.T, r *Record, keys []string, raws []json.RawMessage) {
	t.Helper()
	if got := r.Keys(); !slices.Equal(got, keys) {
		t.Fatalf("keys %q, encoding/json %q", got, keys)
	}
	for i, k := range keys {
		if firstIndex(keys, k) != i {
			continue // lookups see the first of duplicate keys
		}
		std := raws[i]
		raw, _ := r.Raw(k)
		if want := appendValidUTF8(nil, std); !bytes.Equal(raw, want) {
			t.Fatalf("Raw(%q) = %q, encoding/json %q", k, raw, want)
		}
		var wantAny, gotAny any
		stdErr := json.Unmarshal(std, &wantAny)
		if _, err := r.Decode(k, &gotAny); (err == nil) != (stdErr == nil) || (stdErr == nil && !reflect.DeepEqual(gotAny, wantAny)) {
			t.Fatalf("Decode(%q) = %#v, %v; encoding/json %#v, %v", k, gotAny, err, wantAny, stdErr)
		}
		var wantList, gotList []string
		stdErr = json.Unmarshal(std, &wantList)
		if _, err := r.Decode(k, &gotList); (err == nil) != (stdErr == nil) || (stdErr == nil && !slices.Equal(gotList, wantList)) {
			t.Fatalf("Decode(%q, []string) = %q, %v; encoding/json %q, %v", k, gotList, err, wantList, stdErr)
		}
		switch std[0] {
		case '"':
			var want string
			if err := json.Unmarshal(std, &want); err != nil {
				t.Fatal(err)
			}
			if got, ok := r.String(k); !ok || got != want {
				t.Fatalf("String(%q) = %q, encoding/json %q", k, got, want)
			}
			if k == "url" && r.URL() != want {
				t.Fatalf("URL() = %q, encoding/json %q", r.URL(), want)
			}
		case 't', 'f':
			want := std[0] == 't'
			if got, ok, err := r.Bool(k); got != want || !ok || err != nil {
				t.Fatalf("Bool(%q) = %v %v %v", k, got, ok, err)
			}
		case 'n':
			if !r.IsNull(k) {
				t.Fatalf("IsNull(%q) false for %s", k, std)
			}
		case '{', '[':
			if _, ok := r.String(k); ok {
				t.Fatalf("String(%q) took %s for a string", k, std)
			}
		default:
			var want float64
			stdErr := json.Unmarshal(std, &want)
			got, ok, err := r.Float(k)
			if (err == nil) != (stdErr == nil) || (stdErr == nil && (got != want || !ok)) {
				t.Fatalf("Float(%q) = %v %v %v; encoding/json %v %v", k, got, ok, err, want, stdErr)
			}
		}
	}
}

func TestUnchangedRecordIsWrittenAsRead(t *testing.T) {
	// Compact lines go out byte for byte, whatever their values hold.
	for _, in := range []string{
		`{"url":"http://a/","n":1.50e+2,"s":"\u00e9\/x","l":[ 1 , {"k" : null} ]}`,
		`{"url":"http://a/","k\u2029":1}`,
	} {
		r, err := Parse([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(r.AppendJSON(nil)); got != in {
			t.Errorf("got  %s\nwant %s", got, in)
		}
	}
	// Space between top-level tokens and escaped keys are written in the
	// canonical form; values keep their own text.
	r, err := Parse([]byte("{ \"url\" : \"u\",\t\"\\u0061\":[ 1 ],\"k\u2028\":2 }"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"url":"u","a":[ 1 ],"k\u2028":2}`
	if got := string(r.AppendJSON(nil)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestChangedRecordKeepsTheRest(t *testing.T) {
	in := `{"url":"http://a/","a":1,"b":[2],"c":"3"}`
	for _, tc := range []struct {
		edit func(r *Record)
		want string
	}{
		{func(r *Record) { r.SetInt("d", 4) }, `{"url":"http://a/","a":1,"b":[2],"c":"3","d":4}`},
		{func(r *Record) { r.SetInt("b", 5) }, `{"url":"http://a/","a":1,"b":5,"c":"3"}`},
		{func(r *Record) { r.SetString("url", "x") }, `{"url":"x","a":1,"b":[2],"c":"3"}`},
		{func(r *Record) { r.Delete("a"); r.SetBool("e", true) }, `{"url":"http://a/","b":[2],"c":"3","e":true}`},
		{func(r *Record) { r.Delete("url"); r.Delete("c"); r.SetInt("a", 0) }, `{"a":0,"b":[2]}`},
		{func(r *Record) { r.SetInt("c", 1); r.SetInt("url", 2) }, `{"url":2,"a":1,"b":[2],"c":1}`},
	} {
		r, err := Parse([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		tc.edit(r)
		if got := string(r.AppendJSON(nil)); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

func TestURLIsCachedButFollowsChanges(t *testing.T) {
	r, err := Parse([]byte(`{"url":"http://a/\u00e9"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.URL() != "http://a/é" {
		t.Fatalf("URL %q", r.URL())
	}
	r.SetString("url", "http://b/")
	if r.URL() != "http://b/" {
		t.Fatalf("URL after SetString %q", r.URL())
	}
	r.Delete("url")
	if r.URL() != "" {
		t.Fatalf("URL after Delete %q", r.URL())
	}
	p, err := Parse([]byte(`http://x/"q"`))
	if err != nil {
		t.Fatal(err)
	}
	if p.URL() != `http://x/"q"` || string(p.AppendJSON(nil)) != `{"url":"http://x/\"q\""}` {
		t.Fatalf("URL %q written as %s", p.URL(), p.AppendJSON(nil))
	}
}

func TestParseErrorMessages(t *testing.T) {
	for line, want := range map[string]string{
		`{broken`:                      "invalid JSON: unterminated object",
		`{"url":"x"} x`:                "invalid JSON: data after the object",
		`{"url":"x","n":01}`:           "invalid JSON: expected ',' or '}' in object at offset 16",
		`{"url":"x","n":tru}`:          "invalid JSON: invalid value at offset 15",
		`{"url":"x","s":"\q"}`:         "invalid JSON: invalid escape in string at offset 16",
		"{\"url\":\"x\",\"s\":\"\t\"}": "invalid JSON: control character in string at offset 16",
		`{"url":"x",}`:                 "invalid JSON: expected a string key at offset 11",
		`{"url":2}`:                    `"url" is not a string`,
		`{"a":"x"}`:                    `record has no "url" field`,
	} {
		_, err := Parse([]byte(line))
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%s) error %v, want %s", line, err, want)
		}
	}
	deep := `{"url":"x","d":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + "}"
	if _, err := Parse([]byte(deep)); err == nil || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Errorf("nesting past %d: %v", maxDepth, err)
	}
	if json.Valid([]byte(deep)) {
		t.Error("encoding/json accepts the nesting the test expects it to reject")
	}
	ok := `{"url":"x","d":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + "}"
	if _, err := Parse([]byte(ok)); err != nil || !json.Valid([]byte(ok)) {
		t.Errorf("nesting of %d: %v", maxDepth, err)
	}
}

func TestDecodeFastPathsMatchEncodingJSON(t *testing.T) {
	r, err := Parse([]byte(`{"url":"u","l":["a","\u00e9\n","\ud800x"],"s":"q\"","f":-1.5e3,"e":[],"m":["a",1],"big":1e999}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"l", "e", "m", "s", "f", "big"} {
		raw, _ := r.Raw(k)
		for _, mk := range []func() any{func() any { return new([]string) }, func() any { return new(string) }, func() any { return new(float64) }} {
			got, want := mk(), mk()
			_, gerr := r.Decode(k, got)
			werr := json.Unmarshal(raw, want)
			if (gerr == nil) != (werr == nil) || (werr == nil && !reflect.DeepEqual(got, want)) {
				t.Errorf("Decode(%s, %T) = %v, %v; encoding/json %v, %v", k, got, got, gerr, want, werr)
			}
		}
	}
}

func TestInputReuseGivesTheSameRecords(t *testing.T) {
	in := "http://a/1\n" + `{"url":"http://b/\u00e9","l":["x","y"],"n":1}` + "\n{bad\n" +
		`{"url":"http://c/` + strings.Repeat("c", 1<<20) + `","k":{"a":[1,2]}}` + "\n" +
		"http://d/\"q\"\n" + `{ "url" : "http://e/", "z" : 2 }` + "\nhttp://f/\xff\n" +
		`{"url":"http://g/","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}` + "\nhttp://h/\n"
	run := func(reuse bool) (out, stderr string, urls []string) {
		var o, e bytes.Buffer
		w := NewWriter(&o)
		input := &Input{Tool: "t", Stdin: strings.NewReader(in), Stderr: &e, Reuse: reuse}
		err := input.Each(context.Background(), nil, func(r *Record) error {
			urls = append(urls, r.URL())
			var l []string
			r.Decode("l", &l)
			r.SetInt("n", int64(len(l)+r.Line))
			return w.Write(r)
		})
		if err != nil {
			t.Fatal(err)
		}
		w.Flush()
		return o.String(), e.String(), urls
	}
	out, stderr, urls := run(false)
	rout, rstderr, rurls := run(true)
	if rout != out || rstderr != stderr {
		t.Fatalf("with Reuse:\n%.300s\n%s\nwithout:\n%.300s\n%s", rout, rstderr, out, stderr)
	}
	// The URLs kept from earlier records are intact.
	if !slices.Equal(rurls, urls) || len(urls) != 8 || urls[0] != "http://a/1" || urls[3] != `http://d/"q"` {
		for i := range rurls {
			if i >= len(urls) || rurls[i] != urls[i] {
				t.Errorf("url %d: %.80q, want %.80q", i, rurls[i], urls[i%len(urls)])
			}
		}
		t.Fatalf("%d urls with Reuse, %d without", len(rurls), len(urls))
	}
	if strings.Count(out, "\n") != 8 || !strings.Contains(out, `{"url":"http://b/\u00e9","l":["x","y"],"n":4}`) {
		t.Fatalf("output %.400s", out)
	}
}

// Every time a tool writes has one width: three fraction digits, UTC, so
// whole seconds and nanoseconds do not change the column.
func TestSetTimeFixedWidth(t *testing.T) {
	zone := time.FixedZone("MSK", 3*3600)
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), `"2026-11-23T10:00:00.000Z"`},
		{time.Date(2026, 11, 23, 10, 0, 0, 120_000_000, time.UTC), `"2026-11-23T10:00:00.120Z"`},
		{time.Date(2026, 11, 23, 13, 0, 0, 123_456_789, zone), `"2026-11-23T10:00:00.123Z"`},
	} {
		r := New("http://x.test/")
		r.SetTime("at", tc.in)
		if raw, _ := r.Raw("at"); string(raw) != tc.want {
			got := string(raw)
			t.Errorf("SetTime(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// parseSimpleFloat gives exactly strconv.ParseFloat's value on every
// number it accepts, and declines the forms it does not handle.
func TestParseSimpleFloatMatchesParseFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []string{"0", "-0", "1", "0.1", "0.3", "123456789012345", "0.00000000000001", "-9.99", "1.5", "007", "2.50"}
	for range 200000 {
		digits := 1 + rng.IntN(15)
		b := make([]byte, 0, 20)
		if rng.IntN(4) == 0 {
			b = append(b, '-')
		}
		dot := rng.IntN(digits + 1)
		for d := 0; d < digits; d++ {
			if d == dot && d > 0 {
				b = append(b, '.')
			}
			b = append(b, byte('0'+rng.IntN(10)))
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		want, err := strconv.ParseFloat(c, 64)
		got, ok := parseSimpleFloat([]byte(c))
		if !ok || err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%q: got %v (ok %v), ParseFloat %v (%v)", c, got, ok, want, err)
		}
	}
	for _, c := range []string{"", "-", ".5", "5.", "1e5", "1.2.3", "1234567890123456", "+1", "0x10", " 1", "NaN", "-.5", "1.5.", "1..2", "12345678901234.56", "1-2", "--1", "1 "} {
		if _, ok := parseSimpleFloat([]byte(c)); ok {
			t.Errorf("%q accepted", c)
		}
	}
}
