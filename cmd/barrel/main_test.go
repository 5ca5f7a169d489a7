package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sekitei/crawlkit/internal/scripttest"
	"github.com/sekitei/crawlkit/pkg/barrelcli"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/warc"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"barrel": func() { os.Exit(barrelcli.Main(os.Args, clikit.StdEnv())) },
	})
}

// TestScripts runs the txtar scripts in testdata/script.
func TestScripts(t *testing.T) {
	scripttest.Run(t, map[string]scripttest.Cmd{"mkwarc": mkwarc})
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
