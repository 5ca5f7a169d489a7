package barrel

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

// TestKillChild is the child of TestKill: it adds batches to the index in
// $BARREL_KILL_DIR until it is killed.
func TestKillChild(t *testing.T) {
	dir := os.Getenv("BARREL_KILL_DIR")
	if dir == "" {
		return // run only as TestKill's child
	}
	site := synth.New(100000, 3000, 9)
	for batch := 0; ; batch++ {
		b, err := NewBuilder(dir, Options{MergeFactor: 2, PageRankEvery: 3, Batch: strconv.Itoa(batch)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 150 {
			k := batch*100 + i // 100 new pages, 50 re-crawled with new content
			if i >= 100 {
				k = (batch*37 + i) % (batch*100 + 100)
			}
			if err := b.Add(site.URL(k), site.Page((k+batch)%site.N)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
}

// TestKill kills (SIGKILL) a process adding batches at several moments:
// each time the index must open, verify, answer, and take the next batch.
// An index opened before the process started (as a server holds one)
// answers as it did throughout: the files it maps never shrink below
// what it reads, though the next build truncates what the dead one left.
func TestKill(t *testing.T) {
	dir := t.TempDir()
	answer := func(idx *Index) string {
		r, err := idx.Search("the", SearchOptions{N: 20})
		if err != nil {
			t.Fatal(err)
		}
		var s strings.Builder
		for _, x := range r.Results {
			fmt.Fprintf(&s, "%d %s %q %g %q\n", x.Doc, x.URL, x.Title, x.Score, x.Snippet)
		}
		return s.String()
	}
	for round, delay := range []time.Duration{300, 700, 1100, 1600, 2300} {
		var reader *Index
		var before string
		if _, err := os.Stat(dir + "/" + manifestName); err == nil {
			reader = open(t, dir)
			before = answer(reader)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$")
		cmd.Env = append(os.Environ(), "BARREL_KILL_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay * time.Millisecond) // a kill point, not a measurement
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if _, err := os.Stat(dir + "/" + manifestName); err != nil {
			continue // killed before the first commit
		}
		idx, err := Open(dir)
		if err != nil {
			t.Fatalf("round %d: after kill -9: %v", round, err)
		}
		if err := idx.Verify(); err != nil {
			t.Fatalf("round %d: after kill -9: %v", round, err)
		}
		if _, err := idx.Search("the", SearchOptions{N: 3}); err != nil {
			t.Fatalf("round %d: search after kill -9: %v", round, err)
		}
		batches := idx.Manifest().Batches
		idx.Close()
		// The next batch goes in over what the dead build left.
		b, err := NewBuilder(dir, Options{Batch: fmt.Sprintf("after-kill-%d", round)})
		if err != nil {
			t.Fatal(err)
		}
		b.Add(fmt.Sprintf("http://after.test/%d", round), []byte("<title>after the kill</title>"))
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		b.Close()
		idx = open(t, dir)
		if err := idx.Verify(); err != nil {
			t.Fatal(err)
		}
		if m := idx.Manifest(); m.Batches != batches+1 {
			t.Errorf("round %d: %d batches, want %d", round, m.Batches, batches+1)
		}
		idx.Close()
		if reader != nil {
			if got := answer(reader); got != before {
				t.Errorf("round %d: the index opened before the kill answers\n%s\nwhere it answered\n%s", round, got, before)
			}
			reader.Close()
		}
	}
	if _, err := os.Stat(dir + "/" + manifestName); err != nil {
		t.Fatal("no batch was ever committed")
	}
}
