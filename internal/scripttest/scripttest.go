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

	"github.com/sekitei/crawlkit/internal/boltdamage"
)

// Cmd is a custom testscript command.
type Cmd = func(ts *testscript.TestScript, neg bool, args []string)

// Run runs the scripts of testdata/script of the calling package (a
// cmd/<tool> directory) with the common commands and the extra ones given.
//
//	sleep D          waits for the duration D
//	mkfifo NAME      makes a named pipe: an input that never ends
//	truncate FILE N  cuts FILE to N bytes, as a crash mid-write would
//	flip FILE BUCKET KEY  inverts 256 bytes of the bbolt file FILE centred
//	                 on the stored value of KEY in BUCKET (Go-quoted escapes
//	                 allowed in KEY): a damaged data page
func Run(t *testing.T, extra map[string]Cmd) {
	t.Helper()
	td, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	cmds := map[string]Cmd{"sleep": sleep, "mkfifo": mkfifo, "truncate": truncate, "flip": flip}
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

func flip(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: flip FILE BUCKET KEY")
	}
	key, err := strconv.Unquote(`"` + args[2] + `"`)
	ts.Check(err)
	path := ts.MkAbs(args[0])
	off, n, err := boltdamage.Locate(path, []byte(args[1]), []byte(key))
	ts.Check(err)
	b, err := os.ReadFile(path)
	ts.Check(err)
	start := max(0, off+int64(n)/2-128)
	for i := start; i < start+256 && i < int64(len(b)); i++ {
		b[i] ^= 0xFF
	}
	ts.Check(os.WriteFile(path, b, 0o644))
}
