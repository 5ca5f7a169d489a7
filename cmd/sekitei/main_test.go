package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/sekiteicli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"sekitei": func() { os.Exit(sekiteicli.Main(os.Args, clikit.StdEnv())) },
	})
}

// TestScripts runs the txtar scripts in testdata/script; $TESTDATA is the
// repository's testdata directory.
func TestScripts(t *testing.T) {
	td, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("TESTDATA", td)
			return nil
		},
	})
}
