package urlfeatcli

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/urlfeat"
)

// The command writes, line for line, what the library's Annotator makes of
// the same input: the bundled URLs as plain lines and as the records the
// command itself wrote (a second pass over its own output).
func TestCommandMatchesLibrary(t *testing.T) {
	var input bytes.Buffer
	for _, name := range []string{"lenta.general", "wikipedia.general"} {
		data, err := os.ReadFile("../../testdata/sekitei/urls." + name)
		if err != nil {
			t.Fatal(err)
		}
		input.Write(data)
	}
	first := run(t, input.Bytes())
	second := run(t, first)
	for pass, io := range [][2][]byte{{input.Bytes(), first}, {first, second}} {
		var an urlfeat.Annotator
		var want []byte
		for _, line := range bytes.Split(bytes.TrimSuffix(io[0], []byte("\n")), []byte("\n")) {
			var err error
			if want, err = an.AppendLine(want, line); err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
		}
		if !bytes.Equal(io[1], want) {
			t.Fatalf("pass %d: the command's %d bytes differ from the library's %d", pass+1, len(io[1]), len(want))
		}
	}
	if bytes.Count(first, []byte("\n")) < 40000 {
		t.Fatalf("only %d lines", bytes.Count(first, []byte("\n")))
	}
}

func run(t *testing.T, in []byte) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"urlfeat"}, clikit.Env{Stdin: bytes.NewReader(in), Stdout: &stdout, Stderr: &stderr}); code != 0 || stderr.Len() > 0 {
		t.Fatalf("exit %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes()
}
