package recrawlcli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
	"github.com/sekitei/crawlkit/pkg/recrawlcli"
)

// recrawl update compacts a state that one large batch left mostly free
// pages (boltstate.CompactIfSparse), says so on stderr, and the state
// reads as before; the next update leaves it alone.
func TestUpdateCompactsASparseState(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "recrawl.db")
	q, err := queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const n = 200000
	var found queue.Batch
	var fetched queue.Batch
	for i := range n {
		host := fmt.Sprintf("h%d.test", i%500)
		u := fmt.Sprintf("http://%s/page/%d", host, i)
		found.Discovered = append(found.Discovered, queue.Discovery{URL: u, Host: host})
		fetched.Fetches = append(fetched.Fetches, queue.Fetch{URL: u, Host: host, At: start.Add(time.Hour), Status: 200, Digest: fmt.Sprint(i)})
	}
	found.Now, fetched.Now = start, start.Add(time.Hour)
	// Every page known, then every page fetched: the second batch rewrites
	// nearly every page of the file.
	if _, err := q.Apply("000001-20260301T000000Z", found); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Apply("000002-20260301T010000Z", fetched); err != nil {
		t.Fatal(err)
	}
	q.Close()
	before, _ := os.Stat(path)

	batch := filepath.Join(dir, "fetched.ndjson")
	os.WriteFile(batch, []byte(`{"url":"http://h1.test/page/1","status":200,"digest":"changed","fetched_at":"2026-03-01T02:00:00Z"}`+"\n"), 0o644)
	update := func(id string) string {
		var out, errs bytes.Buffer
		code := recrawlcli.Main([]string{"recrawl", "update", "--state", path, "--batch", id, batch},
			clikit.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errs})
		if code != 0 {
			t.Fatalf("recrawl update: exit %d: %s", code, errs.String())
		}
		return errs.String()
	}
	if msg := update("000003-20260301T020000Z"); !strings.Contains(msg, "recrawl update: compacted "+path+": ") {
		t.Fatalf("a sparse state (%d bytes) not compacted: %q", before.Size(), msg)
	}
	after, _ := os.Stat(path)
	if after.Size()*2 > before.Size() {
		t.Errorf("compacted from %d to %d bytes", before.Size(), after.Size())
	}
	if msg := update("000004-20260301T030000Z"); strings.Contains(msg, "compacted") {
		t.Errorf("a compacted state compacted again: %q", msg)
	}
	q, err = queue.Open(path, queue.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if id, err := q.LastBatch(); err != nil || id != "000004-20260301T030000Z" {
		t.Fatalf("last batch %q, %v", id, err)
	}
	sum, err := q.Summary(0)
	if err != nil || sum.Pages != n {
		t.Fatalf("after compacting: %+v pages, %v; want %d", sum, err, n)
	}
}
