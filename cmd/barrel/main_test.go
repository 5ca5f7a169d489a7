package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rogpeppe/go-internal/testscript"
	htmlcharset "golang.org/x/net/html/charset"

	"github.com/sekitei/crawlkit/internal/scripttest"
	"github.com/sekitei/crawlkit/pkg/barrelcli"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/fetchcli"
	"github.com/sekitei/crawlkit/pkg/warc"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"barrel": func() { os.Exit(barrelcli.Main(os.Args, clikit.StdEnv())) },
		"fetch":  func() { os.Exit(fetchcli.Main(os.Args, clikit.StdEnv())) },
	})
}

// TestScripts runs the txtar scripts in testdata/script, with fetch beside
// barrel so a script can crawl a loopback site and index what it fetched.
func TestScripts(t *testing.T) {
	scripttest.Run(t, map[string]scripttest.Cmd{"mkwarc": mkwarc, "serve": serve, "expand": expand, "encode": encode})
}

// serve IP DIR serves DIR over HTTP on a free port of the loopback address
// IP and sets $SERVER to its base URL. A file NAME.headers beside NAME
// holds response header lines ("X-Robots-Tag: noindex") sent with it.
func serve(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: serve IP DIR")
	}
	dir := ts.MkAbs(args[1])
	files := http.FileServer(http.Dir(dir))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hdr, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path.Clean(r.URL.Path))+".headers")); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(hdr)), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok {
					w.Header().Add(strings.TrimSpace(k), strings.TrimSpace(v))
				}
			}
		}
		files.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", args[0]+":0")
	ts.Check(err)
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	ts.Setenv("SERVER", "http://"+ln.Addr().String())
}

// expand FILE... replaces $VARIABLES in each FILE by their values.
func expand(ts *testscript.TestScript, neg bool, args []string) {
	for _, name := range args {
		p := ts.MkAbs(name)
		b, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(os.Expand(string(b), ts.Getenv)), 0o644))
	}
}

// encode CHARSET SRC DST writes the UTF-8 file SRC to DST in CHARSET (a
// WHATWG label such as windows-1251 or koi8-r), as a legacy site serves it.
func encode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: encode CHARSET SRC DST")
	}
	enc, _ := htmlcharset.Lookup(args[0])
	if enc == nil {
		ts.Fatalf("encode: unknown charset %q", args[0])
	}
	src, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	out, err := enc.NewEncoder().Bytes(src)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), out, 0o644))
}

// mkwarc DIR RECORDS STATUS:URL=FILE[:gzip]... writes the files as HTTP
// responses into DIR/crawl.warc.gz with pkg/warc, as fetch does, and the
// fetch records pointing at them to RECORDS.
func mkwarc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: mkwarc DIR RECORDS STATUS:URL=FILE[:gzip]...")
	}
	w, err := warc.Create(warc.Options{Dir: ts.MkAbs(args[0]), Prefix: "test"})
	ts.Check(err)
	var recs bytes.Buffer
	var written string
	for _, a := range args[2:] {
		status, rest, _ := strings.Cut(a, ":")
		u, file, _ := strings.Cut(rest, "=")
		file, enc, _ := strings.Cut(file, ":")
		body, err := os.ReadFile(ts.MkAbs(file))
		ts.Check(err)
		hdr := "Content-Type: text/html; charset=utf-8\r\n"
		if enc == "gzip" {
			var zb bytes.Buffer
			zw := gzip.NewWriter(&zb)
			zw.Write(body)
			zw.Close()
			body = zb.Bytes()
			hdr += "Content-Encoding: gzip\r\n"
		}
		http := fmt.Sprintf("HTTP/1.1 %s X\r\n%sContent-Length: %d\r\n\r\n", status, hdr, len(body))
		rec := &warc.Record{Header: warc.Header{
			{Name: warc.FieldType, Value: warc.TypeResponse},
			{Name: warc.FieldTargetURI, Value: u},
			{Name: warc.FieldContentType, Value: warc.ContentTypeHTTPResponse},
		}, Body: bytes.NewReader(append([]byte(http), body...))}
		locs, err := w.Write(rec)
		ts.Check(err)
		written = locs[0].File
		fmt.Fprintf(&recs, `{"url":%q,"status":%s,"content_type":"text/html","warc_file":"crawl.warc.gz","warc_offset":%d,"keep":1}`+"\n",
			u, status, locs[0].Offset)
	}
	ts.Check(w.Close())
	ts.Check(os.Rename(written, filepath.Join(ts.MkAbs(args[0]), "crawl.warc.gz")))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), recs.Bytes(), 0o644))
}
