package barrelcli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// barrel build reads WARC files only under the directories it is given
// (--warc-dir, or the records file's directory and the current one): a
// record whose warc_file points elsewhere, by an absolute path, by "..",
// or by a symbolic link, is refused with its line; and a file that is not
// a WARC file is refused without a byte of it in the message. The pages
// of the records that name WARC files inside are indexed.
func TestBuildReadsWARCOnlyUnderItsDirectories(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "passwd")
	if err := os.WriteFile(secret, []byte("root:SECRET-LINE:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	urls := []string{"http://docs.test/a.html", "http://docs.test/b.html"}
	file, locs := writeCrawl(t, dir, urls)
	if err := os.Symlink(secret, filepath.Join(dir, "link.warc.gz")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.warc.gz"), []byte("SECRET-LINE inside\nmore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, secret)
	if err != nil {
		t.Fatal(err)
	}
	recs := fmt.Sprintf(`{"url":%q,"status":200,"warc_file":%q,"warc_offset":%d}
{"url":"http://docs.test/x","status":200,"warc_file":%q,"warc_offset":0}
{"url":"http://docs.test/y","status":200,"warc_file":%q,"warc_offset":0}
{"url":"http://docs.test/z","status":200,"warc_file":"link.warc.gz","warc_offset":0}
{"url":"http://docs.test/w","status":200,"warc_file":"notes.warc.gz","warc_offset":0}
{"url":%q,"status":200,"warc_file":%q,"warc_offset":%d}
`, urls[0], filepath.Base(file), locs[0].Offset, secret, rel, urls[1], file, locs[1].Offset)
	rf := filepath.Join(dir, "fetched.ndjson")
	if err := os.WriteFile(rf, []byte(recs), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{rf}, {"--warc-dir", dir, rf}} {
		idx := t.TempDir()
		code, stderr := build(t, append([]string{"--index", idx}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", args, code, stderr)
		}
		for _, line := range []int{2, 3, 4} {
			if want := fmt.Sprintf("line %d: warc_file ", line); !strings.Contains(stderr, want) || !strings.Contains(stderr, "is outside the WARC directories") {
				t.Errorf("%s: line %d is not refused as outside:\n%s", args, line, stderr)
			}
		}
		if !strings.Contains(stderr, "line 5: notes.warc.gz@0: not a readable WARC record") {
			t.Errorf("%s: the file that is not a WARC file is not refused:\n%s", args, stderr)
		}
		if strings.Contains(stderr, "SECRET") {
			t.Errorf("%s: a file's content is in the messages:\n%s", args, stderr)
		}
		got := indexed(t, idx, urls...)
		if !got[urls[0]] || !got[urls[1]] {
			t.Errorf("%s: indexed %v, want both pages of the WARC file inside", args, got)
		}
	}
}
