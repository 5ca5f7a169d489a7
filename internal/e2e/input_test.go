package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/record"
)

// One record line of 64 MiB, between two short ones, through a pipe: every
// record-reading tool reports it as too long, naming its line, skips it
// and reads the others, and its peak memory (the process's ru_maxrss)
// stays within 64 MiB plus 4 times the longest line it holds (--max-line,
// 16 MiB by default): not a multiple of the input's line. With --max-line
// 1 MiB the bound shrinks with it.
func TestLongLineMemoryBounded(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := tools(t, root)
	dir := t.TempDir()
	general := filepath.Join(dir, "general.txt")
	noErr(t, os.WriteFile(general, []byte("http://a.test/q\nhttp://a.test/r\n"), 0o644))
	const huge = 64 << 20
	cmds := [][]string{
		{"sekitei", "segments"},
		{"urlfeat", "count"},
		{"urlfeat", "sample", "--good", "/dev/stdin", "--general", general, "-n", "2", "--seed", "1"},
		{"opic", "update", "--state", "o.db"},
		{"recrawl", "update", "--state", "r.db", "--batch", "b1"},
		{"fetch", "stats"},
	}
	for _, maxLine := range []int{0, 1 << 20} {
		limit := record.DefaultMaxLine
		if maxLine > 0 {
			limit = maxLine
		}
		bound := int64(64<<20 + 4*limit)
		for _, args := range cmds {
			args := append([]string(nil), args...)
			if maxLine > 0 {
				args = append(args, fmt.Sprintf("--max-line=%d", maxLine))
			}
			// Linux counts in a child's ru_maxrss the parent's memory at the
			// fork, so the test binary's own size would be measured: the tool
			// is started by /usr/bin/time, small, which prints its peak (KiB)
			// as stderr's last line.
			cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", filepath.Join(bin, args[0])}, args[1:]...)...)
			cmd.Dir = t.TempDir()
			in, err := cmd.StdinPipe()
			noErr(t, err)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			noErr(t, cmd.Start())
			io.WriteString(in, `{"url":"http://a.test/x"}`+"\n")
			line := []byte(`{"url":"http://a.test/`)
			chunk := bytes.Repeat([]byte("a"), 1<<20)
			in.Write(line)
			for n := len(line); n < huge; n += len(chunk) {
				in.Write(chunk)
			}
			io.WriteString(in, `"}`+"\n"+`{"url":"http://a.test/y"}`+"\n")
			in.Close()
			err = cmd.Wait()
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			kib, perr := strconv.ParseInt(lines[len(lines)-1], 10, 64)
			if perr != nil {
				t.Fatalf("%s: /usr/bin/time's peak not on stderr's last line: %q", args, lines[len(lines)-1])
			}
			rss := kib << 10
			t.Logf("%s: peak RSS %d MiB (bound %d MiB), exit %v", strings.Join(args, " "), rss>>20, bound>>20, err)
			if err != nil {
				t.Errorf("%s: %v\n%s", args, err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "line 2: a line of ") || !strings.Contains(stderr.String(), "skipped") {
				t.Errorf("%s: the long line is not reported with its number:\n%.500s", args, stderr.String())
			}
			if rss > bound {
				t.Errorf("%s: peak RSS %d MiB, over the bound of %d MiB", args, rss>>20, bound>>20)
			}
		}
	}
}

// A gzip-compressed input (records.ndjson.gz, on stdin or named) is read
// as the records it holds, told by its first bytes: every tool's output
// is the same as for the plain file, and no line is reported bad.
func TestGzipInput(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := tools(t, root)
	dir := t.TempDir()
	var plain bytes.Buffer
	for i := range 300 {
		fmt.Fprintf(&plain, `{"url":"http://h%d.test/p/%d","fetched_at":"2026-11-20T00:00:00Z","status":200,"links":["http://h%d.test/p/%d"]}`+"\n", i%7, i, (i+1)%7, i+1)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain.Bytes())
	zw.Close()
	plainFile, gzFile := filepath.Join(dir, "b.ndjson"), filepath.Join(dir, "b.ndjson.gz")
	noErr(t, os.WriteFile(plainFile, plain.Bytes(), 0o644))
	noErr(t, os.WriteFile(gzFile, gz.Bytes(), 0o644))
	type tool struct {
		run  []string // the input's file name is appended, or it is on stdin
		show []string // prints what run made, when it writes a state
	}
	list := []tool{
		{[]string{"urlfeat", "count"}, nil},
		{[]string{"sekitei", "segments"}, nil},
		{[]string{"fetch", "stats"}, nil},
		{[]string{"opic", "update", "--state", "o.db"}, []string{"opic", "show", "--state", "o.db"}},
		{[]string{"recrawl", "update", "--state", "r.db", "--batch", "b1", "--now", "2026-11-21T00:00:00Z"},
			[]string{"recrawl", "next", "--state", "r.db", "--now", "2026-11-21T00:00:00Z", "-n", "50"}},
	}
	for _, tl := range list {
		for _, stdin := range []bool{false, true} {
			outs := map[string]string{}
			for _, input := range []string{plainFile, gzFile} {
				wd := t.TempDir()
				args := tl.run
				var in io.Reader
				if stdin {
					f, err := os.Open(input)
					noErr(t, err)
					defer f.Close()
					in = f
				} else {
					args = append(append([]string(nil), args...), input)
				}
				cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
				cmd.Dir, cmd.Stdin = wd, in
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s (%s): %v\n%s", args, filepath.Base(input), err, stderr.String())
				}
				if strings.Contains(stderr.String(), "line ") {
					t.Errorf("%s (%s): lines reported bad:\n%.300s", args, filepath.Base(input), stderr.String())
				}
				out := stdout.String()
				if tl.show != nil {
					show := exec.Command(filepath.Join(bin, tl.show[0]), tl.show[1:]...)
					show.Dir = wd
					b, err := show.Output()
					noErr(t, err)
					out = string(b)
				}
				if out == "" {
					t.Errorf("%s (%s): no output", args, filepath.Base(input))
				}
				outs[filepath.Base(input)] = out
			}
			if outs["b.ndjson"] != outs["b.ndjson.gz"] {
				t.Errorf("%s, stdin %v: the gzip input gives another output:\nplain: %.300s\ngzip:  %.300s", tl.run, stdin, outs["b.ndjson"], outs["b.ndjson.gz"])
			}
		}
	}
}
