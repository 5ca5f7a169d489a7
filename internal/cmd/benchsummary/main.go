// Command benchsummary reads the output of go test -bench with -count N
// on stdin and prints, per benchmark and metric, the median of the N runs
// and their range, as a Markdown table, so that a benchmark script shows
// its spread and not one run.
//
//	go test -bench . -count 3 | go run ./internal/cmd/benchsummary
//
// Lines that are not benchmark results are ignored; a result that a
// benchmark's own output split from its name is joined to it again. A benchmark is named
// without its -GOMAXPROCS suffix; metrics keep the order of their first
// appearance.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sekitei/crawlkit/internal/benchenv"
)

func main() {
	if err := summarize(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchsummary:", err)
		os.Exit(1)
	}
}

// procs is the -GOMAXPROCS suffix of a benchmark's name.
var procs = regexp.MustCompile(`-\d+$`)

type metric struct{ bench, unit string }

func summarize(r io.Reader, w io.Writer) error {
	var order []metric
	values := map[metric][]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	pending := "" // a name whose results the benchmark's own output pushed to a later line
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// BenchmarkName-2  <iterations>  <value> <unit>  <value> <unit> ...
		if len(f) == 1 && strings.HasPrefix(f[0], "Benchmark") {
			pending = f[0]
			continue
		}
		if len(f) >= 3 && f[2] == "ns/op" && pending != "" {
			f = append([]string{pending}, f...)
		}
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || f[3] != "ns/op" || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		pending = ""
		name := procs.ReplaceAllString(f[0], "")
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			m := metric{name, f[i+1]}
			if _, ok := values[m]; !ok {
				order = append(order, m)
			}
			values[m] = append(values[m], v)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(order) == 0 {
		return fmt.Errorf("no benchmark results in the input")
	}
	fmt.Fprintln(w, "| benchmark | metric | median | range | runs |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|")
	for _, m := range order {
		v := values[m]
		fmt.Fprintf(w, "| %s | %s | %s | %s-%s | %d |\n", m.bench, m.unit, num(benchenv.Median(v)), num(slices.Min(v)), num(slices.Max(v)), len(v))
	}
	return nil
}

// num prints a figure: whole from 100 up, else with up to three
// significant digits.
func num(x float64) string {
	if x >= 100 || x <= -100 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}
