package sekiteicli

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/clikit"
)

// TestFilterLineBuffered talks to the filter through pipes as a crawler
// would: each answer must arrive before the next URL is written.
func TestFilterLineBuffered(t *testing.T) {
	dir := t.TempDir()
	var good, general []string
	for i := 0; i < 30; i++ {
		good = append(good, "http://s.org/news/2013/05/"+itoa(i)+"/item/")
		general = append(general, "http://s.org/tag/t"+itoa(i)+"?page="+itoa(i))
	}
	gf, of := filepath.Join(dir, "good"), filepath.Join(dir, "general")
	os.WriteFile(gf, []byte(strings.Join(good, "\n")), 0o644)
	os.WriteFile(of, []byte(strings.Join(general, "\n")), 0o644)
	var model, stderr bytes.Buffer
	if rc := Main([]string{"sekitei", "train", "--good", gf, "--general", of, "--quota", "3", "--stream", "6"},
		clikit.Env{Stdin: strings.NewReader(""), Stdout: &model, Stderr: &stderr}); rc != 0 {
		t.Fatalf("train: %d %s", rc, stderr.String())
	}
	mf := filepath.Join(dir, "model.json")
	os.WriteFile(mf, model.Bytes(), 0o644)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		rc := Main([]string{"sekitei", "filter", "--model", mf, "--mark", "--line-buffered"},
			clikit.Env{Stdin: inR, Stdout: outW, Stderr: &stderr})
		outW.Close()
		done <- rc
	}()
	answers := bufio.NewReader(outR)
	fetched := 0
	for i, u := range []string{"http://s.org/tag/x1?page=1", "http://s.org/news/2014/01/01/a/", "http://s.org/tag/x2?page=2",
		"http://s.org/news/2014/01/02/b/", "http://s.org/tag/x3?page=3", "http://s.org/news/2014/01/03/c/"} {
		if _, err := io.WriteString(inW, u+"\n"); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			line, _ := answers.ReadString('\n')
			got <- line
		}()
		select {
		case line := <-got:
			if !strings.Contains(line, u) {
				t.Fatalf("answer %d %q is not about %s", i, line, u)
			}
			if strings.Contains(line, `"fetch":true`) {
				fetched++
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no answer to line %d before the next line", i+1)
		}
	}
	inW.Close()
	io.Copy(io.Discard, outR)
	if rc := <-done; rc != 0 {
		t.Fatalf("filter exit %d: %s", rc, stderr.String())
	}
	if fetched != 3 {
		t.Errorf("fetched %d, want the quota of 3", fetched)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
