package urlfeat

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/record"
)

// The Annotator's direct record for a plain URL line is byte for byte what
// the record layer writes for the same URL with the same fields set, on
// every bundled URL and on URLs that need escapes; and an object line gets
// the same fields, its own kept.
func TestAnnotatorMatchesRecordLayer(t *testing.T) {
	urls := append(bundledURLs(t), `http://a.b/x"y\z?q="&r=\`, "http://a.b/%22%5C/x\u2028y", " http://a.b/trimmed\t", "http://a.b/\u00e9t\u00e9")
	var an Annotator
	var viaRecord Extractor
	for _, u := range urls {
		got, err := an.AppendLine(nil, []byte(u))
		if err != nil {
			t.Fatalf("%q: %v", u, err)
		}
		r, err := record.Parse([]byte(u))
		if err != nil {
			t.Fatal(err)
		}
		f, _ := viaRecord.Extract(r.URL())
		r.SetString("host", viaRecord.Host())
		r.SetRaw("features", f.AppendJSON(nil))
		if want := r.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", u, got, want)
		}
		var decoded []string
		if err := json.Unmarshal(f.AppendJSON(nil), &decoded); err != nil || strings.Join(decoded, "\n") != strings.Join(f.Strings(), "\n") {
			t.Fatalf("%q: features %s decode to %q, %v", u, f.AppendJSON(nil), decoded, err)
		}
		u = r.URL()
		obj := append([]byte(`{"n":1,"url":`), record.AppendString(nil, u)...)
		obj = append(obj, `,"features":["stale"],"z":[true]}`...)
		line, err := an.AppendLine(nil, obj)
		if err != nil {
			t.Fatalf("%s: %v", obj, err)
		}
		var rec struct {
			N        int      `json:"n"`
			URL      string   `json:"url"`
			Host     string   `json:"host"`
			Features []string `json:"features"`
			Z        []bool   `json:"z"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if rec.N != 1 || rec.URL != u || rec.Host != viaRecord.Host() || len(rec.Z) != 1 ||
			len(rec.Features) != f.Len() || f.Len() > 0 && rec.Features[0] != string(f.At(0)) {
			t.Fatalf("object line %s gave %s", obj, line)
		}
	}
}

// A bad line is an error and leaves the output as it was.
func TestAnnotatorBadLines(t *testing.T) {
	var an Annotator
	for _, line := range []string{"ftp://a.b/c", "/relative", `{"url":`, `{"no_url":1}`, `{"url":"mailto:x@y"}`} {
		out, err := an.AppendLine([]byte("kept"), []byte(line))
		if err == nil || string(out) != "kept" {
			t.Errorf("%q: %q, %v", line, out, err)
		}
	}
}

// jsonPlain, eight bytes at a time, agrees with the byte classes for every
// byte value at every place of strings up to 19 bytes.
func TestJSONPlain(t *testing.T) {
	slow := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	for _, fill := range []byte{' ', '!', '#', '[', ']', 'a', 0x7e} {
		for n := 0; n < 20; n++ {
			for at := 0; at < n; at++ {
				for c := 0; c < 256; c++ {
					b := bytes.Repeat([]byte{fill}, n)
					b[at] = byte(c)
					if got, want := jsonPlain(string(b)), slow(string(b)); got != want {
						t.Fatalf("jsonPlain(%q) = %v, want %v", b, got, want)
					}
				}
			}
		}
	}
}

// The direct record of a plain URL line, whose JSON strings skip the
// escaper when they need no escape, is what the record layer writes, for
// any line the Annotator takes.
func FuzzAnnotatePlainLine(f *testing.F) {
	for _, u := range []string{"http://lenta.ru/news/2013/09/30/mid/", `http://a.b/x"y\z?q="&r=\`, "http://a.b/%22%5C/x\u2028y\u2029", "http://Ex.AMPLE:80/%E2%80%A8.%5c?%22", "http://пример.рф/\u00e9", "http://a%0Ab/"} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u string) {
		var an Annotator
		got, err := an.AppendLine(nil, []byte(u))
		if err != nil {
			return
		}
		r, err := record.Parse([]byte(u))
		if err != nil {
			t.Fatalf("%q: the Annotator took it, the record layer: %v", u, err)
		}
		var e Extractor
		feats, _ := e.Extract(r.URL())
		r.SetString("host", e.Host())
		r.SetRaw("features", feats.AppendJSON(nil))
		if want := r.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", u, got, want)
		}
	})
}

// The Annotator's fast path for printable ASCII lines gives what the
// general one gives (record.PlainURL, Extract with urlx.Split's control
// check, the record layer's JSON), output and error alike, on many
// generated lines: good URLs, and URLs with control characters, quotes,
// backslashes, bytes that are not ASCII, escapes, spaces around them, other
// schemes, no host, and lines that are not URLs at all.
func TestAnnotatorFastPathMatchesGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	parts := []string{"http://", "https://", "HTTP://", "ftp://", "//", "http:/", "a.example", "B.Example:8080",
		"x@h.test", "/", "/", "/p", "/2013", "/a1b", "/x.html", "%D0%9F", "%zz", "%2F", "?", "&", "=", "q=1", "+",
		"#frag", " ", "\t", "\"", "\\", "\x01", "\x7f", "é", "\u2028", "{", "}", "[", ":", ".", "-", "_", "~"}
	var an Annotator
	var general Extractor
	fast := 0
	for i := 0; i < 200_000; i++ {
		var b strings.Builder
		if rng.IntN(4) > 0 {
			b.WriteString([]string{"http://", "https://"}[rng.IntN(2)])
			b.WriteString([]string{"a.example", "h7.test", "Mixed.Case.ORG:443", "u:p@x.y"}[rng.IntN(4)])
		}
		for n := rng.IntN(12); n > 0; n-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		line := []byte(b.String())
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 && trimmed[0] != '{' && jsonPlain(string(trimmed)) {
			fast++
		}
		got, gotErr := an.AppendLine([]byte("kept"), line)
		u, plain := record.PlainURL(line)
		if !plain {
			continue // not a plain URL line: the general path for both
		}
		var want []byte
		var wantErr error
		if _, err := general.Extract(u); err != nil {
			want, wantErr = []byte("kept"), lineError(err, u)
		} else {
			r, err := record.Parse(line)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			r.SetString("host", general.Host())
			r.SetRaw("features", general.Features().AppendJSON(nil))
			want = r.AppendJSON([]byte("kept"))
		}
		if !bytes.Equal(got, want) || (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%q:\n got %s, %v\nwant %s, %v", line, got, gotErr, want, wantErr)
		}
	}
	if fast < 50_000 {
		t.Fatalf("only %d lines took the fast path", fast)
	}
}
