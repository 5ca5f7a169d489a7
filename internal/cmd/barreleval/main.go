// Command barreleval judges barrel's ranking on human relevance judgments
// and compares it with a plain BM25 (k1 1.2, b 0.75, over the title and
// body text of the same pages, with the same analysis), printing a
// Markdown table of MRR@10, nDCG@10 and Recall@10.
//
//	go run ./internal/cmd/barreleval -index IDX -docroot /usr/share/doc/python3.11/html [-sample 1500] [-half held-out] [-weights JSON] [-model FILE] [-misses] [-causes]
//	go run ./internal/cmd/barreleval -russian
//
// The Python set: the documentation's own index of terms (genindex-all.html
// in -docroot) gives the queries and their relevant pages (see
// pkg/barrel/ireval); the index IDX must hold the same pages crawled
// without the genindex pages (scripts/barrel-eval.sh builds it), so that
// the judgments do not reach the ranking as anchor text. A result is
// judged by its URL's path. The sample is split by a hash of the query
// into a tuning half, on which barrel's weights were chosen, and a
// held-out half, reported.
//
// The Russian set: generated pages whose nouns appear in their case forms
// (ireval.RussianSet), indexed twice in a temporary directory, with and
// without stemming.
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"github.com/sekitei/crawlkit/pkg/barrel/ireval"
)

func main() {
	index := flag.String("index", "", "barrel index of the crawled pages")
	docroot := flag.String("docroot", "/usr/share/doc/python3.11/html", "the site's files (genindex-all.html and the pages' titles)")
	sample := flag.Int("sample", 1500, "judged queries kept (a deterministic sample)")
	half := flag.String("half", "held-out", "which half to report: tuning, held-out or both")
	russian := flag.Bool("russian", false, "evaluate the generated Russian set, with and without stemming")
	weights := flag.String("weights", "", "JSON of barrel weights to use instead of the defaults (for tuning)")
	modelFile := flag.String("model", "", "rank with a learnt model (barrel train's --out) instead of the weights' own")
	misses := flag.Bool("misses", false, "after the table, list on stderr the reported half's queries whose relevant page is not first: query, rank (0 if not in the top 10), first result, relevant pages")
	causes := flag.Bool("causes", false, "after the table, group the reported half's misses by what put another page first (the first result's features against the relevant page's) and print the counts; -misses lists each with its cause")
	flag.Parse()
	var w *barrel.Weights
	if *weights != "" {
		dw := barrel.DefaultWeights
		if err := json.Unmarshal([]byte(*weights), &dw); err != nil {
			fail(fmt.Errorf("-weights: %w", err))
		}
		w = &dw
	}
	if *modelFile != "" {
		m, err := barrel.ReadModel(*modelFile)
		if err != nil {
			fail(err)
		}
		model = m
	}
	fmt.Println("| set | ranker | queries | MRR@10 | nDCG@10 | Recall@10 |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	if *russian {
		if err := russianSet(w); err != nil {
			fail(err)
		}
		return
	}
	if *index == "" {
		fail(fmt.Errorf("-index is required (or -russian)"))
	}
	if err := pythonSet(*index, *docroot, *sample, *half, w, *misses, *causes); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "barreleval:", err)
	os.Exit(1)
}

func row(set, ranker string, m ireval.Metrics) {
	fmt.Printf("| %s | %s | %d | %.3f | %.3f | %.3f |\n", set, ranker, m.Queries, m.MRR, m.NDCG, m.Recall)
}

// model, when set (-model), ranks barrel's results.
var model *barrel.Model

func barrelSearch(idx *barrel.Index, w *barrel.Weights, key func(string) string) func(string) ([]string, error) {
	return func(q string) ([]string, error) {
		r, err := idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true, Weights: w, Model: model, Literal: true})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, res := range r.Results {
			out = append(out, key(res.URL))
		}
		return out, nil
	}
}

// bm25Of indexes the fetched pages of idx, title and body text, in a BM25.
func bm25Of(idx *barrel.Index, opt analysis.Options, key func(string) string) (*ireval.BM25, error) {
	m := ireval.NewBM25(opt)
	err := ireval.EachPage(idx, func(u, title string, text []byte) error {
		m.Add(key(u), title, text)
		return nil
	})
	return m, err
}

func pythonSet(dir, docroot string, sample int, half string, w *barrel.Weights, misses, causes bool) error {
	all, err := ireval.LoadGenIndex(docroot)
	if err != nil {
		return err
	}
	tuning, heldOut := ireval.Split(ireval.Sample(all, sample))
	idx, err := barrel.Open(dir)
	if err != nil {
		return err
	}
	defer idx.Close()
	bm, err := bm25Of(idx, analysis.Options{}, ireval.PathKey)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "barreleval: %d judged entries in %s, %d sampled; %d pages\n", len(all), filepath.Join(docroot, "genindex-all.html"), min(sample, len(all)), bm.Len())
	halves := []struct {
		name string
		qs   []ireval.Query
	}{{"tuning", tuning}, {"held-out", heldOut}}
	for _, h := range halves {
		if half != "both" && half != h.name {
			continue
		}
		set := "Python docs index of terms, " + h.name
		mb, err := ireval.Evaluate(h.qs, 10, barrelSearch(idx, w, ireval.PathKey))
		if err != nil {
			return err
		}
		m25, _ := ireval.Evaluate(h.qs, 10, func(q string) ([]string, error) { return bm.Search(q, 10), nil })
		row(set, "barrel", mb)
		if misses {
			if err := listMisses(h.name, h.qs, barrelSearch(idx, w, ireval.PathKey)); err != nil {
				return err
			}
		}
		row(set, "BM25 (title + body)", m25)
		if causes {
			if err := missCauses(idx, w, h.name, h.qs, misses); err != nil {
				return err
			}
		}
	}
	return nil
}

func russianSet(w *barrel.Weights) error {
	pages, queries := ireval.RussianSet(1, 8)
	tmp, err := os.MkdirTemp("", "barreleval")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	const base = "http://ru.test/"
	for _, c := range []struct {
		name string
		opt  analysis.Options
	}{{"barrel, stemming", analysis.Options{}}, {"barrel, no stemming", analysis.Options{NoStem: true}}} {
		dir := filepath.Join(tmp, fmt.Sprint(c.opt.NoStem))
		b, err := barrel.NewBuilder(dir, barrel.Options{Analysis: c.opt})
		if err != nil {
			return err
		}
		for _, p := range pages {
			if err := b.Add(base+p.Path, []byte(p.HTML())); err != nil {
				b.Close()
				return err
			}
		}
		err = b.Commit()
		b.Close()
		if err != nil {
			return err
		}
		idx, err := barrel.Open(dir)
		if err != nil {
			return err
		}
		m, err := ireval.Evaluate(queries, 10, barrelSearch(idx, w, ireval.PathKey))
		idx.Close()
		if err != nil {
			return err
		}
		row("Russian, generated", c.name, m)
	}
	for _, c := range []struct {
		name string
		opt  analysis.Options
	}{{"BM25, stemming", analysis.Options{}}, {"BM25, no stemming", analysis.Options{NoStem: true}}} {
		bm := ireval.NewBM25(c.opt)
		for _, p := range pages {
			bm.Add(p.Path, p.Title, []byte(p.Body))
		}
		m, _ := ireval.Evaluate(queries, 10, func(q string) ([]string, error) { return bm.Search(q, 10), nil })
		row("Russian, generated", c.name, m)
	}
	return nil
}

// listMisses writes, on stderr, each query whose first result is not
// relevant: its half, text, the rank of its first relevant result (0
// when none is in the top 10), the first result and the relevant pages.
func listMisses(half string, qs []ireval.Query, search func(string) ([]string, error)) error {
	for _, q := range qs {
		ranked, err := search(q.Text)
		if err != nil {
			return err
		}
		rank := 0
		for i, r := range ranked {
			if slices.Contains(q.Relevant, r) {
				rank = i + 1
				break
			}
		}
		if rank == 1 {
			continue
		}
		first := ""
		if len(ranked) > 0 {
			first = ranked[0]
		}
		fmt.Fprintf(os.Stderr, "miss\t%s\t%q\t%d\t%s\t%s\n", half, q.Text, rank, first, strings.Join(q.Relevant, " "))
	}
	return nil
}

// missCauses groups the queries of qs whose relevant page is not first
// by what put another page first, comparing the first result's features
// with those of the best-placed relevant page among the first
// ireval.TrainDepth (the candidates a model re-ranks, ordered as the
// search orders them), and prints a table of the misses and the
// reciprocal rank lost by cause; with list, each miss on stderr too.
func missCauses(idx *barrel.Index, w *barrel.Weights, half string, qs []ireval.Query, list bool) error {
	m := model
	if m == nil {
		if w == nil {
			w = &barrel.DefaultWeights
		}
		hand := barrel.HandModel(w)
		m = &hand
	}
	cs, err := ireval.Collect(idx, qs, ireval.PathKey)
	if err != nil {
		return err
	}
	causes := []string{
		"the first page holds more of the query's idf (coordination)",
		"the first page has the query's words in its title, the relevant page not",
		"both have them in the title, the first more",
		"both pages define the words",
		"the first page defines the words, the relevant page not",
		"the relevant page defines the words and still loses",
		"the first page has more hits of the words (text score)",
		"prior and other features",
		"the relevant page is not among the candidates",
	}
	count, lost := make([]int, len(causes)), make([]float64, len(causes))
	for qi, c := range cs {
		order := make([]int, len(c.Keys))
		score := make([]float64, len(c.Keys))
		for i := range order {
			order[i] = i
			score[i] = m.Score(&c.F[i], c.Prior[i])
		}
		slices.SortStableFunc(order, func(a, b int) int {
			if c.Matched[a] != c.Matched[b] {
				return c.Matched[b] - c.Matched[a]
			}
			return cmp.Compare(score[b], score[a])
		})
		rank := slices.IndexFunc(order, func(i int) bool { return slices.Contains(c.Relevant, c.Keys[i]) })
		if rank == 0 {
			continue
		}
		cause, rr := len(causes)-1, 1.0
		first := ""
		if rank > 0 {
			if rank < 10 {
				rr = 1 - 1/float64(rank+1)
			}
			t, r := order[0], order[rank]
			ft, fr := &c.F[t], &c.F[r]
			first = c.Keys[t]
			switch {
			case c.Matched[t] > c.Matched[r]:
				cause = 0
			case ft[barrel.FeatTitleMatch] > 0 && fr[barrel.FeatTitleMatch] == 0:
				cause = 1
			case fr[barrel.FeatTitleMatch] > 0 && ft[barrel.FeatTitleMatch] > fr[barrel.FeatTitleMatch]:
				cause = 2
			case ft[barrel.FeatDef] > 0 && fr[barrel.FeatDef] > 0:
				cause = 3
			case ft[barrel.FeatDef] > 0:
				cause = 4
			case fr[barrel.FeatDef] > 0:
				cause = 5
			case ft[barrel.FeatText] > fr[barrel.FeatText]:
				cause = 6
			default:
				cause = 7
			}
		} else if len(c.Keys) > 0 {
			first = c.Keys[order[0]]
		}
		count[cause]++
		lost[cause] += rr
		if list {
			fmt.Fprintf(os.Stderr, "cause\t%s\t%q\t%d\t%s\t%s\t%s\n", half, qs[qi].Text, rank+1, first, strings.Join(c.Relevant, " "), causes[cause])
		}
	}
	fmt.Printf("\n| %s half: cause of a miss | misses | reciprocal rank lost |\n|---|---:|---:|\n", half)
	for i, name := range causes {
		fmt.Printf("| %s | %d | %.1f |\n", name, count[i], lost[i])
	}
	return nil
}
