// Command sitegen writes the demo's generated site (see internal/sitegen)
// into a directory for a static web server.
//
//	go run ./internal/cmd/sitegen -out DIR [-seed 1] [-day 0] [-port 18080] [-hosts a.test,b.test]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/sekitei/crawlkit/internal/sitegen"
)

func main() {
	cfg := sitegen.DefaultConfig()
	out := flag.String("out", "", "directory to write the site into (required)")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed")
	flag.IntVar(&cfg.Day, "day", cfg.Day, "render the site as of this day (0 = first)")
	flag.IntVar(&cfg.Articles, "articles", cfg.Articles, "articles on day 0")
	flag.IntVar(&cfg.Wiki, "wiki", cfg.Wiki, "encyclopedia pages")
	flag.IntVar(&cfg.PerDay, "per-day", cfg.PerDay, "new articles per day")
	flag.IntVar(&cfg.Port, "port", cfg.Port, "port in the sites' URLs (0: none)")
	hosts := flag.String("hosts", strings.Join(cfg.Hosts, ","), "comma-separated host names, one site each")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "sitegen: -out DIR is required")
		os.Exit(2)
	}
	cfg.Hosts = strings.Split(*hosts, ",")
	web := sitegen.Generate(cfg)
	if err := web.Write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "sitegen:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "sitegen: %d pages on %d hosts (day %d) in %s\n", len(web.Pages), len(cfg.Hosts), cfg.Day, *out)
}
