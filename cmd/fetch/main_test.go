package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// TestScripts runs the txtar scripts in testdata/script. Commands of its
// own help them: "gzipfile SRC DST" writes SRC gzipped to DST; "serve IP
// DIR" serves DIR over HTTP on a free port of the loopback address IP and
// sets $SERVER to its base URL and $PORT to its port; "served N" waits until
// the script's servers have answered N requests other than robots.txt (a
// script then acts on what happened, not on how long it took); "expand
// FILE" replaces $VARIABLES in FILE by their values.
func TestScripts(t *testing.T) {
	scripttest.Run(t, map[string]scripttest.Cmd{"serve": serve, "served": served, "expand": expand, "gzipfile": gzipFile})
}

// pagesServed counts, per running script, the requests its servers have
// answered, robots.txt aside.
var pagesServed sync.Map // *testscript.TestScript -> *atomic.Int64

func served(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: served N")
	}
	want, err := strconv.ParseInt(args[0], 10, 64)
	ts.Check(err)
	c, _ := pagesServed.LoadOrStore(ts, new(atomic.Int64))
	deadline := time.Now().Add(2 * time.Minute)
	for c.(*atomic.Int64).Load() < want {
		if time.Now().After(deadline) {
			ts.Fatalf("served %d of %d requests in 2 minutes", c.(*atomic.Int64).Load(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func serve(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: serve IP DIR")
	}
	ln, err := net.Listen("tcp", args[0]+":0")
	ts.Check(err)
	files := http.FileServer(http.Dir(ts.MkAbs(args[1])))
	c, _ := pagesServed.LoadOrStore(ts, new(atomic.Int64))
	ts.Defer(func() { pagesServed.Delete(ts) })
	count := c.(*atomic.Int64)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		files.ServeHTTP(w, r)
		if !strings.HasSuffix(r.URL.Path, "/robots.txt") {
			count.Add(1)
		}
	})}
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
