package pipes

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

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
// address IP and sets $SERVER to its base URL (and $PORT to its port); "expand FILE..." replaces
// $VARIABLES in each FILE by their values.
func TestScripts(t *testing.T) {
	scripttest.Run(t, map[string]scripttest.Cmd{"serve": serve, "expand": expand, "screen": screen})
}

// screen SOCKET FILE REGEXP waits until the tmux pane of the server at
// SOCKET shows a line matching REGEXP and writes the pane to FILE: what a
// user sees on a real terminal. It gives up after a minute.
func screen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: screen SOCKET FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[2])
	ts.Check(err)
	var out []byte
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out, err = exec.Command("tmux", "-S", ts.MkAbs(args[0]), "capture-pane", "-p").Output()
		if err == nil && re.Match(out) {
			ts.Check(os.WriteFile(ts.MkAbs(args[1]), out, 0o644))
			return
		}
	}
	ts.Fatalf("the pane never matched %q; last seen:\n%s", args[2], out)
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
