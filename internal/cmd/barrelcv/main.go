// Command barrelcv cross-validates ways of learning barrel's ranking
// model within the tuning half of the judged queries, so that a way is
// chosen without looking at the held-out half: the tuning half's judged
// queries and the known-item queries of half the pages (as barrel train
// takes them) are cut into K folds; each fold is ranked by a model
// learnt on the other folds, and the folds' MRR@10 (of re-ranking each
// query's first 200 results) are averaged, for the judged and the
// known-item queries apart.
//
//	go run ./internal/cmd/barrelcv -index IDX [-docroot /usr/share/doc/python3.11/html] [-k 5] [-ways hand,one4,folds5,bags8] [-l2 0.01] [-steps 300] [-derived]
//
// A way is hand (the hand weights, learnt from nothing), oneR (one model
// by coordinate ascent with R restarts), derivedR (the same, learning
// the derived features' weights too: ireval.TrainDerived), foldsK (the
// mean of K models, each learnt without one fold of K, one restart each:
// ireval.Folds), bagsN (the mean of N models learnt on bootstrap
// samples, one restart each: ireval.Bag), or pair, lambda or softmax
// (gradient descent on a pairwise logistic loss, LambdaRank's weighted
// one or the top-one softmax cross-entropy, with -l2, -steps and
// -derived: ireval.Pairwise), each with "ca" appended to go on by
// coordinate ascent (one restart) from it. The seed is 1.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/ireval"
)

func main() {
	index := flag.String("index", "", "barrel index of the crawled pages (scripts/barrel-eval.sh builds one)")
	docroot := flag.String("docroot", "/usr/share/doc/python3.11/html", "the site's files (genindex-all.html)")
	k := flag.Int("k", 5, "folds of the cross-validation")
	ways := flag.String("ways", "hand,one4,folds5,bags8", "comma-separated ways of learning to compare")
	l2 := flag.Float64("l2", 0.01, "the pairwise ways' penalty on the squared weights")
	derived := flag.Bool("derived", false, "the pairwise ways learn the derived features too")
	steps := flag.Int("steps", 300, "the pairwise ways' steps of gradient descent")
	flag.Parse()
	if *index == "" {
		fail(fmt.Errorf("-index is required"))
	}
	learners := map[string]func([][]ireval.Candidates, barrel.Model) barrel.Model{}
	for _, w := range strings.Split(*ways, ",") {
		var n int
		switch {
		case w == "hand":
			learners[w] = func(_ [][]ireval.Candidates, hand barrel.Model) barrel.Model { return hand }
		case scan(w, "one%d", &n):
			learners[w] = func(sets [][]ireval.Candidates, hand barrel.Model) barrel.Model {
				m, _ := ireval.Train(sets, hand, 1, n)
				return m
			}
		case scan(w, "derived%d", &n):
			learners[w] = func(sets [][]ireval.Candidates, hand barrel.Model) barrel.Model {
				m, _ := ireval.TrainDerived(sets, hand, 1, n)
				return m
			}
		case scan(w, "folds%d", &n):
			learners[w] = func(sets [][]ireval.Candidates, hand barrel.Model) barrel.Model {
				return ireval.Folds(sets, hand, 1, 1, n)
			}
		case scan(w, "bags%d", &n):
			learners[w] = func(sets [][]ireval.Candidates, hand barrel.Model) barrel.Model {
				return ireval.Bag(sets, hand, 1, 1, n)
			}
		case w == "pair" || w == "lambda" || w == "pairca" || w == "lambdaca" || w == "softmax" || w == "softmaxca":
			learners[w] = func(sets [][]ireval.Candidates, hand barrel.Model) barrel.Model {
				opts := ireval.PairwiseOptions{Lambda: strings.HasPrefix(w, "lambda"), Softmax: strings.HasPrefix(w, "softmax"), Derived: *derived, L2: *l2, Steps: *steps}
				m := ireval.Pairwise(sets, hand, opts)
				if strings.HasSuffix(w, "ca") {
					m, _ = ireval.Train(sets, m, 1, 1) // learns the derived weights if m has any
				}
				return m
			}
		default:
			fail(fmt.Errorf("-ways: %q is not hand, oneR, foldsK, bagsN, pair, lambda, pairca or lambdaca", w))
		}
	}
	all, err := ireval.LoadGenIndex(*docroot)
	if err != nil {
		fail(err)
	}
	tuning, _ := ireval.Split(ireval.Sample(all, 1500))
	idx, err := barrel.Open(*index)
	if err != nil {
		fail(err)
	}
	defer idx.Close()
	judged, err := ireval.Collect(idx, tuning, ireval.PathKey)
	if err != nil {
		fail(err)
	}
	known, err := ireval.KnownItemQueries(idx, ireval.PathKey)
	if err != nil {
		fail(err)
	}
	knownTuning, _ := ireval.Split(known)
	knownCs, err := ireval.Collect(idx, knownTuning, ireval.PathKey)
	if err != nil {
		fail(err)
	}
	hand := barrel.HandModel(&barrel.DefaultWeights)
	fmt.Printf("| way | judged queries | MRR@10, judged | known-item queries | MRR@10, known-item |\n|---|---:|---:|---:|---:|\n")
	for _, w := range strings.Split(*ways, ",") {
		sumJ, sumK := 0.0, 0.0
		for f := range *k {
			trJ, teJ := fold(judged, *k, f)
			trK, teK := fold(knownCs, *k, f)
			m := learners[w]([][]ireval.Candidates{trJ, trK}, hand)
			sumJ += ireval.MRR(teJ, &m)
			sumK += ireval.MRR(teK, &m)
		}
		fmt.Printf("| %s | %d | %.4f | %d | %.4f |\n", w, len(judged), sumJ/float64(*k), len(knownCs), sumK/float64(*k))
	}
}

// fold splits cs into the queries but the f-th of every k and the f-th.
func fold(cs []ireval.Candidates, k, f int) (train, test []ireval.Candidates) {
	for i, c := range cs {
		if i%k == f {
			test = append(test, c)
		} else {
			train = append(train, c)
		}
	}
	return train, test
}

// scan reports whether s is format with one integer, setting *n.
func scan(s, format string, n *int) bool {
	_, err := fmt.Sscanf(s, format, n)
	return err == nil && fmt.Sprintf(format, *n) == s
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "barrelcv:", err)
	os.Exit(1)
}
