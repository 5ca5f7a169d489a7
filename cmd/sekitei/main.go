// Command sekitei cuts a site's URLs into PCRE segments and decides online
// which URLs to fetch under a quota. See pkg/sekiteicli for the command line
// and pkg/sekitei for the method.
package main

import (
	"os"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/sekiteicli"
)

func main() { os.Exit(sekiteicli.Main(os.Args, clikit.StdEnv())) }
