package pipes

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sekitei/crawlkit/internal/scripttest"
	"github.com/sekitei/crawlkit/pkg/barrelcli"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/fetchcli"
	"github.com/sekitei/crawlkit/pkg/opiccli"
	"github.com/sekitei/crawlkit/pkg/recrawlcli"
	"github.com/sekitei/crawlkit/pkg/sekiteicli"
	"github.com/sekitei/crawlkit/pkg/urlfeatcli"
)

// TestMain makes every tool a command of the scripts, on $PATH, so that
// `exec sh -c 'cat urls | urlfeat | sekitei'` runs real processes.
func TestMain(m *testing.M) {
	tool := func(main func([]string, clikit.Env) int) func() {
		return func() { os.Exit(main(os.Args, clikit.StdEnv())) }
	}
	testscript.Main(m, map[string]func(){
		"urlfeat": tool(urlfeatcli.Main),
		"sekitei": tool(sekiteicli.Main),
		"opic":    tool(opiccli.Main),
		"recrawl": tool(recrawlcli.Main),
		"fetch":   tool(fetchcli.Main),
		"barrel":  tool(barrelcli.Main),
	})
}

// TestScripts runs the scripts of testdata/script. Commands of their own:
// "serve IP DIR" serves DIR over HTTP on a free port of the loopback
// address IP and sets $SERVER to its base URL; "expand FILE..." replaces
// $VARIABLES in each FILE by their values.
func TestScripts(t *testing.T) {
	scripttest.Run(t, map[string]scripttest.Cmd{"serve": serve, "expand": expand})
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
}

func expand(ts *testscript.TestScript, neg bool, args []string) {
	for _, name := range args {
		path := ts.MkAbs(name)
		b, err := os.ReadFile(path)
		ts.Check(err)
		ts.Check(os.WriteFile(path, []byte(os.Expand(string(b), ts.Getenv)), 0o644))
	}
}
