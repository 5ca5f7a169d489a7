package record

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// A line over the maximum is returned as a LineTooLongError with its
// number and length, and reading goes on after it; a line of exactly the
// maximum (with or without a carriage return) is read. Both readers, over
// a stream and over memory, agree.
func TestLineReaderMax(t *testing.T) {
	const max = 1000
	input := "short\n" + strings.Repeat("a", 5000) + "\n" + strings.Repeat("b", max) + "\r\n" +
		strings.Repeat("c", max) + "\nlast\n" + strings.Repeat("d", 300000)
	type got struct {
		line string
		n    int
		tl   int // the too-long length, 0 for a line read
	}
	want := []got{{"short", 1, 0}, {"", 2, 5000}, {strings.Repeat("b", max), 3, 0},
		{strings.Repeat("c", max), 4, 0}, {"last", 5, 0}, {"", 6, 300000}}
	for _, mem := range []bool{false, true} {
		lr := NewLineReader(strings.NewReader(input))
		if mem {
			lr = NewBytesLineReader([]byte(input))
		}
		lr.SetMax(max)
		var all []got
		for {
			b, n, err := lr.Next()
			if err == io.EOF {
				break
			}
			var tl *LineTooLongError
			switch {
			case errors.As(err, &tl):
				if tl.Max != max {
					t.Errorf("max %d in the error", tl.Max)
				}
				all = append(all, got{"", n, tl.Len})
			case err != nil:
				t.Fatal(err)
			default:
				all = append(all, got{string(b), n, 0})
			}
		}
		if len(all) != len(want) {
			t.Fatalf("in memory %v: %d lines, want %d: %+v", mem, len(all), len(want), all)
		}
		for i := range want {
			if all[i] != want[i] {
				t.Errorf("in memory %v: line %d: %q %d %d, want %q %d %d", mem, i+1, all[i].line, all[i].n, all[i].tl, want[i].line, want[i].n, want[i].tl)
			}
		}
	}
}

// Input reports a line over MaxLine with its number and goes on; under
// Strict it stops there.
func TestInputSkipsLongLines(t *testing.T) {
	input := `{"url":"http://a.test/1"}` + "\n" + `{"url":"http://a.test/` + strings.Repeat("x", 2000) + `"}` + "\n" + `{"url":"http://a.test/3"}` + "\n"
	for _, strict := range []bool{false, true} {
		var stderr bytes.Buffer
		in := &Input{Tool: "t", Stdin: strings.NewReader(input), Stderr: &stderr, MaxLine: 1000, Strict: strict}
		var urls []string
		err := in.Each(context.Background(), nil, func(r *Record) error {
			urls = append(urls, r.URL())
			return nil
		})
		if !strings.HasPrefix(stderr.String(), "t: line 2: a line of 2024 bytes, longer than a record may be (1000 bytes") {
			t.Errorf("strict %v: stderr %q", strict, stderr.String())
		}
		switch {
		case strict && (!errors.Is(err, ErrStrict) || len(urls) != 1):
			t.Errorf("strict: %v, %v", err, urls)
		case !strict && (err != nil || len(urls) != 2 || urls[1] != "http://a.test/3"):
			t.Errorf("not strict: %v, %v", err, urls)
		}
	}
}

// A gzip stream is read as what it holds, told by its first bytes; text
// passes as it is; a torn gzip stream is an error that says gzip.
func TestDecompressed(t *testing.T) {
	text := strings.Repeat(`{"url":"http://a.test/"}`+"\n", 1000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	for name, in := range map[string][]byte{"gzip": gz.Bytes(), "text": []byte(text)} {
		r, done, err := Decompressed(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		done()
		if err != nil || string(got) != text {
			t.Errorf("%s: %d bytes, %v", name, len(got), err)
		}
	}
	r, done, err := Decompressed(bytes.NewReader(gz.Bytes()[:gz.Len()/2]))
	if err == nil {
		_, err = io.ReadAll(r)
		done()
	}
	if err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("a torn gzip stream: %v", err)
	}
}
