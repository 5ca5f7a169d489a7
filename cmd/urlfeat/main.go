// Command urlfeat prints the sekitei URL features of a stream of URLs.
// See pkg/urlfeatcli for the command line and pkg/urlfeat for the features.
package main

import (
	"os"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/urlfeatcli"
)

func main() { os.Exit(urlfeatcli.Main(os.Args, clikit.StdEnv())) }
