package barrelcli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/userquery"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
)

// searchBatch answers one query per input line with the index opened once.
// Each hit is a line of its own, led by the query's line number, so that
// the output is a stream of hits like a single query's (fetch re-fetches
// them as they come) and a query's hits stay together in order.
func searchBatch(c *cli.Context, opt barrel.SearchOptions) error {
	env := clikit.EnvOf(c)
	name := c.String("queries")
	var r io.Reader = env.Stdin
	if name == "" || name == "-" {
		if err := clikit.NoInput(c); err != nil {
			return err
		}
		name = "-"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	idx, err := barrel.Open(c.String("index"))
	if err != nil {
		return err
	}
	defer idx.Close()
	in := &record.Input{Tool: "barrel", Strict: c.Bool("strict"), Stderr: env.Stderr}
	out := clikit.Output(c)
	lr := record.NewLineReader(r)
	var lat, cpu []time.Duration
	// One thread answers every query, so its CPU clock times each query
	// apart from the time it waited for a core on a busy machine.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	done := c.Context.Done()
	for {
		select {
		case <-done:
			return c.Context.Err()
		default:
		}
		line, n, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", map[bool]string{true: "stdin", false: name}[name == "-"], err)
		}
		start, cpu0 := time.Now(), threadCPU()
		if err := searchLine(idx, out, in, name, n, string(line), opt); err != nil {
			return err
		}
		// A program that writes a query and waits for its hits gets them.
		if err := out.Flush(); err != nil {
			return err
		}
		lat, cpu = append(lat, time.Since(start)), append(cpu, threadCPU()-cpu0)
	}
	if c.Bool("timing") {
		fmt.Fprintf(env.Stderr, "barrel: %d queries (%d bad), per query %s; CPU time %s\n", len(lat), in.Bad,
			latencySummary(lat), latencySummary(cpu))
	}
	return nil
}

// searchLine checks, searches and writes the hits of the query on line n.
// A bad query is reported through in (which stops the run under --strict)
// and answered as far as it can be.
func searchLine(idx *barrel.Index, out *record.Writer, in *record.Input, name string, n int, line string, opt barrel.SearchOptions) error {
	q := userquery.Check(line)
	if !q.OK() {
		if err := in.Report(name, &record.DataError{Line: n, Err: errors.New(strings.Join(q.Problems, "; "))}); err != nil {
			return err
		}
	}
	if q.Terms == 0 {
		return nil
	}
	resp, err := idx.Search(q.Text, opt)
	var qe *barrel.QueryError
	if errors.As(err, &qe) {
		return in.Report(name, &record.DataError{Line: n, Err: qe})
	}
	if err != nil {
		return err
	}
	switch {
	case len(resp.Unknown) > 0:
		// An unknown word is an answer (no page has it), not a bad line.
		fmt.Fprintf(in.Stderr, "barrel: %sline %d: not in the index: %s\n", where(name), n, strings.Join(resp.Unknown, ", "))
	case resp.Barrels == "" && q.OK():
		// The searcher found no word to look up (stop words only, say).
		if err := in.Report(name, &record.DataError{Line: n, Err: errors.New("no word of the query is searchable")}); err != nil {
			return err
		}
	}
	for i, r := range resp.Results {
		err := out.AppendLine(func(b []byte) []byte {
			b = fmt.Appendf(b, `{"query_line":%d,"query":`, n)
			b = record.AppendString(b, q.Text)
			b = fmt.Appendf(b, `,"position":%d,`, opt.Offset+i+1)
			return appendHit(b, r, opt)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func where(name string) string {
	if name == "" || name == "-" {
		return ""
	}
	return name + ": "
}

// threadCPU is the CPU time of the calling OS thread.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// latencySummary gives the median, 99th percentile (nearest rank) and
// maximum of the latencies, in milliseconds.
func latencySummary(lat []time.Duration) string {
	if len(lat) == 0 {
		return "no latency (no queries)"
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d.Microseconds())/1000) }
	return fmt.Sprintf("p50 %s p99 %s max %s", ms(at(0.5)), ms(at(0.99)), ms(s[len(s)-1]))
}
