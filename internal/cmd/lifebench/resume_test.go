package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sekitei/crawlkit/internal/crawlsim"
	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/opic"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
	"github.com/sekitei/crawlkit/pkg/sekitei"
)

// TestResumeInPlace ages one crawl to 12 turns in one run, and another to
// 8 turns, stopped there with opic already holding the next chunk (a run
// killed inside a chunk), then resumed to 12: both end in the same state.
func TestResumeInPlace(t *testing.T) {
	cfg := crawlsim.Default()
	cfg.Hosts, cfg.NewPerTurn, cfg.RecrawlPerTurn = 20, 30, 10
	const chunk = 4
	ages := []int{12}

	whole := t.TempDir()
	if err := ageAll(whole, filepath.Join(whole, "crawl"), cfg, ages, chunk); err != nil {
		t.Fatal(err)
	}

	stopped := t.TempDir()
	crawl := filepath.Join(stopped, "crawl")
	a, err := resumeAger(stopped, crawl, cfg, ages, chunk)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := a.apply(chunk); err != nil {
			t.Fatal(err)
		}
	}
	// The kill: opic has committed the third chunk, nothing else has.
	var items []opic.Item
	for tn := 8; tn < 12; tn++ {
		for _, f := range cfg.Turn(tn) {
			it, err := opic.ParseLine(f.Record("", 0).AppendJSON(nil))
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, it)
		}
	}
	if _, err := a.op.Apply(batchID(cfg, 12), items); err != nil {
		t.Fatal(err)
	}
	a.close()
	// A file of the stopped crawl's own: the resumed run must age this
	// directory, not start another.
	if err := os.WriteFile(filepath.Join(crawl, "mark"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := readProgress(crawl); err != nil || p.turns != 8 || p.chunk != chunk {
		t.Fatalf("progress %+v, %v", p, err)
	}

	if err := ageAll(stopped, crawl, cfg, ages, chunk); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(snapshotDir(stopped, 12), "mark")); err != nil {
		t.Fatalf("the crawl was aged again from nothing: %v", err)
	}
	want, got := summarize(t, snapshotDir(whole, 12)), summarize(t, snapshotDir(stopped, 12))
	if got != want {
		t.Fatalf("resumed crawl %+v, aged at once %+v", got, want)
	}
	if want.recrawlPages == 0 || want.indexDocs == 0 || want.recrawlBatch != batchID(cfg, 12) || want.indexBatch != batchID(cfg, 12) {
		t.Fatalf("the crawl did not age: %+v", want)
	}
}

type crawlSummary struct {
	opicPages, recrawlPages, indexDocs                int
	opicBatch, recrawlBatch, sekiteiBatch, indexBatch string
}

func summarize(t *testing.T, dir string) crawlSummary {
	t.Helper()
	var s crawlSummary
	op, err := opic.Open(filepath.Join(dir, "state", "opic.db"), opic.DBOptions{Damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	s.opicPages = op.Len()
	s.opicBatch, _ = op.LastBatch()
	op.Close()
	q, err := queue.Open(filepath.Join(dir, "state", "recrawl.db"), queue.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.recrawlBatch, err = q.LastBatch(); err != nil {
		t.Fatal(err)
	}
	q.Pages(func(queue.PageInfo) error { s.recrawlPages++; return nil })
	q.Close()
	sk, err := sekitei.OpenState(filepath.Join(dir, "state", "sekitei.db"), sekitei.StateOptions{SiteQuota: siteQuota, MinQuota: minQuota, Regrow: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if s.sekiteiBatch, err = sk.LastBatch(); err != nil {
		t.Fatal(err)
	}
	sk.Close()
	idx, err := barrel.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	m := idx.Manifest()
	s.indexDocs, s.indexBatch = idx.Docs(), m.LastBatch
	idx.Close()
	return s
}
