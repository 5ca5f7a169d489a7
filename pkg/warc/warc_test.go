package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

func exchange(uri string, body string) []*Record {
	respID, reqID := NewRecordID(), NewRecordID()
	payload := []byte(body)
	resp := &Record{Header: Header{
		{FieldType, TypeResponse},
		{FieldRecordID, respID},
		{FieldTargetURI, uri},
		{FieldIPAddress, "127.0.0.1"},
		{FieldContentType, ContentTypeHTTPResponse},
		{FieldPayloadDigest, Digest(payload)},
	}, Body: strings.NewReader(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", len(payload), payload))}
	req := &Record{Header: Header{
		{FieldType, TypeRequest},
		{FieldRecordID, reqID},
		{FieldTargetURI, uri},
		{FieldConcurrentTo, respID},
		{FieldContentType, ContentTypeHTTPRequest},
	}, Body: strings.NewReader("GET / HTTP/1.1\r\nHost: x\r\n\r\n")}
	return []*Record{req, resp}
}

func readAll(t *testing.T, path string) []*Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, err := io.ReadAll(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		rec.Body = bytes.NewReader(b)
		out = append(out, rec)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(Options{Dir: dir, Prefix: "t", Info: Header{{"software", "crawlkit test"}}})
	if err != nil {
		t.Fatal(err)
	}
	var locs []Location
	for i := 0; i < 20; i++ {
		l, err := w.Write(exchange(fmt.Sprintf("http://h%d.test/p?q=%d", i%3, i), strings.Repeat("x", i*100))...)
		if err != nil {
			t.Fatal(err)
		}
		if len(l) != 2 || l[1].Offset != l[0].Offset+l[0].Length {
			t.Fatalf("pair not contiguous: %+v", l)
		}
		locs = append(locs, l...)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) != 1 || !strings.HasSuffix(files[0], ".warc.gz") {
		t.Fatalf("files %v", files)
	}
	recs := readAll(t, files[0])
	if len(recs) != 41 {
		t.Fatalf("read %d records, want 41", len(recs))
	}
	if recs[0].Type() != TypeWarcinfo || !strings.Contains(string(mustBytes(recs[0].Body)), "software: crawlkit test\r\n") {
		t.Fatalf("first record %v", recs[0].Header)
	}
	for i, rec := range recs[1:] {
		if rec.Offset != locs[i].Offset {
			t.Errorf("record %d at %d, writer said %d", i, rec.Offset, locs[i].Offset)
		}
		if rec.Version != "WARC/1.1" {
			t.Errorf("version %q", rec.Version)
		}
		b := mustBytes(rec.Body)
		if got := rec.Header.Get(FieldBlockDigest); got != Digest(b) {
			t.Errorf("block digest %s, body hashes to %s", got, Digest(b))
		}
		if rec.Type() == TypeResponse {
			rec.Body = bytes.NewReader(b)
			resp, err := rec.HTTPResponse()
			if err != nil {
				t.Fatal(err)
			}
			payload, _ := io.ReadAll(resp.Body)
			if rec.Header.Get(FieldPayloadDigest) != Digest(payload) || len(payload) != (i/2)*100 {
				t.Errorf("record %d: payload %d bytes, digest mismatch or wrong size", i, len(payload))
			}
		}
	}
	// Every location opens alone.
	for i, l := range locs {
		rec, err := ReadAt(l.File, l.Offset)
		if err != nil {
			t.Fatal(err)
		}
		if rec.ID() != recs[i+1].ID() {
			t.Fatalf("ReadAt(%d) gave %s, want %s", l.Offset, rec.ID(), recs[i+1].ID())
		}
	}
}

func mustBytes(r io.Reader) []byte {
	b, err := io.ReadAll(r)
	if err != nil {
		panic(err)
	}
	if s, ok := r.(io.Seeker); ok {
		s.Seek(0, io.SeekStart)
	}
	return b
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(Options{Dir: dir, MaxSize: 4000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i := 0; i < 30; i++ {
		// Incompressible-ish bodies so each pair is a few hundred bytes.
		l, err := w.Write(exchange("http://a.test/"+fmt.Sprint(i), fmt.Sprintf("%x", time.Now().UnixNano()*int64(i+7)))...)
		if err != nil {
			t.Fatal(err)
		}
		if l[0].File != l[1].File {
			t.Fatal("a request and its response were split across files")
		}
		seen[l[0].File]++
	}
	w.Close()
	if len(w.Files()) < 2 {
		t.Fatalf("no rotation: %v", w.Files())
	}
	total := 0
	for _, f := range w.Files() {
		st, _ := os.Stat(f)
		if st.Size() > 4000 {
			t.Errorf("%s is %d bytes, over MaxSize", f, st.Size())
		}
		recs := readAll(t, f)
		if recs[0].Type() != TypeWarcinfo || recs[0].Header.Get(FieldFilename) != filepath.Base(f) {
			t.Errorf("%s does not open with its warcinfo", f)
		}
		total += len(recs) - 1
	}
	if total != 60 {
		t.Fatalf("%d records across files, want 60", total)
	}
}

func TestConcurrentWriters(t *testing.T) {
	w, err := Create(Options{Dir: t.TempDir(), MaxSize: 50000})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := w.Write(exchange(fmt.Sprintf("http://g%d.test/%d", g, i), strings.Repeat("y", 500))...); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	w.Close()
	n := 0
	for _, f := range w.Files() {
		recs := readAll(t, f)
		for i := 1; i < len(recs); i += 2 {
			if recs[i].Type() != TypeRequest || recs[i+1].Header.Get(FieldRecordID) != recs[i].Header.Get(FieldConcurrentTo) {
				t.Fatalf("%s: records %d,%d are not a request and its response", f, i, i+1)
			}
		}
		n += len(recs) - 1
	}
	if n != 800 {
		t.Fatalf("%d records, want 800", n)
	}
	if _, err := w.Write(exchange("http://late.test/", "")...); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
}

// A plain .warc, one gzip stream for a whole file, folded header lines and
// WARC/1.0 all read.
func TestReadVariants(t *testing.T) {
	plain := "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: <http://x.test/a>\r\nX-Long: one\r\n two\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n" +
		"WARC/1.1\r\nWARC-Type: metadata\r\nContent-Length: 0\r\n\r\n\r\n\r\n"
	check := func(name string, data []byte, wantOffsets []int64) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rec.Version != "WARC/1.0" || rec.TargetURI() != "http://x.test/a" || rec.Header.Get("x-long") != "one two" || string(mustBytes(rec.Body)) != "hello" || rec.Offset != wantOffsets[0] {
			t.Errorf("%s: first record %+v", name, rec)
		}
		rec, err = r.Next()
		if err != nil || rec.Type() != TypeMetadata || rec.Offset != wantOffsets[1] {
			t.Errorf("%s: second record %v %v", name, rec, err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("%s: want EOF, got %v", name, err)
		}
	}
	check("plain", []byte(plain), []int64{0, int64(strings.Index(plain, "WARC/1.1"))})
	var whole bytes.Buffer
	zw := gzip.NewWriter(&whole)
	zw.Write([]byte(plain))
	zw.Close()
	check("one gzip stream", whole.Bytes(), []int64{0, 0})
}

func TestReadErrors(t *testing.T) {
	cases := map[string]string{
		"not warc":       "HTTP/1.1 200 OK\r\n\r\n",
		"no length":      "WARC/1.1\r\nWARC-Type: resource\r\n\r\n",
		"bad length":     "WARC/1.1\r\nContent-Length: -3\r\n\r\n",
		"short body":     "WARC/1.1\r\nContent-Length: 50\r\n\r\nabc",
		"cut in header":  "WARC/1.1\r\nContent-Len",
		"no colon":       "WARC/1.1\r\nnonsense\r\n\r\n",
		"truncated gzip": string(gzipBytes("WARC/1.1\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n")[:20]),
	}
	for name, data := range cases {
		r, err := NewReader(strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var rerr error
		for i := 0; i < 5 && rerr == nil; i++ {
			var rec *Record
			rec, rerr = r.Next()
			if rerr == nil {
				_, rerr = io.ReadAll(rec.Body)
			}
		}
		if rerr == nil || rerr == io.EOF {
			t.Errorf("%s: no error (%v)", name, rerr)
		}
	}
}

func gzipBytes(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

func TestHeaderInjection(t *testing.T) {
	w, _ := Create(Options{Dir: t.TempDir()})
	recs := exchange("http://x.test/a\r\nWARC-Type: forged", "b")
	l, err := w.Write(recs...)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	rec, err := ReadAt(l[0].File, l[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Type() != TypeRequest || len(rec.Header) != len(recs[0].Header) {
		t.Fatalf("header forged: %v", rec.Header)
	}
}

// wget's own WARCs are the model the issue names: our reader must read
// every record of one, checked against wget's CDX index.
func TestReadsWgetWARC(t *testing.T) {
	wget, err := exec.LookPath("wget")
	if err != nil {
		t.Fatal("wget is required (scripts/deps.sh installs it): ", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><a href="/a">a</a> <a href="/b">b</a></html>`)
		case "/a":
			w.Header().Set("Content-Type", "text/plain")
			w.Write(bytes.Repeat([]byte("a"), 100000)) // chunked on the wire
		case "/b":
			http.Error(w, "gone", http.StatusNotFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cmd := exec.Command(wget, "-q", "-r", "-l", "1", "-e", "robots=off", "-P", filepath.Join(dir, "site"),
		"--warc-file="+filepath.Join(dir, "w"), "--warc-cdx", srv.URL+"/")
	cmd.Env = append(os.Environ(), "no_proxy=*", "http_proxy=", "https_proxy=")
	if out, err := cmd.CombinedOutput(); err != nil {
		// wget exits 8 on the 404, which is expected.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 8 {
			t.Fatalf("wget: %v\n%s", err, out)
		}
	}
	path := filepath.Join(dir, "w.warc.gz")
	recs := readAll(t, path)
	types := map[string]int{}
	var sawA bool
	for _, rec := range recs {
		types[rec.Type()]++
		if rec.Type() == TypeResponse && strings.HasSuffix(rec.TargetURI(), "/a") {
			resp, err := rec.HTTPResponse()
			if err != nil {
				t.Fatal(err)
			}
			payload, _ := io.ReadAll(resp.Body)
			sawA = len(payload) == 100000
		}
	}
	if types[TypeWarcinfo] != 1 || types[TypeRequest] < 3 || types[TypeResponse] < 3 || !sawA {
		t.Fatalf("wget WARC read as %v (saw /a whole: %v)", types, sawA)
	}
	// wget's CDX names the offset of every response; each must open alone.
	cdx, err := os.ReadFile(filepath.Join(dir, "w.cdx"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(cdx)), "\n")[1:] {
		f := strings.Fields(line)
		// CDX " CDX a b a m s k r M V g u": k the payload digest, V the offset.
		var off int64
		fmt.Sscan(f[8], &off)
		rec, err := ReadAt(path, off)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type() != TypeResponse || rec.TargetURI() != f[1] && rec.TargetURI() != f[0] {
			t.Errorf("CDX offset %d: %s %s, CDX line %q", off, rec.Type(), rec.TargetURI(), line)
		}
		// Our digest of the payload agrees with wget's, except for a
		// chunked response, where wget hashes the chunked bytes.
		resp, err := rec.HTTPResponse()
		if err != nil {
			t.Fatal(err)
		}
		payload, _ := io.ReadAll(resp.Body)
		chunked := len(resp.TransferEncoding) > 0
		if got := Digest(payload); rec.Header.Get(FieldPayloadDigest) != "sha1:"+f[5] || (got != "sha1:"+f[5]) != chunked {
			t.Errorf("%s: our digest %s, wget's %s (chunked %v)", f[0], got, f[5], chunked)
		}
		n++
	}
	if n < 3 {
		t.Fatalf("CDX has %d lines", n)
	}
}

func openFile(p string) (*os.File, error) { return os.Open(p) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
