package pipes

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

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
	file   string
	line   int
	cmd    string
	output []string // the lines shown after a "$ " command, up to the next
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
				c := normalizeExample(stripComment(cur.String()))
				out = append(out, docExample{file: strings.TrimPrefix(file, "../../"), line: at, cmd: c})
				cur.Reset()
			}
		}
		if prompted {
			// The output shown after each command.
			k := len(out) - 1
			for j := len(block) - 1; j >= 0 && k >= 0; j-- {
				if start+j+1 == out[k].line {
					k--
					continue
				}
				if start+j+1 > out[k].line && !strings.HasPrefix(block[j], "$ ") {
					out[k].output = append([]string{block[j]}, out[k].output...)
				}
			}
		}
	}
	return out
}

// scriptCommands returns the commands every txtar script of the module
// runs, one a line, normalised: testscript's exec and negation dropped,
// sh -c's quoted script unwrapped (a doubled single quote undone); and the
// files the scripts hold, by name.
func scriptCommands(t *testing.T) (cmds []string, held map[string][]string) {
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
	held = map[string][]string{}
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, af := range ar.Files {
			held[af.Name] = append(held[af.Name], string(af.Data))
			if base := filepath.Base(af.Name); base != af.Name {
				held[base] = append(held[base], string(af.Data))
			}
		}
		for _, l := range strings.Split(string(ar.Comment), "\n") {
			l = prefix.ReplaceAllString(strings.TrimSpace(l), "")
			if strings.HasPrefix(l, "sh -c '") && strings.HasSuffix(l, "'") {
				l = strings.ReplaceAll(l[len("sh -c '"):len(l)-1], "''", "'")
			}
			if l != "" && !strings.HasPrefix(l, "#") {
				cmds = append(cmds, normalizeExample(l))
			}
		}
	}
	return cmds, held
}

// stripComment drops a shell comment from a command line: a # that
// starts a word outside quotes, and what follows it.
func stripComment(s string) string {
	var quote rune
	prev := ' '
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return strings.TrimSpace(s[:i])
		}
		prev = r
	}
	return strings.TrimSpace(s)
}

// loopbackFlags are the flags a script adds to reach the test's site on
// loopback quickly and quietly, where a doc's example reaches a public one:
// they are dropped from both before the two are compared.
var loopbackFlags = regexp.MustCompile(` --(allow-private|quiet|delay 0)\b`)

// normalizeExample is a command in the form docs and scripts are compared
// in: runs of white space as one space, the loopback flags dropped.
func normalizeExample(s string) string {
	return normalizeCommand(loopbackFlags.ReplaceAllString(normalizeCommand(s), ""))
}

// runsIn reports whether the script line s runs the command c as a whole
// command: c is s, or a command of its list or pipeline (between ;, &&, ||,
// | and the line's ends), with its own arguments; the script may send its
// output to a file (>, >>, 2>) to check it.
func runsIn(c, s string) bool {
	c = strings.TrimSuffix(c, " &") // in the background: a script's exec ... &NAME&
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
			strings.HasPrefix(a, ")") || strings.HasPrefix(a, ">") || strings.HasPrefix(a, "2>") || strings.HasPrefix(a, "&")
		if okBefore && okAfter {
			return true
		}
	}
}

var (
	catCommand = regexp.MustCompile(`^cat ([^ |;&<>]+)$`)
	assignment = regexp.MustCompile(`^[A-Z_]+=[^ ]*$`)
)

// shownAsHeld reports whether the lines a doc shows after "cat FILE" are
// one of the scripts' files of that name (${VAR} of the script written
// $VAR in the doc).
func shownAsHeld(shown []string, held []string) bool {
	braces := regexp.MustCompile(`\$\{([A-Z_]+)\}`)
	for _, h := range held {
		if strings.Join(shown, "\n") == strings.TrimSuffix(braces.ReplaceAllString(h, "$$$1"), "\n") {
			return true
		}
	}
	return false
}

// wholeBlocks are the examples a Go test reads from the document and runs
// as a whole, block by block: a block of the file holding every marker.
var wholeBlocks = []struct {
	file    string
	markers []string
	test    string
}{
	{"README.md", []string{"scripts/install.sh", "crawl-cycle.sh"}, "TestCronStepsOfTheREADME (internal/e2e) pastes the README's cron steps into sh with PATH=/usr/bin:/bin and Go, on a loopback site"},
	{"README.md", []string{"$ bin/recrawl report"}, "TestReportOfAShardedCrawl (internal/e2e) runs the commands of the README's \"Read the results\" on a crawl made as the demo makes its own"},
}

// wholeBlockCommands returns the commands of the wholeBlocks, each with
// the test that runs it; the same command elsewhere in the docs is run by
// that test too.
func wholeBlockCommands(t *testing.T) map[string]string {
	t.Helper()
	cmds := map[string]string{}
	for _, w := range wholeBlocks {
		doc, err := os.ReadFile("../../" + w.file)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, block := range strings.Split(string(doc), "```")[1:] {
			all := true
			for _, m := range w.markers {
				all = all && strings.Contains(block, m)
			}
			if !all {
				continue
			}
			found = true
			for _, ex := range docExamples(t, w.file, "```"+block+"```") {
				cmds[ex.cmd] = w.test
			}
		}
		if !found {
			t.Errorf("%s has no block holding %q, which %s runs", w.file, w.markers, w.test)
		}
	}
	return cmds
}

// notRunHere are the doc examples no test runs, each with the reason: keep
// it short. A document ("" for any) and a regular expression of its
// commands (as extracted: a line, continuations joined, comment dropped).
var notRunHere = exemptions{
	{"", `^(go test .*-bench .*|go test \./pkg/[a-z/]+ -run [A-Za-z]+ -v|go run \./(internal/cmd|pkg/opic/internal)/[a-z]+|cd pkg/barrel/blevebench && go test .*|go tool pprof .*|([A-Z_]+=[^ ]+ )*scripts/[a-z-]+-(bench|eval)\.sh.*)$`,
		"measurements: benchmark scripts and programs take minutes and print figures, not output to compare, and a profile they write is read by pprof; go test's are the suite's own tests"},
	{"docs/barrel.md", `^barrel search --index old-idx москва$`,
		"needs an index made before the index recorded its analysis, which no command of this version makes: TestAnalysisRecorded (pkg/barrel) makes one and checks this refusal"},
	{"docs/barrel.md", `^chromium 'http://127.0.0.1:8765/\?q=json\+encoder'$`,
		"opens the search page in a browser for a person: TestPageInChromium (pkg/barrel/serve) loads the page in headless chromium"},
	{"docs/scaleout.md", `^(printf .*|go build .*&& parallel .*|parallel rsync .*|scripts/crawl-cycle.sh /(var|scratch)/crawl)$`,
		"needs machines reached over ssh or a Slurm cluster: TestClusterSSHAgrees and TestClusterSlurmAgrees (internal/e2e) run the same RUNNER settings on test machines"},
}

type exemptions []struct{ file, cmd, reason string }

// match returns the index of the exemption of ex, or -1.
func (es exemptions) match(ex docExample) int {
	for i, e := range es {
		if (e.file == "" || e.file == ex.file) && regexp.MustCompile(e.cmd).MatchString(ex.cmd) {
			return i
		}
	}
	return -1
}

// TestEveryDocExampleRuns holds the docs to their promise that every
// command example runs in a test: each command of a fenced shell example of
// README.md and docs/*.md is a command some txtar script of the module runs
// (internal/pipes/testdata/script or cmd/*/testdata/script), as written, or
// is listed in notRunHere with the test that runs it or the reason it
// cannot run. A new example without a test fails here, and so does an entry
// of the list that no document has any more.
func TestEveryDocExampleRuns(t *testing.T) {
	scripts, held := scriptCommands(t)
	whole := wholeBlockCommands(t)
	used := map[int]bool{}
	n, byGo, notRun := 0, 0, 0
	for _, f := range docFiles(t) {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range docExamples(t, f, string(doc)) {
			n++
			if whole[ex.cmd] != "" {
				byGo++
				continue
			}
			if i := notRunHere.match(ex); i >= 0 {
				used[i] = true
				notRun++
				continue
			}
			if m := catCommand.FindStringSubmatch(ex.cmd); m != nil && !slices.Contains(scripts, ex.cmd) {
				if !shownAsHeld(ex.output, held[m[1]]) {
					t.Errorf("%s:%d: %q shows what no script holds as %s (%d held)", ex.file, ex.line, ex.cmd, m[1], len(held[m[1]]))
				}
				continue
			}
			if m := assignment.FindStringSubmatch(ex.cmd); m != nil {
				if !slices.Contains(scripts, "env "+ex.cmd) {
					t.Errorf("%s:%d: no script sets %q (env %s)", ex.file, ex.line, ex.cmd, ex.cmd)
				}
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
	for i, e := range notRunHere {
		if !used[i] {
			t.Errorf("notRunHere's %s %q matches no example of the docs: remove it", e.file, e.cmd)
		}
	}
	t.Logf("%d doc examples checked: %d run by txtar scripts, %d by Go tests that read them from the doc, %d listed in notRunHere", n, n-byGo-notRun, byGo, notRun)
}

// TestDocLinks checks the links between the documents: every relative link
// of README.md and docs/*.md names a file that exists, and its #anchor a
// heading of that file (GitHub's anchors: lower case, punctuation dropped,
// spaces as hyphens).
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading := regexp.MustCompile(`(?m)^#+ (.+)$`)
	slug := func(h string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ' || r == '-':
				b.WriteRune('-')
			case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	anchors := func(path string) map[string]bool {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		// Headings inside code blocks are not headings.
		var text strings.Builder
		in := false
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "```") {
				in = !in
				continue
			}
			if !in {
				text.WriteString(l + "\n")
			}
		}
		m := map[string]bool{}
		for _, h := range heading.FindAllStringSubmatch(text.String(), -1) {
			m[slug(strings.TrimSpace(h[1]))] = true
		}
		return m
	}
	checked := 0
	for _, f := range docFiles(t) {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(doc), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := f
			if file != "" {
				path = filepath.Join(filepath.Dir(f), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: %v", f, target, err)
					continue
				}
			}
			if anchor != "" && !anchors(path)[anchor] {
				t.Errorf("%s: link %q: %s has no heading #%s", f, target, path, anchor)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no links found")
	}
}
