// Package scripttest runs a tool's txtar CLI tests the same way for every
// tool: scripts in testdata/script, $TESTDATA set to the repository's
// testdata directory, and a few commands that testscript lacks.
package scripttest

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// Cmd is a custom testscript command.
type Cmd = func(ts *testscript.TestScript, neg bool, args []string)

// Run runs the scripts of testdata/script of the calling package (a
// cmd/<tool> directory) with the common commands and the extra ones given.
//
//	sleep D          waits for the duration D
//	mkfifo NAME      makes a named pipe: an input that never ends
//	truncate FILE N  cuts FILE to N bytes, as a crash mid-write would
func Run(t *testing.T, extra map[string]Cmd) {
	t.Helper()
	td, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	cmds := map[string]Cmd{"sleep": sleep, "mkfifo": mkfifo, "truncate": truncate}
	for name, c := range extra {
		cmds[name] = c
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("TESTDATA", td)
			return nil
		},
		Cmds: cmds,
	})
}

func sleep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sleep DURATION")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	time.Sleep(d)
}

func mkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo NAME")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
}

func truncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: truncate FILE N")
	}
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	ts.Check(os.Truncate(ts.MkAbs(args[0]), n))
}
