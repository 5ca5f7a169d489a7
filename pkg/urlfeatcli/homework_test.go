package urlfeatcli

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/clikit"
)

// TestHomeworkChecker reproduces the course's checker on the bundled sites:
// 100 calls of `urlfeat sample`, each with a fresh sample (seeds 1 to 100, so
// the test is repeatable; the checker's own draws are unseeded); on average at least 95%
// of the gold feature names are present, no call prints more than 10% more
// lines than the gold file. The checker's one-second limit a call is a
// matter of speed, shown by BenchmarkHomeworkSample, not timed here.
func TestHomeworkChecker(t *testing.T) {
	for _, site := range []string{"lenta", "wikipedia"} {
		t.Run(site, func(t *testing.T) {
			gold := readGold(t, "../../testdata/sekitei/"+site+".fea")
			const calls = 100
			var present float64
			maxLines := 0
			for i := 0; i < calls; i++ {
				var stdout, stderr bytes.Buffer
				code := Main([]string{"urlfeat", "sample",
					"--good", "../../testdata/sekitei/urls." + site + ".examined",
					"--general", "../../testdata/sekitei/urls." + site + ".general",
					"--seed", strconv.Itoa(i + 1)},
					clikit.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
				if code != 0 || stderr.Len() > 0 {
					t.Fatalf("exit %d, stderr %s", code, stderr.String())
				}
				lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
				got := map[string]bool{}
				for _, l := range lines {
					name, _, ok := strings.Cut(l, "\t")
					if !ok {
						t.Fatalf("line %q is not feature<TAB>count", l)
					}
					got[name] = true
				}
				hit := 0
				for _, g := range gold {
					if got[g] {
						hit++
					}
				}
				present += float64(hit) / float64(len(gold))
				if len(lines) > maxLines {
					maxLines = len(lines)
				}
			}
			avg := present / calls
			t.Logf("%s: gold features present %.1f%% on average, at most %d lines (gold %d)",
				site, 100*avg, maxLines, len(gold))
			if avg < 0.95 {
				t.Errorf("only %.1f%% of gold features present on average", 100*avg)
			}
			if float64(maxLines) > 1.1*float64(len(gold)) {
				t.Errorf("a call printed %d lines, over 110%% of gold's %d", maxLines, len(gold))
			}
		})
	}
}

func readGold(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, _, _ := strings.Cut(sc.Text(), "\t")
		names = append(names, name)
	}
	return names
}

// BenchmarkHomeworkSample times one call of the course checker's command
// (the checker allows one second a call): go test -bench HomeworkSample
// ./pkg/urlfeatcli.
func BenchmarkHomeworkSample(b *testing.B) {
	for _, site := range []string{"lenta", "wikipedia"} {
		b.Run(site, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var stdout, stderr bytes.Buffer
				code := Main([]string{"urlfeat", "sample",
					"--good", "../../testdata/sekitei/urls." + site + ".examined",
					"--general", "../../testdata/sekitei/urls." + site + ".general",
					"--seed", strconv.Itoa(i + 1)},
					clikit.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
				if code != 0 {
					b.Fatalf("exit %d, stderr %s", code, stderr.String())
				}
			}
		})
	}
}
