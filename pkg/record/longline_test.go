package record

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
)

// repeatReader yields n bytes of c without holding them.
type repeatReader struct {
	n int
	c byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	if len(p) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = r.c
	}
	r.n -= len(p)
	return len(p), nil
}

func TestMaxLineSkipsAHugeLineWithoutHoldingIt(t *testing.T) {
	const huge = 64 << 20
	in := io.MultiReader(
		strings.NewReader("https://a.example/\n"),
		&repeatReader{n: huge, c: 'x'},
		strings.NewReader("\nhttps://b.example/\r\n"),
		strings.NewReader(strings.Repeat("y", 300<<10)+"\n"), // above Max, below two buffers
		strings.NewReader("https://c.example/"),
	)
	var stderr bytes.Buffer
	inp := &Input{Tool: "t", Stdin: in, Stderr: &stderr, MaxLine: 100 << 10}
	var urls []string
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := inp.Each(context.Background(), nil, func(r *Record) error {
		urls = append(urls, r.URL())
		return nil
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(urls, " "); got != "https://a.example/ https://b.example/ https://c.example/" {
		t.Fatalf("records %q", got)
	}
	want := "t: line 2: line longer than 102400 bytes: skipped\nt: line 4: line longer than 102400 bytes: skipped\n"
	if stderr.String() != want {
		t.Fatalf("stderr %q, want %q", stderr.String(), want)
	}
	if inp.Bad != 2 {
		t.Fatalf("Bad %d", inp.Bad)
	}
	// The 64 MB line is read through, never gathered: what is allocated
	// stays within a few buffers, far below the line.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("%d bytes allocated reading a %d-byte line", alloc, huge)
	}
}

func TestWithoutMaxLineALongLineIsKept(t *testing.T) {
	line := strings.Repeat("z", 600<<10)
	inp := &Input{Tool: "t", Stdin: strings.NewReader("https://a.example/" + line + "\n")}
	n := 0
	if err := inp.Each(context.Background(), nil, func(r *Record) error {
		n = len(r.URL())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(line)+len("https://a.example/") {
		t.Fatalf("url of %d bytes", n)
	}
}
