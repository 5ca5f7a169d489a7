package pipes

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// docCommandExempt matches the doc commands the doc scripts do not run:
// listing a file the script holds, setting a variable, and the
// measurements (bench scripts, Go programs), which take minutes and give
// figures, not output to compare.
var docCommandExempt = regexp.MustCompile(`^(cat [^|;&<>]+|[A-Z_]+=[^ ]*|([A-Z_]+=[^ ]+ )*scripts/.*|go .*|recrawl report .*)$`)

// TestDocCommandsRun keeps the docs and their scripts together: every
// command of a worked example (a "$ " line of a code block, continuation
// lines joined, its trailing comment dropped) of docs/TOOL.md appears, as
// written, in the commands of testdata/script/doc-TOOL.txtar (where a
// command run through sh -c doubles each single quote). A doc example edited
// without its test, or a test that runs something else, fails here.
func TestDocCommandsRun(t *testing.T) {
	for _, tool := range []string{"fetch", "opic", "recrawl", "sekitei"} {
		doc, err := os.ReadFile("../../docs/" + tool + ".md")
		if err != nil {
			t.Fatal(err)
		}
		ar, err := txtar.ParseFile("testdata/script/doc-" + tool + ".txtar")
		if err != nil {
			t.Fatal(err)
		}
		script := normalizeCommand(strings.ReplaceAll(string(ar.Comment), "''", "'"))
		cmds := docCommands(string(doc))
		if len(cmds) == 0 {
			t.Errorf("docs/%s.md: no worked example found", tool)
		}
		for _, c := range cmds {
			if docCommandExempt.MatchString(c) {
				continue
			}
			if !strings.Contains(script, c) {
				t.Errorf("docs/%s.md: %q is not run by doc-%s.txtar", tool, c, tool)
			}
		}
	}
}

// TestDocOutputsShown is the other half: every file of a doc script that a
// cmp compares a command's output with is shown in the doc, line for line
// (${VAR} of the script written $VAR in the doc, as the doc's examples name
// the test's loopback address), so the output the doc shows is the output
// the test checks.
func TestDocOutputsShown(t *testing.T) {
	cmpLine := regexp.MustCompile(`(?m)^cmp (\S+) (\S+)$`)
	braces := regexp.MustCompile(`\$\{([A-Z_]+)\}`)
	for _, tool := range []string{"fetch", "opic", "recrawl", "sekitei", "urlfeat", "readme", "barrel", "benchmarks"} {
		doc, err := os.ReadFile(docOf(tool))
		if err != nil {
			t.Fatal(err)
		}
		docLines := map[string]bool{}
		for _, l := range strings.Split(string(doc), "\n") {
			docLines[l] = true
		}
		ar, err := txtar.ParseFile("testdata/script/doc-" + tool + ".txtar")
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, m := range cmpLine.FindAllStringSubmatch(string(ar.Comment), -1) {
			for _, name := range m[1:] {
				for _, f := range ar.Files {
					if f.Name != name && !strings.HasSuffix(f.Name, "/"+name) && !strings.HasSuffix(name, "/"+f.Name) {
						continue
					}
					checked++
					for _, l := range strings.Split(strings.TrimSuffix(string(f.Data), "\n"), "\n") {
						if l = braces.ReplaceAllString(l, "$$$1"); !docLines[l] {
							t.Errorf("%s does not show %s's line %q", docOf(tool), f.Name, l)
						}
					}
				}
			}
		}
		if checked == 0 {
			t.Errorf("doc-%s.txtar compares no output with a file", tool)
		}
	}
}

// docOf is the document whose examples the script doc-NAME.txtar runs.
func docOf(name string) string {
	switch name {
	case "readme":
		return "../../README.md"
	case "barrel-batch":
		return "../../docs/barrel.md"
	}
	return "../../docs/" + name + ".md"
}

var trailingComment = regexp.MustCompile(`\s+#[^'"]*$`)

// docCommands returns the "$ " commands of the fenced code blocks of doc.
func docCommands(doc string) []string {
	var cmds []string
	inBlock := false
	var cur strings.Builder
	continued := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		var text string
		switch {
		case continued:
			text = line
		case strings.HasPrefix(line, "$ "):
			text = line[2:]
		default:
			continue
		}
		text = strings.TrimSpace(text)
		continued = strings.HasSuffix(text, `\`)
		cur.WriteString(strings.TrimSuffix(text, `\`))
		cur.WriteByte(' ')
		if !continued {
			cmds = append(cmds, normalizeCommand(trailingComment.ReplaceAllString(strings.TrimSpace(cur.String()), "")))
			cur.Reset()
		}
	}
	return cmds
}

func normalizeCommand(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
