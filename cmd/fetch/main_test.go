package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/fetchcli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fetch": func() { os.Exit(fetchcli.Main(os.Args, clikit.StdEnv())) },
	})
}

// TestScripts runs the txtar scripts in testdata/script. Two commands help
// them: "serve IP DIR" serves DIR over HTTP on a free port of the loopback
// address IP and sets $SERVER to its base URL and $PORT to its port; "expand FILE" replaces
// $VARIABLES in FILE by their values; "sleep D" waits for the duration D.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"serve":  serve,
			"expand": expand,
			"sleep":  sleep,
		},
	})
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

func sleep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sleep DURATION")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	time.Sleep(d)
}
