// Command benchqueries prints a query set sampled from the HTML pages
// under a directory (package benchqueries), one query a line, for
// scripts/barrel-batch-bench.sh.
//
//	benchqueries --html-dir /usr/share/doc/python3.11/html --n 2000 --seed 1
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/sekitei/crawlkit/internal/benchqueries"
	"github.com/sekitei/crawlkit/pkg/barrel"
)

func main() {
	dir := flag.String("html-dir", "", "the pages' `DIR`ectory")
	n := flag.Int("n", 2000, "queries to print")
	seed := flag.Uint64("seed", 1, "sampling seed")
	flag.Parse()
	if err := run(*dir, *n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "benchqueries:", err)
		os.Exit(1)
	}
}

func run(dir string, n int, seed uint64) error {
	files, err := barrel.HTMLFiles(dir, "http://pages.test/")
	if err != nil {
		return err
	}
	var pages []benchqueries.Page
	for _, f := range files {
		body, err := os.ReadFile(f.Path)
		if err != nil {
			return err
		}
		title, text, _ := bytes.Cut(barrel.PageText(f.URL, body), []byte("\n"))
		pages = append(pages, benchqueries.Page{Title: string(title), Text: string(text)})
	}
	if len(pages) == 0 {
		return fmt.Errorf("%s: no HTML pages", dir)
	}
	w := bufio.NewWriter(os.Stdout)
	for _, q := range benchqueries.Sample(pages, n, seed) {
		fmt.Fprintln(w, q)
	}
	return w.Flush()
}
