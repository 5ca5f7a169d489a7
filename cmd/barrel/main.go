// Command barrel builds and searches the index of the 1998 Google paper.
// See pkg/barrelcli for the command line and pkg/barrel for the index.
package main

import (
	"os"

	"github.com/sekitei/crawlkit/pkg/barrelcli"
	"github.com/sekitei/crawlkit/pkg/clikit"
)

func main() { os.Exit(barrelcli.Main(os.Args, clikit.StdEnv())) }
