// Command fetch fetches URL records politely into records and WARC files.
// See pkg/fetchcli for the command line and pkg/fetch for the fetcher.
package main

import (
	"os"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/fetchcli"
)

func main() { os.Exit(fetchcli.Main(os.Args, clikit.StdEnv())) }
