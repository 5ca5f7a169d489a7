package content

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

func TestDecode(t *testing.T) {
	text := []byte(strings.Repeat("hello world ", 1000))
	var gz, zl, raw, br bytes.Buffer
	w1 := gzip.NewWriter(&gz)
	w1.Write(text)
	w1.Close()
	w2 := zlib.NewWriter(&zl)
	w2.Write(text)
	w2.Close()
	w3, _ := flate.NewWriter(&raw, 5)
	w3.Write(text)
	w3.Close()
	w4 := brotli.NewWriter(&br)
	w4.Write(text)
	w4.Close()
	for enc, body := range map[string][]byte{"gzip": gz.Bytes(), "x-gzip": gz.Bytes(), "deflate": zl.Bytes(),
		"DEFLATE ": raw.Bytes(), "br": br.Bytes(), "": text, "identity": text} {
		got, err := Decode(body, enc, 1<<20)
		if err != nil || !bytes.Equal(got, text) {
			t.Errorf("%q: %d bytes, %v", enc, len(got), err)
		}
	}
	// Two codings: gzip applied first, then br.
	var both bytes.Buffer
	w5 := brotli.NewWriter(&both)
	w5.Write(gz.Bytes())
	w5.Close()
	if got, err := Decode(both.Bytes(), "gzip, br", 1<<20); err != nil || !bytes.Equal(got, text) {
		t.Errorf("gzip, br: %v", err)
	}
	if _, err := Decode(text, "compress", 1<<20); !errors.Is(err, ErrUnknownEncoding) {
		t.Errorf("compress: %v", err)
	}
	if got, err := Decode(gz.Bytes()[:len(gz.Bytes())/2], "gzip", 1<<20); err == nil || len(got) == 0 {
		t.Errorf("truncated gzip: %d bytes, %v", len(got), err)
	}
}

func TestBomb(t *testing.T) {
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for i := 0; i < 64; i++ { // 64 MiB of zeros in ~64 KiB
		w.Write(zero)
	}
	w.Close()
	got, err := Decode(gz.Bytes(), "gzip", 4<<20)
	if !errors.Is(err, ErrTooLarge) || len(got) != 4<<20 {
		t.Fatalf("bomb: %d bytes, %v", len(got), err)
	}
}

func TestToUTF8(t *testing.T) {
	cp1251 := []byte("<title>\xcf\xf0\xe8\xe2\xe5\xf2</title>") // "Привет"
	for _, c := range []struct {
		body []byte
		ct   string
		want string
		enc  string
	}{
		{cp1251, "text/html; charset=windows-1251", "Привет", "windows-1251"},
		{append([]byte(`<meta charset="windows-1251">`), cp1251...), "text/html", "Привет", "windows-1251"},
		{[]byte("<title>Привет</title>"), "text/html", "Привет", "utf-8"},
		{[]byte("\xEF\xBB\xBF<title>x</title>"), "text/html", "<title>x</title>", "utf-8"},
		{[]byte("<title>caf\xe9</title>"), "text/html", "café", "windows-1252"},
	} {
		got, enc := ToUTF8(c.body, c.ct)
		if !strings.Contains(string(got), c.want) || enc != c.enc {
			t.Errorf("%q: got %q (%s), want %q (%s)", c.body, got, enc, c.want, c.enc)
		}
	}
}
