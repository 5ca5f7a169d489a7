package pipes

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// docFiles are the user's documents whose examples must run: README.md and
// every page of docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../../README.md"}, files...)
}

// docExample is one command of a document's fenced shell example.
type docExample struct {
	file string
	line int
	cmd  string
}

// shellFence is an opening fence whose block is a shell example: no info
// string, or sh, shell, bash or console. Blocks of other languages (go,
// json) and diagrams are left alone.
var shellFence = regexp.MustCompile("^```(sh|shell|bash|console)?$")

// docExamples returns the commands of the fenced shell examples of a
// document: in a block holding "$ " lines, each such line (continuation
// lines joined, a trailing comment dropped); in an sh block without them, a
// script to paste, each of its lines that is not a comment. It reports a
// fence that does not close (a closing fence with text after it opens
// nothing and closes nothing, so everything after it is swallowed).
func docExamples(t *testing.T, file, doc string) []docExample {
	t.Helper()
	var out []docExample
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		open := lines[i]
		if !strings.HasPrefix(open, "```") {
			continue
		}
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(lines[end], "```") {
			end++
		}
		if end == len(lines) {
			t.Errorf("%s:%d: a code fence that is never closed", file, i+1)
			return out
		}
		if strings.TrimRight(lines[end], " ") != "```" {
			t.Errorf("%s:%d: a closing fence with text after it (%q): Markdown reads it as no fence", file, end+1, lines[end])
		}
		block := lines[i+1 : end]
		start := i + 1
		i = end
		if !shellFence.MatchString(strings.TrimSpace(open)) {
			continue
		}
		prompted := false
		for _, l := range block {
			if strings.HasPrefix(l, "$ ") {
				prompted = true
			}
		}
		if !prompted && !strings.HasPrefix(open, "```sh") {
			continue // output, a layout or a diagram
		}
		var cur strings.Builder
		continued, at := false, 0
		for j, l := range block {
			var text string
			switch {
			case continued:
				text = l
			case prompted && strings.HasPrefix(l, "$ "):
				text, at = l[2:], start+j+1
			case !prompted && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#"):
				text, at = l, start+j+1
			default:
				continue
			}
			text = strings.TrimSpace(text)
			continued = strings.HasSuffix(text, `\`) || strings.HasSuffix(text, "|")
			cur.WriteString(strings.TrimSuffix(text, `\`))
			cur.WriteByte(' ')
			if !continued {
				c := normalizeCommand(trailingComment.ReplaceAllString(strings.TrimSpace(cur.String()), ""))
				out = append(out, docExample{file: strings.TrimPrefix(file, "../../"), line: at, cmd: c})
				cur.Reset()
			}
		}
	}
	return out
}

// scriptCommands returns the commands every txtar script of the module
// runs, one a line, normalised: testscript's exec and negation dropped,
// sh -c's quoted script unwrapped (a doubled single quote undone).
func scriptCommands(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, g := range []string{"testdata/script/*.txtar", "../../cmd/*/testdata/script/*.txtar"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	prefix := regexp.MustCompile(`^(\[[^\]]*\]\s*)*!?\s*(exec\s+)?`)
	var cmds []string
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(ar.Comment), "\n") {
			l = prefix.ReplaceAllString(strings.TrimSpace(l), "")
			if strings.HasPrefix(l, "sh -c '") && strings.HasSuffix(l, "'") {
				l = strings.ReplaceAll(l[len("sh -c '"):len(l)-1], "''", "'")
			}
			if l != "" && !strings.HasPrefix(l, "#") {
				cmds = append(cmds, normalizeCommand(l))
			}
		}
	}
	return cmds
}

// runsIn reports whether the script line s runs the command c as a whole
// command: c is s, or a command of its list or pipeline (between ;, &&, ||,
// | and the line's ends), with its own arguments and redirections.
func runsIn(c, s string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], c)
		if i < 0 {
			return false
		}
		i += from
		before := strings.TrimRight(s[:i], " ")
		after := s[i+len(c):]
		from = i + 1
		okBefore := before == "" || strings.HasSuffix(before, ";") || strings.HasSuffix(before, "|") ||
			strings.HasSuffix(before, "&&") || strings.HasSuffix(before, "(")
		a := strings.TrimLeft(after, " ")
		okAfter := a == "" || strings.HasPrefix(a, ";") || strings.HasPrefix(a, "|") || strings.HasPrefix(a, "&&") ||
			strings.HasPrefix(a, ")")
		if okBefore && okAfter {
			return true
		}
	}
}

// notRunHere lists the doc examples that no txtar script runs, each with
// where it is run or why it cannot be: keep it short. A key is a document
// and a command, as extracted.
var notRunHere = map[string]string{}

// TestEveryDocExampleRuns holds the docs to their promise that every
// command example runs in a test: each command of a fenced shell example of
// README.md and docs/*.md is a command some txtar script of the module runs
// (internal/pipes/testdata/script or cmd/*/testdata/script), as written, or
// is listed in notRunHere with the test that runs it or the reason it
// cannot run. A new example without a test fails here, and so does an entry
// of the list that no document has any more.
func TestEveryDocExampleRuns(t *testing.T) {
	scripts := scriptCommands(t)
	used := map[string]bool{}
	n := 0
	for _, f := range docFiles(t) {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range docExamples(t, f, string(doc)) {
			n++
			key := ex.file + ": " + ex.cmd
			if _, ok := notRunHere[key]; ok {
				used[key] = true
				continue
			}
			run := false
			for _, s := range scripts {
				if runsIn(ex.cmd, s) {
					run = true
					break
				}
			}
			if !run {
				t.Errorf("%s:%d: no test runs %q", ex.file, ex.line, ex.cmd)
			}
		}
	}
	var stale []string
	for k := range notRunHere {
		if !used[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		t.Errorf("notRunHere lists %q, which no document shows", k)
	}
	t.Logf("%d doc examples checked", n)
}
