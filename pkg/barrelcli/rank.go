package barrelcli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"github.com/sekitei/crawlkit/pkg/barrel/ireval"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
)

var (
	modelFlag     = &cli.StringFlag{Name: "model", Usage: "rank with the learnt model in `FILE` (barrel train writes it) instead of the hand-set weights"}
	genindexFlag  = &cli.StringFlag{Name: "genindex", Usage: "judged queries from the index of terms (genindex-all.html) of the Sphinx site in `DIR`"}
	judgmentsFlag = &cli.StringFlag{Name: "judgments", Usage: "judged queries from `FILE`: a query and its relevant pages' paths a line, tab-separated"}
	sampleFlag    = &cli.IntFlag{Name: "sample", Value: 1500, Usage: "keep `N` judged queries (a deterministic sample) before splitting them in halves"}
)

// readModel reads --model, if given.
func readModel(c *cli.Context) (*barrel.Model, error) {
	if !c.IsSet("model") {
		return nil, nil
	}
	return barrel.ReadModel(c.String("model"))
}

// judged loads the judged queries of --genindex or --judgments, sampled
// and split into the tuning and held-out halves.
func judged(c *cli.Context) (tuning, heldOut []ireval.Query, err error) {
	var all []ireval.Query
	switch {
	case c.IsSet("genindex") && c.IsSet("judgments"):
		return nil, nil, clikit.Usagef("give --genindex or --judgments, not both")
	case c.IsSet("genindex"):
		all, err = ireval.LoadGenIndex(c.String("genindex"))
	case c.IsSet("judgments"):
		all, err = ireval.LoadJudgments(c.String("judgments"))
	default:
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if c.Int("sample") < 1 {
		return nil, nil, clikit.Usagef("--sample %d: want at least 1", c.Int("sample"))
	}
	tuning, heldOut = ireval.Split(ireval.Sample(all, c.Int("sample")))
	return tuning, heldOut, nil
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "measure ranking quality: titles, short queries, judged queries",
		UsageText: "barrel eval --index DIR [--misses] [--model FILE] [--genindex DIR | --judgments FILE]",
		Description: `Three measures, one NDJSON line each:

  - every stored page's title as a query: how often the page comes first
    ({"first","no_title","pages","ratio"}, as before);
  - short queries, the way people type: the first two content words of a
    page's title (three when another title begins with the same two; a page
    whose three are shared is left out), and the same of its first heading
    (h1 to h4): how often the page comes first and in the top 3
    ({"set":"short title"|"short first heading","queries","first","top3",
    "first_ratio","top3_ratio"});
  - with --genindex or --judgments, the judged queries' held-out half
    (the half barrel train does not learn from): MRR@10, nDCG@10 and
    Recall@10 of the hand-set weights, of the --model given, and of a plain
    BM25 over the pages' title and body text ({"set":"judged held-out",
    "ranker","queries","mrr10","ndcg10","recall10"}).

Queries are searched as plain words (no query syntax). --model ranks with a
learnt model instead of the hand-set weights. --misses adds one NDJSON line
per title and short query whose page did not come first, with the URL that did.

Example:
   $ barrel eval --index idx
   {"first":484,"no_title":2,"pages":526,"ratio":0.9202}
   {"first":423,"first_ratio":0.9156,"queries":462,"set":"short title","top3":455,"top3_ratio":0.9848}
   {"first":412,"first_ratio":0.8879,"queries":464,"set":"short first heading","top3":446,"top3_ratio":0.9612}
   $ barrel train --index idx --genindex /usr/share/doc/python3.11/html --out model.txt
   $ barrel eval --index idx --genindex /usr/share/doc/python3.11/html --model model.txt`,
		Flags: []cli.Flag{indexFlag,
			&cli.BoolFlag{Name: "misses", Usage: "list the queries whose page did not come first"},
			modelFlag, genindexFlag, judgmentsFlag, sampleFlag,
		},
		Action: evalIndex,
	}
}

func evalIndex(c *cli.Context) error {
	model, err := readModel(c)
	if err != nil {
		return err
	}
	_, heldOut, err := judged(c)
	if err != nil {
		return err
	}
	idx, err := barrel.Open(c.String("index"))
	if err != nil {
		return err
	}
	defer idx.Close()
	opt := barrel.SearchOptions{Model: model}
	out := clikit.Output(c)
	q := barrel.TitleQualityWith(idx, opt)
	// One object a line, its keys sorted.
	line := func(v map[string]any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return out.WriteLine(b)
	}
	if err := line(map[string]any{"first": q.First, "no_title": q.NoTitle, "pages": q.Pages, "ratio": round4(q.Ratio())}); err != nil {
		return err
	}
	if c.Bool("misses") {
		for _, m := range q.Misses {
			r := record.New(m.Want)
			r.SetString("title", m.Title)
			r.SetString("first", m.Got)
			if err := out.Write(r); err != nil {
				return err
			}
		}
	}
	sets, err := barrel.ShortQueries(idx, opt)
	if err != nil {
		return err
	}
	for _, s := range sets {
		if err := line(map[string]any{"set": "short " + s.Name, "queries": s.Queries, "first": s.First, "top3": s.Top3,
			"first_ratio": round4(s.FirstRatio()), "top3_ratio": round4(s.Top3Ratio())}); err != nil {
			return err
		}
		if c.Bool("misses") {
			for _, m := range s.Misses {
				r := record.New(m.Want)
				r.SetString("set", "short "+s.Name)
				r.SetString("query", m.Query)
				r.SetInt("position", int64(m.Position))
				r.SetString("first", m.Got)
				if err := out.Write(r); err != nil {
					return err
				}
			}
		}
	}
	if heldOut == nil {
		return nil
	}
	rankers := []struct {
		name  string
		model *barrel.Model
	}{{"hand weights", nil}}
	if model != nil {
		rankers = append(rankers, struct {
			name  string
			model *barrel.Model
		}{"learnt model", model})
	}
	judgedLine := func(name string, m ireval.Metrics) error {
		return line(map[string]any{"set": "judged held-out", "ranker": name, "queries": m.Queries,
			"mrr10": round4(m.MRR), "ndcg10": round4(m.NDCG), "recall10": round4(m.Recall)})
	}
	for _, rk := range rankers {
		m, err := ireval.Evaluate(heldOut, 10, func(q string) ([]string, error) {
			r, err := idx.Search(q, barrel.SearchOptions{N: 10, NoSnippets: true, Literal: true, Model: rk.model})
			if err != nil {
				return nil, err
			}
			var keys []string
			for _, res := range r.Results {
				keys = append(keys, ireval.PathKey(res.URL))
			}
			return keys, nil
		})
		if err != nil {
			return err
		}
		if err := judgedLine(rk.name, m); err != nil {
			return err
		}
	}
	bm := ireval.NewBM25(analysis.Options{})
	if err := ireval.EachPage(idx, func(u, title string, text []byte) error {
		bm.Add(ireval.PathKey(u), title, text)
		return nil
	}); err != nil {
		return err
	}
	m, _ := ireval.Evaluate(heldOut, 10, func(q string) ([]string, error) { return bm.Search(q, 10), nil })
	return judgedLine("BM25 (title + body)", m)
}

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "learn the ranking's weights from judged queries",
		UsageText: "barrel train --index DIR (--genindex DIR | --judgments FILE) --out FILE [--seed 1] [--restarts 4] [--folds K | --bags N | --derived]",
		Description: `Learns a ranking model from the tuning half of the judged queries (the
half barrel eval does not report): each query's first 200 results, with
their features (the hand-weighted text score, proximity, title match,
title lead, per-field BM25 of title, anchors, headings, body and URL,
coordination, capitalised hits, definitions, emphasised runs and runs
of a definition's markup) and PageRank prior, are re-ranked by
weights set by coordinate ascent on MRR@10, as RankLib does it (one
weight at a time, the best of a few steps, restarts from seeded
perturbations of the hand-set weights); --folds K averages K models,
each learnt so on the queries but one fold of K, and --bags N averages N
models learnt on bootstrap samples of the queries (bagging), and
--derived learns the weights of the derived features too (transforms
and products of the features). The known-item queries (titles,
short queries) of half the pages weigh as much as the judged ones, so the
model keeps finding pages by their titles; --judged-only leaves them out. The prior's weight stays between 0 and 1: it lifts a page's
text score by at most that share. Writes the model as text ("name weight"
lines); barrel search, serve and eval read it with --model. The same
index, queries and --seed give the same model.

Example:
   $ barrel train --index idx --genindex /usr/share/doc/python3.11/html --out model.txt
   barrel: trained on 748 tuning queries and 705 known-item queries: MRR@10 0.9240 with the hand weights, 0.9395 learnt; wrote model.txt
   $ barrel search --index idx --model model.txt json encoder`,
		Flags: []cli.Flag{indexFlag, genindexFlag, judgmentsFlag, sampleFlag,
			&cli.StringFlag{Name: "out", Required: true, Usage: "write the model to `FILE`"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "the seed of the coordinate ascent's order and restarts"},
			&cli.IntFlag{Name: "restarts", Value: 4, Usage: "`N` runs of coordinate ascent (the first from the hand-set weights)"},
			&cli.IntFlag{Name: "bags", Usage: "average `N` models, each learnt on a bootstrap sample of the queries (bagging; 0: one model on them all)"},
			&cli.IntFlag{Name: "folds", Usage: "average `K` models, each learnt on the queries but one fold of K (0: one model on them all)"},
			&cli.BoolFlag{Name: "judged-only", Usage: "learn from the judged queries alone, without the pages' known-item queries"},
			&cli.BoolFlag{Name: "derived", Usage: "learn the derived features' weights too (ln(1 + text), √body, title_match², definition · title_match, title_match · coordination)"},
		},
		Action: func(c *cli.Context) error {
			if !c.IsSet("genindex") && !c.IsSet("judgments") {
				return clikit.Usagef("train needs --genindex DIR or --judgments FILE")
			}
			if c.Bool("derived") && (c.Int("folds") > 0 || c.Int("bags") > 0) {
				return clikit.Usagef("--derived learns one model: not with --folds or --bags")
			}
			tuning, _, err := judged(c)
			if err != nil {
				return err
			}
			if len(tuning) == 0 {
				return fmt.Errorf("no judged query falls in the tuning half")
			}
			idx, err := barrel.Open(c.String("index"))
			if err != nil {
				return err
			}
			defer idx.Close()
			cs, err := ireval.Collect(idx, tuning, ireval.PathKey)
			if err != nil {
				return err
			}
			sets := [][]ireval.Candidates{cs}
			what := fmt.Sprintf("%d tuning queries", len(tuning))
			if !c.Bool("judged-only") {
				// The known-item queries of half the pages keep the model
				// from trading titles and short queries for the judged set.
				known, err := ireval.KnownItemQueries(idx, ireval.PathKey)
				if err != nil {
					return err
				}
				knownTuning, _ := ireval.Split(known)
				kc, err := ireval.Collect(idx, knownTuning, ireval.PathKey)
				if err != nil {
					return err
				}
				sets = append(sets, kc)
				what += fmt.Sprintf(" and %d known-item queries", len(knownTuning))
			}
			hand := barrel.HandModel(&barrel.DefaultWeights)
			handMRR := ireval.Objective(sets, &hand)
			var m barrel.Model
			var mrr float64
			how := fmt.Sprintf("coordinate ascent, seed %d, %d restarts", c.Uint64("seed"), c.Int("restarts"))
			if k := c.Int("folds"); k > 0 {
				m = ireval.Folds(sets, hand, c.Uint64("seed"), c.Int("restarts"), k)
				mrr = ireval.Objective(sets, &m)
				how += fmt.Sprintf(", the mean of %d models each learnt without one fold of %d", k, k)
			} else if bags := c.Int("bags"); bags > 0 {
				m = ireval.Bag(sets, hand, c.Uint64("seed"), c.Int("restarts"), bags)
				mrr = ireval.Objective(sets, &m)
				how += fmt.Sprintf(", the mean of %d models learnt on bootstrap samples", bags)
			} else if c.Bool("derived") {
				m, mrr = ireval.TrainDerived(sets, hand, c.Uint64("seed"), c.Int("restarts"))
				how += ", derived features"
			} else {
				m, mrr = ireval.Train(sets, hand, c.Uint64("seed"), c.Int("restarts"))
			}
			m.Note = fmt.Sprintf("learnt by barrel train (%s) on %s:\nMRR@10 %.4f with the hand weights, %.4f learnt",
				how, what, handMRR, mrr)
			f, err := os.Create(c.String("out"))
			if err != nil {
				return err
			}
			if _, err := m.WriteTo(f); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(clikit.EnvOf(c).Stderr, "barrel: trained on %s: MRR@10 %.4f with the hand weights, %.4f learnt; wrote %s\n",
				what, handMRR, mrr, c.String("out"))
			return nil
		},
	}
}
