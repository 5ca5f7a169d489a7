package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sekitei/crawlkit/internal/scripttest"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/fetchcli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fetch": func() { os.Exit(fetchcli.Main(os.Args, clikit.StdEnv())) },
	})
}

// TestScripts runs the txtar scripts in testdata/script. Three commands of
// its own help them: "gzipfile SRC DST" writes SRC gzipped to DST; "serve IP DIR" serves DIR over HTTP on a free port of
// the loopback address IP and sets $SERVER to its base URL and $PORT to its
// port; "expand FILE" replaces $VARIABLES in FILE by their values.
func TestScripts(t *testing.T) {
	scripttest.Run(t, map[string]scripttest.Cmd{"serve": serve, "expand": expand, "gzipfile": gzipFile})
}

func serve(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: serve IP DIR")
	}
	ln, err := net.Listen("tcp", args[0]+":0")
	ts.Check(err)
	srv := &http.Server{Handler: http.FileServer(http.Dir(ts.MkAbs(args[1])))}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	ts.Setenv("SERVER", fmt.Sprintf("http://%s", ln.Addr()))
	ts.Setenv("PORT", fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
}

func expand(ts *testscript.TestScript, neg bool, args []string) {
	for _, name := range args {
		path := ts.MkAbs(name)
		b, err := os.ReadFile(path)
		ts.Check(err)
		ts.Check(os.WriteFile(path, []byte(os.Expand(string(b), ts.Getenv)), 0o644))
	}
}

func gzipFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gzipfile SRC DST")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	ts.Check(zw.Close())
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), buf.Bytes(), 0o644))
}
