// Command pydocs writes the link graph of the Python documentation
// (Debian's python3.11-doc) as the edge list testdata/opic/pydocs.tsv, the
// real web graph of opic's tests. Pages are named by their path in the tree
// and an edge is written once however often the page repeats the link (the
// file stays small; self-links are kept):
//
//	go run ./pkg/opic/internal/pydocs > testdata/opic/pydocs.tsv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/sekitei/crawlkit/pkg/opic/internal/linkgraph"
)

func main() {
	root := flag.String("root", "/usr/share/doc/python3.11/html", "the documentation tree")
	prefix := flag.String("prefix", "", "prefix of page names, https://docs.python.org/3.11/ for URLs")
	flag.Parse()
	edges, err := linkgraph.Walk(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pydocs:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	for k, e := range edges {
		if k > 0 && e == edges[k-1] {
			continue
		}
		fmt.Fprintf(w, "%s%s\t%s%s\n", *prefix, e.Src, *prefix, e.Dst)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "pydocs:", err)
		os.Exit(1)
	}
}
