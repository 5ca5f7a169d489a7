package record

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// pickKeys are the keys the Picker tests ask for: a duplicate, one the
// seeds lack and "url" twice over (as a key and as the url check).
var pickKeys = []string{"url", "n", "x", "missing", "url", "a"}

// checkPick holds Pick to ParseView on one line: where Pick takes the line,
// ParseView accepts it and every picked value is the record's Raw, byte for
// byte; where ParseView takes a plain object with unescaped keys in valid
// UTF-8, so does Pick.
func checkPick(t *testing.T, p *Picker, line []byte) {
	t.Helper()
	var r Record
	err := ParseView(&r, line)
	ok := p.Pick(line)
	if ok {
		if err != nil {
			t.Fatalf("Pick took %q, ParseView: %v", line, err)
		}
		for k, key := range pickKeys {
			raw, has := r.Raw(key)
			if got := p.Value(k); has != (got != nil) || !bytes.Equal(got, raw) {
				t.Fatalf("%q: Pick's %q = %q, Raw gives %q (%v)", line, key, got, raw, has)
			}
			// Number: RawFloat's value, for every bare number of the
			// simple form (and for no other value).
			v, ok := p.Number(k)
			want, wok, werr := RawFloat(key, raw)
			_, simple := parseSimpleFloat(raw)
			if ok != (simple && len(raw) > 0 && raw[0] != '"') || ok && (!wok || werr != nil || math.Float64bits(v) != math.Float64bits(want)) {
				t.Fatalf("%q: Pick's number %q = %v (%v), RawFloat %v %v %v", line, key, v, ok, want, wok, werr)
			}
		}
		return
	}
	trimmed := bytes.TrimSpace(line)
	if err == nil && !r.borrowed {
		return // a plain URL or a line ParseView copied (not UTF-8)
	}
	if err == nil && len(trimmed) > 0 && trimmed[0] == '{' && !bytes.Contains(trimmed, []byte(`\`)) {
		t.Fatalf("Pick left %q, which ParseView takes as it is", line)
	}
}

func TestPick(t *testing.T) {
	p := NewPicker(pickKeys...)
	for _, s := range []string{
		`{"url":"http://a/","n":1,"x":[1,{"url":"inner"}],"a":"b"}`,
		` {"n":2, "url" : "u" ,"url":"second","a":{"n":3}} `,
		`{"url":"u"}`, `{"url":"u","x":"é\u00e9"}`, `{"url":"u","a":null}`,
		`{"url":1}`, `{"n":1}`, `{"url":"u"`, `{"url":"u"}x`, `{"url":"u","\u0061":1}`,
		"{\"url\":\"\xff\"}", `http://plain/`, `{}`, `{"url":"u","n":01}`,
	} {
		checkPick(t, p, []byte(s))
	}
	// Taken: the common record; left: the rest, each with ParseView's word.
	if !p.Pick([]byte(`{"url":"u","n":1}`)) || string(p.Value(1)) != "1" || p.Value(2) != nil {
		t.Errorf("Pick of a plain record: %q %q", p.Value(1), p.Value(2))
	}
	for _, s := range []string{`{"url":1}`, `{"url":"u"`, `http://plain/`, `{"url":"u","\u0061":1}`, "{\"url\":\"\xff\"}"} {
		if p.Pick([]byte(s)) {
			t.Errorf("Pick took %q", s)
		}
	}
}

func FuzzPick(f *testing.F) {
	for _, s := range []string{
		`{"url":"http://a/","n":1,"x":[1,{"url":"inner"}],"a":"b"}`, `{"url":"u","url":"v","n":"1"}`,
		`{ "url" : "u" , "n" : -0.5e+3 , "l" : [ "a" , "\u00e9" ] }`, `{"url":"u","\u0061":1,"a":2}`,
		"{\"url\":\"u\",\"c\":\"\t\"}", `{"url":"u","t":tru}`, "\u00a0{\"url\":\"u\"}", `[1]`,
	} {
		f.Add([]byte(s))
	}
	p := NewPicker(pickKeys...)
	f.Fuzz(func(t *testing.T, line []byte) { checkPick(t, p, line) })
}

// Pick agrees with ParseView on many generated lines: keys equal to the
// picked ones, or sharing a prefix of up to 16 bytes with them (guessAt's
// word compare), near the end of the line or not, values and keys with
// bytes that are not ASCII (valid UTF-8 or not: isASCII's fast test), in
// orders that the key guess gets right and wrong, and broken lines.
func TestPickGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	keys := []string{"url", "urlx", "ur", "n", "nn", "x", "a", "aaaaaaaaaaaaaaaaaa", "missing", "missinG", "é", "u\xffl"}
	vals := []string{`"u"`, `"http://a/é"`, "\"\xff\"", `1`, `-0.5e+3`, `[1,"é"]`, `{"url":"in"}`, `null`, `true`, `"a\"b"`, `tru`, `"`,
		`0`, `-0`, `0.5`, `-0.0001`, `123456789012345`, `1234567890123456`, `12345678.1234567`, `1.2345678901234567`,
		`99999999999999999999999`, `1.5E3`, `1e`, `01`, `-`, `1.`, `-a`, `0.30000000000000004`, `"1.5"`, `7.0e0`}
	p := NewPicker(pickKeys...)
	for i := 0; i < 100_000; i++ {
		var b bytes.Buffer
		b.WriteByte('{')
		for n := rng.IntN(6); n > 0; n-- {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			if rng.IntN(8) == 0 {
				b.WriteByte(' ')
			}
			b.WriteString(`"` + keys[rng.IntN(len(keys))] + `":`)
			b.WriteString(vals[rng.IntN(len(vals))])
		}
		if rng.IntN(20) > 0 {
			b.WriteByte('}')
		}
		checkPick(t, p, b.Bytes())
	}
}

// scanNumberValue ends and fails where scanNumber does, on random strings
// of number bytes, and where it reads a number, that is parseSimpleFloat's
// value of the same bytes, bit for bit.
func TestScanNumberValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	const alphabet = "0123456789012345678901234567890123456789-.eE+x"
	for i := 0; i < 200_000; i++ {
		b := make([]byte, 1+rng.IntN(22))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		if rng.IntN(2) == 0 {
			b[0] = "-0123456789"[rng.IntN(11)]
		}
		end, serr := scanNumber(b, 0)
		vend, v, simple, verr := scanNumberValue(b, 0)
		if (serr == nil) != (verr == nil) || serr == nil && end != vend {
			t.Fatalf("%q: scanNumber %d %v, scanNumberValue %d %v", b, end, serr, vend, verr)
		}
		if serr != nil {
			continue
		}
		want, wok := parseSimpleFloat(b[:end])
		if simple != wok || simple && math.Float64bits(v) != math.Float64bits(want) {
			t.Fatalf("%q: scanNumberValue %v (%v), parseSimpleFloat %v (%v)", b[:end], v, simple, want, wok)
		}
	}
}
