package warc

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the reader: it must never panic, hang
// or return a record whose body overruns its Content-Length, and after
// damage it must move forward to the end of the data.
func FuzzReader(f *testing.F) {
	f.Add([]byte("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n"))
	f.Add([]byte("WARC/1.0\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n\r\n\r\nWARC/1.1\r\nContent-Length: 3\r\n\r\nab"))
	f.Add(gzipBytes("WARC/1.1\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n"))
	f.Add(append(gzipBytes("WARC/1.1\r\nContent-Length: 1\r\n\r\na\r\n\r\n"), gzipBytes("WARC/1.1\r\nContent-Length: 99999999999\r\n\r\n")...))
	f.Add([]byte("\x1f\x8b"))
	f.Add([]byte("\r\n\r\nWARC/1.1\r\nContent-Length: 1x\r\n\r\n"))
	f.Add([]byte("WARC/1.1\r\nContent-Length: 9\r\n\r\nab\r\n\r\nWARC/1.1\r\nContent-Length: 1\r\n\r\nc\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		last := int64(-1)
		for i := 0; i < 2*len(data)+4; i++ {
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			var se *SkipError
			if errors.As(err, &se) {
				if se.Next >= 0 && se.Next <= last {
					t.Fatalf("resumes at %d, not after the last record at %d", se.Next, last)
				}
				continue
			}
			if err != nil {
				t.Fatalf("not a SkipError from a bytes.Reader: %v", err)
			}
			if rec.Offset <= last {
				t.Fatalf("record at %d after one at %d", rec.Offset, last)
			}
			last = rec.Offset
			n, _ := io.Copy(io.Discard, rec.Body)
			if n > rec.ContentLength() {
				t.Fatalf("body %d bytes over Content-Length %d", n, rec.ContentLength())
			}
		}
		t.Fatalf("no end after %d calls on %d bytes", 2*len(data)+4, len(data))
	})
}

func BenchmarkWriteExchange(b *testing.B) {
	w, err := Create(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	body := bytes.Repeat([]byte("<p>some html text of a page, words and more words</p>\n"), 200) // ~10 KB
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := w.Write(exchange("http://bench.test/page", string(body))...); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	w, _ := Create(Options{Dir: dir})
	body := string(bytes.Repeat([]byte("<p>some html text of a page, words and more words</p>\n"), 200))
	for i := 0; i < 1000; i++ {
		w.Write(exchange("http://bench.test/page", body)...)
	}
	w.Close()
	data, _ := io.ReadAll(must(openFile(w.Files()[0])))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, _ := NewReader(bytes.NewReader(data))
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			io.Copy(io.Discard, rec.Body)
		}
	}
}
