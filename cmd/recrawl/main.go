// Command recrawl decides what to recrawl: crawl values under host and
// global rate limits, the static optimum, change-rate estimation and a
// policy simulator. See pkg/recrawlcli for the command line and
// pkg/recrawl for the methods.
package main

import (
	"os"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/recrawlcli"
)

func main() { os.Exit(recrawlcli.Main(os.Args, clikit.StdEnv())) }
