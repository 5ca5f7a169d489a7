package urlfeatcli

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/clikit"
)

// BenchmarkPerURL runs the whole per-URL command (parse, extract, NDJSON
// out) over the bundled general files: the end-to-end rate of `urlfeat`.
func BenchmarkPerURL(b *testing.B) {
	var in bytes.Buffer
	for _, f := range []string{"lenta", "wikipedia"} {
		data, err := os.ReadFile("../../testdata/sekitei/urls." + f + ".general")
		if err != nil {
			b.Fatal(err)
		}
		in.Write(data)
	}
	lines := bytes.Count(in.Bytes(), []byte("\n"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		code := Main([]string{"urlfeat"}, clikit.Env{Stdin: bytes.NewReader(in.Bytes()), Stdout: io.Discard, Stderr: &strings.Builder{}})
		if code != 0 {
			b.Fatal("exit", code)
		}
	}
	b.ReportMetric(float64(lines*b.N)/b.Elapsed().Seconds(), "urls/s")
}
