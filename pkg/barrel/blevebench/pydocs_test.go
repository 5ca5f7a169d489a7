package blevebench

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/sekitei/crawlkit/pkg/barrel"
)

var (
	pagesDir  = flag.String("barrel.htmldir", "", "HTML pages for BenchmarkQueriesOnPages (the Python docs)")
	queryFile = flag.String("barrel.queryfile", "", "queries, one a line, for BenchmarkQueriesOnPages")
	snipQs    = flag.Int("barrel.snippetqueries", 200, "how many of the queries BenchmarkQueriesOnPages also times with snippets")
)

// BenchmarkQueriesOnPages times the same queries on barrel and bleve over
// the same real pages (-barrel.htmldir, e.g. Debian's python3.11-doc),
// in one process: barrel with and without snippets, bleve (default
// mapping, title and extracted text, a match query with operator AND,
// top 10) with and without highlighting, its counterpart of snippets.
// scripts/barrel-batch-bench.sh runs it beside barrel's batch process.
func BenchmarkQueriesOnPages(b *testing.B) {
	if *pagesDir == "" || *queryFile == "" {
		b.Fatal("give -barrel.htmldir DIR and -barrel.queryfile FILE")
	}
	files, err := barrel.HTMLFiles(*pagesDir, "http://docs.test/")
	if err != nil {
		b.Fatal(err)
	}
	queries := readLines(b, *queryFile)
	for range b.N {
		root := b.TempDir()
		bdir, vdir := filepath.Join(root, "barrel"), filepath.Join(root, "bleve")
		bl, err := barrel.NewBuilder(bdir, barrel.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := bl.AddHTMLFiles(b.Context(), files); err != nil {
			b.Fatal(err)
		}
		if err := bl.Commit(); err != nil {
			b.Fatal(err)
		}
		bl.Close()
		vi, err := bleve.New(vdir, bleve.NewIndexMapping())
		if err != nil {
			b.Fatal(err)
		}
		batch := vi.NewBatch()
		for _, f := range files {
			body, err := os.ReadFile(f.Path)
			if err != nil {
				b.Fatal(err)
			}
			title, text, _ := bytes.Cut(barrel.PageText(f.URL, body), []byte("\n"))
			if err := batch.Index(f.URL, struct{ Title, Body string }{string(title), string(text)}); err != nil {
				b.Fatal(err)
			}
		}
		if err := vi.Batch(batch); err != nil {
			b.Fatal(err)
		}
		idx, err := barrel.Open(bdir)
		if err != nil {
			b.Fatal(err)
		}
		var rank, snip, rankCPU, vrank, vhigh, vrankCPU []time.Duration
		found, vfound := 0, 0
		for i, q := range queries {
			var r *barrel.Response
			w, c := timeQuery(func() { r, err = idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true, Literal: true}) })
			if err != nil {
				b.Fatal(err)
			}
			rank, rankCPU = append(rank, w), append(rankCPU, c)
			if len(r.Results) > 0 {
				found++
			}
			if i < *snipQs {
				w, _ = timeQuery(func() { _, err = idx.Search(q, barrel.SearchOptions{N: 10, Literal: true}) })
				if err != nil {
					b.Fatal(err)
				}
				snip = append(snip, w)
			}

			mq := bleve.NewMatchQuery(q)
			mq.SetOperator(1) // AND, as barrel
			req := bleve.NewSearchRequestOptions(mq, 10, 0, false)
			var res *bleve.SearchResult
			w, c = timeQuery(func() { res, err = vi.Search(req) })
			if err != nil {
				b.Fatal(err)
			}
			vrank, vrankCPU = append(vrank, w), append(vrankCPU, c)
			if res.Total > 0 {
				vfound++
			}
			if i < *snipQs {
				req.Highlight = bleve.NewHighlight()
				w, _ = timeQuery(func() { _, err = vi.Search(req) })
				if err != nil {
					b.Fatal(err)
				}
				vhigh = append(vhigh, w)
			}
		}
		if *benchProfile != "" {
			profileQueries(b, *benchProfile, idx, queries)
		}
		idx.Close()
		vi.Close()
		var sb strings.Builder
		fmt.Fprintf(&sb, "\n%d pages, %d queries (barrel finds %d, bleve %d), the first %d also with snippets\n",
			len(files), len(queries), found, vfound, len(snip))
		row := func(name, metric string, d []time.Duration) {
			fmt.Fprintf(&sb, "%-34s p50 %9.3f ms  p99 %9.3f ms\n", name, ms(percentile(d, 0.5)), ms(percentile(d, 0.99)))
			// as metrics too, for scripts/barrel-batch-bench.sh's summary of its runs
			b.ReportMetric(ms(percentile(d, 0.5)), metric+"-p50-ms")
			b.ReportMetric(ms(percentile(d, 0.99)), metric+"-p99-ms")
		}
		row("barrel, ranking only", "barrel", rank)
		row("barrel, ranking only (thread CPU)", "barrel-cpu", rankCPU)
		row("barrel, with snippets", "barrel-snippets", snip)
		row("bleve, ranking only", "bleve", vrank)
		row("bleve, ranking only (thread CPU)", "bleve-cpu", vrankCPU)
		row("bleve, with highlighting", "bleve-highlight", vhigh)
		fmt.Fprintf(&sb, "ratio bleve/barrel: ranking p50 %.2fx p99 %.2fx; snippets p50 %.2fx p99 %.2fx\n",
			ms(percentile(vrank, 0.5))/ms(percentile(rank, 0.5)), ms(percentile(vrank, 0.99))/ms(percentile(rank, 0.99)),
			ms(percentile(vhigh, 0.5))/ms(percentile(snip, 0.5)), ms(percentile(vhigh, 0.99))/ms(percentile(snip, 0.99)))
		fmt.Fprint(os.Stderr, sb.String())
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func readLines(b *testing.B, name string) []string {
	f, err := os.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}
