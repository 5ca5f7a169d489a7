package fetchcli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
)

func statsCommand() *cli.Command {
	return &cli.Command{
		Name:      "stats",
		Usage:     "count fetch records by outcome: fetched, failed, and why",
		UsageText: "fetch stats [--failed] [FILE...]",
		Description: `Reads fetch records and prints one "name<TAB>count" line per outcome, so
that a script can tell whether a batch made progress, and why not, without
reading JSON: "records" (all), "fetched" (status 2xx, 3xx or 304 and no
error), "failed" (the rest), then "error:CODE" for each error code (the text
before the first colon of "error": robots, dns, blocked, connect, timeout,
...) and "status:NNN" for each 4xx or 5xx status, most frequent first (ties by
name). The first three lines are always there, zero or not. --failed prints
instead each failed record as "url<TAB>reason<TAB>why", why being its error
message or its status line.

Example:
   $ fetch --warc out/ urls.txt > fetched.ndjson
   $ fetch stats fetched.ndjson
   records	3
   fetched	1
   failed	2
   error:dns	1
   status:404	1
   $ fetch stats --failed fetched.ndjson
   http://no-such-host.invalid/	error:dns	dns: lookup no-such-host.invalid: no such host
   http://a.example/gone	status:404	HTTP status 404`,
		Flags: append(clikit.InputFlags(), &cli.BoolFlag{Name: "failed",
			Usage: "print each failed record as url<TAB>reason<TAB>why instead of the counts"}),
		Action: stats,
	}
}

// Outcome says what one fetch record shows: whether the page was fetched,
// and if not, the reason ("error:CODE" or "status:NNN").
func Outcome(r *record.Record) (fetched bool, reason string, err error) {
	if msg, ok := r.String("error"); ok && msg != "" {
		code, _, _ := strings.Cut(msg, ":")
		return false, "error:" + strings.TrimSpace(code), nil
	}
	st, ok, err := r.Float("status")
	if err != nil {
		return false, "", fmt.Errorf("status: %v", err)
	}
	if !ok {
		return false, "", fmt.Errorf("neither status nor error: not a fetch record")
	}
	if st >= 200 && st < 400 {
		return true, "", nil
	}
	return false, fmt.Sprintf("status:%03d", int(st)), nil
}

func stats(c *cli.Context) error {
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	records, fetched := 0, 0
	reasons := map[string]int{}
	out := clikit.Output(c)
	failed := c.Bool("failed")
	err = in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
		ok, why, err := Outcome(r)
		if err != nil {
			return r.Errorf("%v", err)
		}
		if failed {
			if ok {
				return nil
			}
			msg, _ := r.String("error")
			if msg == "" {
				msg = "HTTP status " + strings.TrimPrefix(why, "status:")
			}
			return out.WriteLine(fmt.Appendf(nil, "%s\t%s\t%s", r.URL(), why, strings.Join(strings.Fields(msg), " ")))
		}
		records++
		if ok {
			fetched++
		} else {
			reasons[why]++
		}
		return nil
	})
	if err != nil || failed {
		return err
	}
	line := func(name string, n int) error { return out.WriteLine(fmt.Appendf(nil, "%s\t%d", name, n)) }
	for _, l := range []struct {
		name string
		n    int
	}{{"records", records}, {"fetched", fetched}, {"failed", records - fetched}} {
		if err := line(l.name, l.n); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(reasons))
	for k := range reasons {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if reasons[a] != reasons[b] {
			return reasons[b] - reasons[a]
		}
		return strings.Compare(a, b)
	})
	for _, k := range names {
		if err := line(k, reasons[k]); err != nil {
			return err
		}
	}
	return nil
}
