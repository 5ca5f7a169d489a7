// Command bleveeval puts bleve on the judged query sets of
// internal/cmd/barreleval: the same pages (read from a barrel index, so
// the two engines see the same crawl), the same queries and halves, the
// same metrics, printed as rows of barreleval's table. It lives in the
// bench module so that the toolkit does not require bleve.
//
//	go run ./cmd/bleveeval -index IDX -docroot /usr/share/doc/python3.11/html [-sample 1500] [-half held-out]
//
// Each page is a bleve document of two text fields, title and body, under
// the default mapping (the standard analyzer: Unicode word breaks, lower
// case, English stop words, no stemming); a query is a match query over
// bleve's composite _all field. Two rows: bleve's default scoring
// (tf-idf) and its BM25 scoring model.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/ireval"
)

func main() {
	index := flag.String("index", "", "barrel index of the crawled pages")
	docroot := flag.String("docroot", "/usr/share/doc/python3.11/html", "the site's files (genindex-all.html)")
	sample := flag.Int("sample", 1500, "judged queries kept (a deterministic sample, as barreleval's)")
	half := flag.String("half", "held-out", "which half to report: tuning, held-out or both")
	header := flag.Bool("header", false, "print the table's header first")
	flag.Parse()
	if *index == "" {
		fail(fmt.Errorf("-index is required"))
	}
	if *header {
		fmt.Println("| set | ranker | queries | MRR@10 | nDCG@10 | Recall@10 |")
		fmt.Println("|---|---|---:|---:|---:|---:|")
	}
	if err := run(*index, *docroot, *sample, *half); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bleveeval:", err)
	os.Exit(1)
}

// page is the document bleve indexes.
type page struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// indexPages reads the fetched pages of the barrel index dir into a bleve
// index (scorch, bleve's default, in a directory under tmp: its BM25 needs
// the field lengths only scorch keeps), scored by model ("" is bleve's
// default).
func indexPages(dir, tmp, model string) (bleve.Index, int, error) {
	idx, err := barrel.Open(dir)
	if err != nil {
		return nil, 0, err
	}
	defer idx.Close()
	m := mapping.NewIndexMapping()
	m.ScoringModel = model
	bi, err := bleve.New(filepath.Join(tmp, "bleve-"+model), m)
	if err != nil {
		return nil, 0, err
	}
	batch := bi.NewBatch()
	n := 0
	err = ireval.EachPage(idx, func(u, title string, text []byte) error {
		if err := batch.Index(ireval.PathKey(u), page{Title: title, Body: string(text)}); err != nil {
			return err
		}
		n++
		if batch.Size() < 500 {
			return nil
		}
		err := bi.Batch(batch)
		batch.Reset()
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return bi, n, bi.Batch(batch)
}

func run(dir, docroot string, sample int, half string) error {
	all, err := ireval.LoadGenIndex(docroot)
	if err != nil {
		return err
	}
	tuning, heldOut := ireval.Split(ireval.Sample(all, sample))
	tmp, err := os.MkdirTemp("", "bleveeval")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, model := range []struct{ name, model string }{
		{"bleve (default scoring, tf-idf)", ""},
		{"bleve (BM25 scoring)", "bm25"},
	} {
		bi, n, err := indexPages(dir, tmp, model.model)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bleveeval: %d pages in bleve, %s\n", n, model.name)
		search := func(q string) ([]string, error) {
			req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q), 10, 0, false)
			res, err := bi.Search(req)
			if err != nil {
				return nil, err
			}
			out := make([]string, 0, len(res.Hits))
			for _, h := range res.Hits {
				out = append(out, h.ID)
			}
			return out, nil
		}
		for _, h := range []struct {
			name string
			qs   []ireval.Query
		}{{"tuning", tuning}, {"held-out", heldOut}} {
			if half != "both" && half != h.name {
				continue
			}
			m, err := ireval.Evaluate(h.qs, 10, search)
			if err != nil {
				return err
			}
			fmt.Printf("| %s | %s | %d | %.3f | %.3f | %.3f |\n", "Python docs index of terms, "+h.name, model.name, m.Queries, m.MRR, m.NDCG, m.Recall)
		}
		bi.Close()
	}
	return nil
}
