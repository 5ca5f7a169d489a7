// Command opic computes OPIC and adaptive OPIC page importance.
// See pkg/opiccli for the command line and pkg/opic for the method.
package main

import (
	"os"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/opiccli"
)

func main() { os.Exit(opiccli.Main(os.Args, clikit.StdEnv())) }
