// Package opiccli is the command line of opic: OPIC page importance over a
// link graph (static), and adaptive OPIC kept in a state file that a cron
// job updates after each fetch batch and asks for the next pages to fetch.
package opiccli

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/opic"
	"github.com/sekitei/crawlkit/pkg/record"
)

// Main runs opic with args (args[0] is the program name) and returns the
// exit status.
func Main(args []string, env clikit.Env) int {
	return clikit.Run(App(), args, env)
}

var (
	dampingFlag = &cli.Float64Flag{Name: "damping", Value: opic.DefaultDamping,
		Usage: "fraction `d` of a visited page's cash that goes to its links (the rest to the virtual page); importance converges to PageRank with damping d"}
	topFlag = &cli.IntFlag{Name: "top", Usage: "print only the `K` most important pages (0: all)"}
)

// App returns the opic application.
func App() *cli.App {
	app := clikit.New("opic", "OPIC and adaptive OPIC page importance over a link graph",
		"opic [--damping 0.85] [--policy greedy|random|cyclic] [--steps N | --until E] [--tsv] [FILE...]\n"+
			"   opic update --state FILE [--batch ID] [--changes OUT] [--window 720h] [--shard I/N --outbox OUT] [FILE...]\n"+
			"   opic exchange --state FILE [--batch ID] [--changes OUT] OUT...\n"+
			"   opic next --state FILE [--state FILE...] [--n 100] [--min-age 24h]\n"+
			"   opic show --state FILE [--state FILE...] [--top K] [--tsv]")
	app.Description = `Computes page importance with OPIC (Abiteboul, Preda, Cobena, WWW 2003): every
page holds cash; visiting a page adds its cash to its history and hands it on,
fraction d to its links and the rest to a virtual page linked to and from every
page. Importance, (history + cash) / total, converges to PageRank with damping
d; 1/|H| bounds the error.

Input lines (files named, or stdin) may be mixed:
   src<TAB>dst                         an edge of the link graph
   {"url":...,"links":[...]}           a page and its links (fetch's records)
   http://example.org/                 a page with no known links
Self-links and repeated links count once; a link to a page never seen as a
source makes that page known (with no links: its cash goes to the virtual page).

Output: one record per page, most important first, with "cash", "history" and
"importance" (sums to 1); --tsv prints url, cash, history, importance.

Example:
   $ printf 'a\tb\nb\tc\nc\ta\nc\tb\n' | opic --tsv --header
   url	cash	history	importance
   b	0.04533728879143559	346.1021893296114	0.39726672943087604
   c	0.8848187798271638	337.1515114037791	0.38795766831782263
   a	0.06984393138140076	187.06901766865997	0.21477560225130124
   (PageRank with damping 0.85: b 0.397400, c 0.387790, a 0.214810)
   $ opic --until 1e-4 --top 10 pages.ndjson     # records with links, from fetch
   $ opic update --state crawl.opic fetched.ndjson && opic next --state crawl.opic --n 1000 | fetch ...`
	app.Flags = append(clikit.InputFlags(), clikit.TSVFlag, clikit.HeaderFlag, dampingFlag,
		&cli.StringFlag{Name: "policy", Value: "greedy",
			Usage: "crawl order: `greedy` (the page with most cash), random or cyclic"},
		&cli.Uint64Flag{Name: "steps", Usage: "stop after `N` page visits"},
		&cli.Float64Flag{Name: "until", Value: 1e-3,
			Usage: "stop once the error bound 1/|H| falls under `E` (with --steps alone, only --steps stops)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "`seed` of the random policy"},
		topFlag,
	)
	app.Action = static
	app.Commands = []*cli.Command{updateCommand(), exchangeCommand(), nextCommand(), showCommand()}
	app.DisableSliceFlagSeparator = true // a --state may hold a comma
	return app
}

func checkDamping(c *cli.Context) (float64, error) {
	d := c.Float64("damping")
	if !(d >= 0 && d < 1) {
		return 0, clikit.Usagef("--damping %v: want 0 <= d < 1", d)
	}
	return d, nil
}

// static is the OPIC computation on the graph of the input.
func static(c *cli.Context) error {
	if err := clikit.NoInput(c); err != nil {
		return err
	}
	d, err := checkDamping(c)
	if err != nil {
		return err
	}
	policy, err := opic.ParsePolicy(c.String("policy"))
	if err != nil {
		return clikit.Usagef("--policy: %v", err)
	}
	stop := opic.Stop{Steps: c.Uint64("steps"), Until: c.Float64("until")}
	if c.IsSet("steps") && !c.IsSet("until") {
		stop.Until = 0
	}
	if stop.Until < 0 || math.IsNaN(stop.Until) || (stop.Steps == 0 && stop.Until == 0) {
		return clikit.Usagef("want --steps N > 0 or --until E > 0")
	}
	if c.Int("top") < 0 {
		return clikit.Usagef("--top %d: want K >= 0", c.Int("top"))
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	files := c.Args().Slice()
	bar := clikit.Progress(c, clikit.InputSize(files), "opic: reading", true)
	clikit.TrackInput(in, bar)
	s := opic.New(d)
	err = eachItem(c, in, files, true, func(it opic.Item, _ []byte) error {
		s.AddItem(it)
		return nil
	})
	bar.Finish()
	if err != nil {
		return err
	}
	s.Compact()
	s.Reset()
	if err := run(c, s, policy, stop); err != nil {
		return err
	}
	return writeRanked(c, []*opic.State{s}, c.Int("top"))
}

// run runs OPIC in rounds of about n visits, so that a long run shows its
// progress (in visits, or a spinner under --until) and stops at SIGINT.
func run(c *cli.Context, s *opic.State, policy opic.Policy, stop opic.Stop) error {
	total := int64(-1)
	if stop.Until == 0 {
		total = int64(min(stop.Steps, math.MaxInt64))
	}
	bar := clikit.Progress(c, total, "opic: visits", false)
	defer bar.Finish()
	round := uint64(max(s.Len(), 1<<16))
	for {
		if err := c.Context.Err(); err != nil {
			return err
		}
		want := round
		if stop.Steps > 0 {
			want = min(round, stop.Steps-s.Steps())
		}
		k := s.Run(policy, opic.Stop{Steps: want, Until: stop.Until}, c.Uint64("seed"))
		bar.Add64(int64(k))
		if k < want || (stop.Steps > 0 && s.Steps() >= stop.Steps) {
			return nil
		}
	}
}

// eachItem parses every input line as an opic item, keeping only the
// shard's items if filter is set.
func eachItem(c *cli.Context, in *record.Input, files []string, filter bool, fn func(opic.Item, []byte) error) error {
	shard := in.Shard
	return in.EachLine(c.Context, files, func(_ string, line []byte, n int) error {
		it, err := opic.ParseLine(line)
		if err != nil {
			return &record.DataError{Line: n, Err: err}
		}
		if filter && shard.N > 1 && record.ShardOf(it.Host(), shard.N) != shard.I {
			return nil
		}
		return fn(it, line)
	})
}

// writeThrough writes the batch's lines on stdout for --changes -, ahead
// of the change records, so that the next step of the loop (recrawl
// update) reads the fetch records and the new importance in one stream.
func writeThrough(c *cli.Context, lines [][]byte) error {
	if c.String("changes") != "-" {
		return nil
	}
	out := clikit.Output(c)
	for _, l := range lines {
		if err := out.WriteLine(l); err != nil {
			return err
		}
	}
	return out.Flush()
}

// writeRanked prints the pages of states by importance.
func writeRanked(c *cli.Context, states []*opic.State, top int) error {
	out := clikit.Output(c)
	tsv := c.Bool("tsv")
	if tsv && c.Bool("header") {
		if err := out.WriteLine([]byte("url\tcash\thistory\timportance")); err != nil {
			return err
		}
	}
	for _, e := range opic.Ranking(states, top) {
		var err error
		if tsv {
			err = out.AppendLine(func(b []byte) []byte {
				b = appendTSV(b, e.URL)
				for _, f := range []float64{e.Page.Cash, e.Page.History, e.Importance} {
					b = append(b, '\t')
					b = strconv.AppendFloat(b, f, 'g', -1, 64)
				}
				return b
			})
		} else {
			r := record.New(e.URL)
			r.SetFloat("cash", e.Page.Cash)
			r.SetFloat("history", e.Page.History)
			r.SetFloat("importance", e.Importance)
			err = out.Write(r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// appendTSV appends s with tabs and newlines made spaces, since TSV has
// no quoting.
func appendTSV(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '\t' || ch == '\n' || ch == '\r' {
			ch = ' '
		}
		b = append(b, ch)
	}
	return b
}

var (
	stateFlag = &cli.StringFlag{Name: "state", Required: true,
		Usage: "the adaptive OPIC state `FILE` (created by the first update)"}
	statesFlag = &cli.StringSliceFlag{Name: "state", Required: true,
		Usage: "the adaptive OPIC state `FILE`; give the states of all shards of a crawl to see it whole"}
)

// loadStates loads the states named by --state.
func loadStates(c *cli.Context) ([]*opic.State, error) {
	var states []*opic.State
	for _, path := range c.StringSlice("state") {
		s, err := opic.LoadState(path)
		if err != nil {
			return nil, err
		}
		states = append(states, s)
	}
	return states, nil
}

func updateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "apply a batch of fetch records to an adaptive OPIC state file",
		UsageText: "opic update --state FILE [--batch ID] [--changes FILE] [--window 720h] [--damping 0.85] [--shard I/N --outbox OUT] [FILE...]",
		Description: `Reads a batch of fetch records (fetch's output: "url", "fetched_at", "links")
and updates the state: each record with fetched_at is a visit of its page at
that time; its links replace the page's links, and new pages are discovered.
With the time window T, a visit S after the page's previous one sets its history
H <- H(1 - S/T) + C when S < T, else H <- C*T/S (adaptive OPIC); --window 0
keeps all history. Records without fetched_at, plain URLs (seeds) and
src<TAB>dst edges add pages and links without a visit. A record without
"links" (a failed fetch, a 304) is a visit that keeps the page's known links;
a page with no known links hands its cash to the virtual page.

The visits of a batch happen at once: each hands on the cash its page held
when the batch began, and the cash arrives, with the virtual page's share,
when the batch ends: no visit sees what another visit of the batch sends.
Cash is kept exact: the total stays 1.

Shards: a state made with --shard I/N holds the pages of the hosts of shard I.
Give every shard the whole batch; each visits its own pages and writes to
--outbox OUT the cash its links send to other shards' pages. Then
'opic exchange' gives every shard the outboxes of all shards, and the
shards together hold what one unsharded state would, to the last bit.

The state is a bbolt file updated in one transaction a batch, reading and
writing only the batch's pages: an interrupted, killed or failed run leaves
the previous state. A format 2 file is migrated by the first update. FILE.lock
keeps a second update of the same state out (it fails at once).

--batch ID records the batch in the state with it: the same ID again does
nothing (a note on stderr, exit 0) but write --changes and --outbox again.
--changes FILE writes {"url","cash","history","importance"} for every page
the batch changed other than by the even share (importance: (history + cash)
over the crawl's total history plus the pages' cash). --window,
--damping and --shard are stored in the state; given again they replace the
stored values (--shard must match).

Example:
   $ fetch < due.txt > batch.ndjson
   $ opic update --state crawl.opic batch.ndjson
   $ opic update --state crawl.opic --batch 000042-20261123T100000Z --changes changes.ndjson batch.ndjson
   $ opic show --state crawl.opic --top 3 --tsv
   # two shards, as parallel or two machines would run them:
   $ opic update --state s0.opic --shard 0/2 --outbox out0.ndjson batch.ndjson
   $ opic update --state s1.opic --shard 1/2 --outbox out1.ndjson batch.ndjson
   $ opic exchange --state s0.opic out0.ndjson out1.ndjson
   $ opic exchange --state s1.opic out0.ndjson out1.ndjson
   $ opic show --state s0.opic --state s1.opic --top 3 --tsv`,
		Flags: append(clikit.InputFlags(), stateFlag, dampingFlag,
			&cli.DurationFlag{Name: "window", Value: 720 * time.Hour,
				Usage: "adaptive OPIC's time window `T` (0: keep all history)"},
			&cli.StringFlag{Name: "outbox", Usage: "a sharded state's cash for other shards goes to `OUT` (NDJSON), for opic exchange"},
			batchFlag, changesFlag),
		Action: update,
	}
}

// openDB locks and opens the state at path, creating it with the
// settings of fresh if there is none and fresh is not nil.
func openDB(path string, fresh *opic.DBOptions) (*opic.DB, func(), error) {
	unlock, err := opic.Lock(path)
	if err != nil {
		return nil, nil, err
	}
	if fresh == nil {
		if _, err := os.Stat(path); err != nil {
			unlock()
			return nil, nil, err
		}
		fresh = &opic.DBOptions{}
	}
	d, err := opic.Open(path, *fresh)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return d, func() { d.Close(); unlock() }, nil
}

// batchID returns --batch, checked: letters, digits and . _ : - only, so
// that it sorts and quotes plainly.
func batchID(c *cli.Context) (string, error) {
	id := c.String("batch")
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:-", r)) {
			return "", clikit.Usagef("--batch %q: want letters, digits and . _ : - only", id)
		}
	}
	return id, nil
}

// writeStep writes a step's outbox and change records, if asked for,
// crash-safely.
func writeStep(c *cli.Context, res *opic.StepResult) error {
	if out := c.String("outbox"); out != "" && res.Outbox != nil {
		if err := opic.WriteFileSafe(out, res.Outbox); err != nil {
			return fmt.Errorf("writing the outbox: %w", err)
		}
	}
	if ch := c.String("changes"); ch == "-" {
		if _, err := clikit.EnvOf(c).Stdout.Write(res.Changes); err != nil {
			return fmt.Errorf("writing the changes: %w", err)
		}
	} else if ch != "" {
		if err := opic.WriteFileSafe(ch, res.Changes); err != nil {
			return fmt.Errorf("writing the changes: %w", err)
		}
	}
	return nil
}

// applied handles a batch applied already: a note, and the step's files
// written again from the state (a rerun after a kill may have lost them).
func applied(c *cli.Context, d *opic.DB, id string) error {
	fmt.Fprintf(c.App.ErrWriter, "opic: %s: batch %s already applied; nothing to do\n", d.Path(), id)
	changes, outbox, err := d.LastChanges()
	if err != nil {
		return err
	}
	if !d.Awaiting() {
		outbox = nil // the exchange is done: the outbox is of no use
	}
	if c.String("changes") == "-" && c.Command.Name == "update" {
		// The batch passes on as on the first run, for the next step.
		in, err := clikit.Input(c)
		if err != nil {
			return err
		}
		var through [][]byte
		if err := eachItem(c, in, c.Args().Slice(), false, func(_ opic.Item, line []byte) error {
			through = append(through, append([]byte(nil), line...))
			return nil
		}); err != nil {
			return err
		}
		if err := writeThrough(c, through); err != nil {
			return err
		}
	}
	return writeStep(c, &opic.StepResult{Changes: changes, Outbox: outbox})
}

var (
	batchFlag = &cli.StringFlag{Name: "batch",
		Usage: "the batch's `ID` (e.g. 000042-20261123T100000Z): recorded in the state with the batch; the same ID again does nothing"}
	changesFlag = &cli.StringFlag{Name: "changes",
		Usage: "write to `FILE` a record {url, cash, history, importance} for every page this step changed (NDJSON); - (update only): the batch's records and then these on stdout, for recrawl update"}
)

func update(c *cli.Context) error {
	d, err := checkDamping(c)
	if err != nil {
		return err
	}
	if c.Duration("window") < 0 {
		return clikit.Usagef("--window %v: want T >= 0", c.Duration("window"))
	}
	id, err := batchID(c)
	if err != nil {
		return err
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	path := c.String("state")
	db, closeDB, err := openDB(path, &opic.DBOptions{Damping: d, Window: c.Duration("window"), ShardI: in.Shard.I, ShardN: in.Shard.N})
	if err != nil {
		return err
	}
	defer closeDB()
	set := db.Settings()
	if c.IsSet("shard") && (in.Shard.I != set.ShardI || in.Shard.N != set.ShardN) {
		return clikit.Usagef("--shard %v: the state %s holds shard %d/%d", in.Shard, path, set.ShardI, set.ShardN)
	}
	outbox := c.String("outbox")
	if set.ShardN > 1 && outbox == "" {
		return clikit.Usagef("the state %s holds shard %d/%d: give --outbox OUT for the other shards' cash", path, set.ShardI, set.ShardN)
	}
	if set.ShardN <= 1 && outbox != "" {
		return clikit.Usagef("--outbox: the state %s is not sharded (--shard I/N on its first update)", path)
	}
	b, err := db.Begin(id)
	switch {
	case errors.Is(err, opic.ErrBatchApplied):
		return applied(c, db, id)
	case errors.Is(err, opic.ErrAwaitingExchange):
		return fmt.Errorf("%s: %w: run opic exchange first", path, err)
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	}
	defer b.Rollback() // after Commit, a no-op
	if c.IsSet("damping") {
		set.Damping = d
	}
	if c.IsSet("window") {
		set.Window = c.Duration("window")
	}
	b.SetSettings(set.Damping, set.Window)
	files := c.Args().Slice()
	bar := clikit.Progress(c, clikit.InputSize(files), "opic: update", true)
	clikit.TrackInput(in, bar)
	var through [][]byte // the batch, for --changes -
	err = eachItem(c, in, files, false, func(it opic.Item, line []byte) error {
		b.Add(it)
		if c.String("changes") == "-" {
			through = append(through, append([]byte(nil), line...))
		}
		return nil
	})
	bar.Finish()
	if err != nil {
		return err // the old state stays as it was
	}
	res, err := b.End()
	if err != nil {
		return err
	}
	if err := writeThrough(c, through); err != nil {
		return err
	}
	// The files first: a state that holds the batch always has them, and
	// a rerun after a kill before the commit writes them again.
	if err := writeStep(c, res); err != nil {
		return err
	}
	if err := b.Commit(res); err != nil {
		return err
	}
	cp, err := db.Compact()
	clikit.ReportCompaction(clikit.EnvOf(c).Stderr, "opic update", path, cp, err)
	return nil
}

func exchangeCommand() *cli.Command {
	return &cli.Command{
		Name:      "exchange",
		Usage:     "complete a sharded batch with the outboxes of all shards",
		UsageText: "opic exchange --state FILE [--batch ID] [--changes FILE] OUT...",
		Description: `Completes the batch that 'opic update --shard I/N --outbox OUT' applied to a
sharded state: reads the outboxes of all N shards (this one's too, in any
order or concatenated), adds the cash sent to this shard's pages, and shares
the virtual page's cash over the pages of all shards. It fails, leaving the
state as it was, unless it finds one summary of every shard of the batch the
state awaits. A bad outbox line is an error, never skipped: cash would be lost.

Example:
   $ opic update --state s1.opic --shard 1/2 --outbox out1.ndjson batch.ndjson
   $ opic exchange --state s1.opic out0.ndjson out1.ndjson
   # with batch IDs; --changes lists the pages the whole batch changed:
   $ opic exchange --state s1.opic --batch 000042-20261123T100000Z --changes ch1.ndjson out0.ndjson out1.ndjson`,
		Flags:  []cli.Flag{stateFlag, batchFlag, changesFlag},
		Action: exchange,
	}
}

func exchange(c *cli.Context) error {
	id, err := batchID(c)
	if err != nil {
		return err
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	in.Strict = true // a skipped transfer would lose its cash
	path := c.String("state")
	db, closeDB, err := openDB(path, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	var inbox opic.Inbox
	err = in.EachLine(c.Context, c.Args().Slice(), func(_ string, line []byte, n int) error {
		if err := inbox.Add(line); err != nil {
			return &record.DataError{Line: n, Err: err}
		}
		return nil
	})
	if err != nil {
		return err
	}
	res, err := db.Exchange(id, &inbox)
	if errors.Is(err, opic.ErrBatchApplied) {
		return applied(c, db, id)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := writeStep(c, res); err != nil {
		return err
	}
	cp, err := db.Compact()
	clikit.ReportCompaction(clikit.EnvOf(c).Stderr, "opic exchange", path, cp, err)
	return nil
}

func nextCommand() *cli.Command {
	return &cli.Command{
		Name:      "next",
		Usage:     "print the crawl frontier: the uncrawled or due pages with most cash",
		UsageText: "opic next --state FILE [--state FILE...] [--n 100] [--min-age 24h] [--now TIME] [--tsv]",
		Description: `Prints the N pages of the state that were never fetched, or were fetched at
least --min-age before --now, the ones with most cash first: greedy OPIC's
choice, as URL records ready for fetch (with their "cash"). A state built with
--shard I/N gives only the pages of shard I; give the states of all shards to
choose over the whole crawl.

Example:
   $ opic update --state crawl.opic seeds.txt        # batch 0: the seeds share the cash
   $ opic update --state crawl.opic batch1.ndjson    # the seeds fetched hand it on
   $ opic next --state crawl.opic --n 2 --now 2026-11-01T12:00:00Z
   {"url":"http://x.test/a","cash":0.2566666666666666}
   {"url":"http://x.test/b","cash":0.2566666666666666}`,
		Flags: []cli.Flag{statesFlag, clikit.TSVFlag, clikit.HeaderFlag,
			&cli.IntFlag{Name: "n", Value: 100, Usage: "print at most `N` pages"},
			&cli.DurationFlag{Name: "min-age", Value: 24 * time.Hour,
				Usage: "a fetched page is due again `D` after its last fetch"},
			&cli.StringFlag{Name: "now", Usage: "the current `TIME` (RFC 3339; default: the clock)"},
		},
		Action: next,
	}
}

func next(c *cli.Context) error {
	n := c.Int("n")
	if n < 0 {
		return clikit.Usagef("--n %d: want N >= 0", n)
	}
	now := time.Now()
	if v := c.String("now"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return clikit.Usagef("--now %q: want an RFC 3339 time", v)
		}
		now = t
	}
	states, err := loadStates(c)
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	out := clikit.Output(c)
	tsv := c.Bool("tsv")
	if tsv && c.Bool("header") {
		if err := out.WriteLine([]byte("url\tcash")); err != nil {
			return err
		}
	}
	for _, e := range opic.Frontier(states, n, now.Add(-c.Duration("min-age")).Unix()) {
		var err error
		if tsv {
			err = out.AppendLine(func(b []byte) []byte {
				b = appendTSV(b, e.URL)
				b = append(b, '\t')
				return strconv.AppendFloat(b, e.Page.Cash, 'g', -1, 64)
			})
		} else {
			r := record.New(e.URL)
			r.SetFloat("cash", e.Page.Cash)
			err = out.Write(r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print the pages of a state file by importance",
		UsageText: "opic show --state FILE [--state FILE...] [--top K] [--tsv [--header]]",
		Description: `Prints the pages of an adaptive OPIC state, most important first, with
"cash", "history" and "importance", as opic does for a static graph. Given the
states of all shards of a crawl, it ranks their pages together, with
importance over the whole crawl.

Example:
   $ opic show --state crawl.opic --top 2 --tsv
   http://x.test/	0.11499999999999999	0.5	0.30750000000000005
   http://x.test/seed	0.11499999999999999	0.5	0.30750000000000005`,
		Flags:  []cli.Flag{statesFlag, clikit.TSVFlag, clikit.HeaderFlag, topFlag},
		Action: show,
	}
}

func show(c *cli.Context) error {
	if c.Int("top") < 0 {
		return clikit.Usagef("--top %d: want K >= 0", c.Int("top"))
	}
	states, err := loadStates(c)
	if err != nil {
		return err
	}
	return writeRanked(c, states, c.Int("top"))
}
