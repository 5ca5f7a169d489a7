package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sekitei/crawlkit/internal/scripttest"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/sekiteicli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"sekitei": func() { os.Exit(sekiteicli.Main(os.Args, clikit.StdEnv())) },
	})
}

// TestScripts runs the txtar scripts in testdata/script.
func TestScripts(t *testing.T) { scripttest.Run(t, nil) }
