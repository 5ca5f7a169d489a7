// Package clikit holds the command-line conventions every tool of the toolkit
// shares, on top of github.com/urfave/cli/v2: the common flags (--strict,
// --progress, --tsv, --header, --shard), exit codes (0 success, 1 data or I/O
// error, 2 usage error, 130 after SIGINT and 143 after SIGTERM), clean shutdown on SIGINT/SIGTERM
// without a torn output line, and progress bars on stderr through
// github.com/schollz/progressbar/v3. conventions.go holds the rest of what
// every command line shares: http(s) URL arguments read as records, flags
// before a command name moved to it (or refused), one-line usage errors
// naming the command's help, "did you mean" for a mistyped command, the
// help for a bare command at a terminal, output line by line on a terminal
// and flushed every quarter second elsewhere, a stop as soon as the reader
// of stdout goes away, and the completion and man commands.
//
// A tool's CLI package builds a *cli.App with New, and its main calls
// os.Exit(Run(app, os.Args, StdEnv())).
package clikit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/sekitei/crawlkit/pkg/record"
)

// Version is the toolkit's version, set at build time with
// -ldflags "-X github.com/sekitei/crawlkit/pkg/clikit.Version=...".
var Version = "0.1.0-dev"

// Exit codes.
const (
	ExitOK          = 0
	ExitFailure     = 1 // a data error under --strict, or an I/O failure
	ExitUsage       = 2
	ExitInterrupted = 130 // 128 + SIGINT
	ExitTerminated  = 143 // 128 + SIGTERM
)

// Env is where a tool reads and writes; tests give their own.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// StdEnv returns the process's standard streams.
func StdEnv() Env { return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr} }

// A UsageError is a mistake in the command line: exit status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// The flags every record-reading tool shares.
var (
	StrictFlag = &cli.BoolFlag{Name: "strict",
		Usage: "stop at the first bad input line with exit status 1 (default: report it on stderr and go on)"}
	ProgressFlag = &cli.BoolFlag{Name: "progress",
		Usage: "show a progress bar on stderr even when stderr is not a terminal"}
	TSVFlag = &cli.BoolFlag{Name: "tsv",
		Usage: "write tab-separated rows instead of JSON records"}
	HeaderFlag = &cli.BoolFlag{Name: "header",
		Usage: "with --tsv, write a header line first"}
	ShardFlag = &cli.StringFlag{Name: "shard", Value: "",
		Usage: "process only shard `I/N` of the input, by a hash of the host (no host is split)"}
)

// MaxLineFlag bounds an input line: a longer one is reported as bad and
// skipped, read through without being held in memory.
var MaxLineFlag = &cli.IntFlag{Name: "max-line", Value: record.DefaultMaxLine,
	Usage: "the longest input line read as a record, in `BYTES`; a longer one is reported and skipped"}

// InputFlags are the flags of a tool that reads records.
func InputFlags() []cli.Flag { return []cli.Flag{StrictFlag, ProgressFlag, ShardFlag, MaxLineFlag} }

// New returns an app with the toolkit's conventions. The caller adds flags,
// commands and actions.
func New(name, usage, usageText string) *cli.App {
	app := cli.NewApp()
	app.Name = name
	app.Usage = usage
	app.UsageText = usageText
	app.Version = Version
	app.HideHelpCommand = true
	// urfave/cli's hidden --generate-bash-completion lists a command's
	// subcommands and flags for the scripts of `TOOL completion bash|zsh`.
	app.EnableBashCompletion = true
	app.Metadata = map[string]any{}
	app.ExitErrHandler = func(*cli.Context, error) {} // Run maps errors to exit codes
	app.OnUsageError = onUsageError
	app.Action = noCommand // tools with a default command replace it
	return app
}

func onUsageError(c *cli.Context, err error, _ bool) error {
	msg := err.Error()
	// The flag package says only "parse error": say what is expected.
	if strings.HasSuffix(msg, ": parse error") && strings.Contains(msg, "for flag -") {
		msg = strings.TrimSuffix(msg, ": parse error") + ": want a number of seconds (5, 1.5) or a duration (300ms, 2m, 1h)"
		if !isDurationMsg(c, msg) {
			msg = strings.TrimSuffix(err.Error(), ": parse error") + ": not a valid value of its type"
		}
	}
	return &UsageError{Msg: msg}
}

// isDurationMsg reports whether the flag named in a flag-package message
// is a duration flag of the command.
func isDurationMsg(c *cli.Context, msg string) bool {
	_, rest, _ := strings.Cut(msg, "for flag -")
	name, _, _ := strings.Cut(rest, ":")
	flags := c.App.Flags
	if c.Command != nil && len(c.Command.Flags) > 0 {
		flags = c.Command.Flags
	}
	return isDuration(flags, name)
}

type state struct {
	env     Env
	mu      sync.Mutex
	writers []*record.Writer
	// path is the running command's name with the tool's ("urlfeat
	// sample"), for the hint of a usage error.
	path string
	// readerGone is set when the reader of a pipe on stdout went away: the
	// run ends with a quiet exit 0.
	readerGone atomic.Bool
	// cmd is the deepest command context seen, for the help of a bare
	// command whose first read would wait on a terminal.
	cmd *cli.Context
	// helpShown is set when the command's help answered the run.
	helpShown atomic.Bool
	// signal is the first SIGINT or SIGTERM the run received (0: none):
	// the run then ends with 128 plus its number.
	signal atomic.Int32
	// bare is set when the command line names a command and nothing else,
	// with stdin on a terminal: a usage error then comes with the help.
	bare bool
}

func stateOf(c *cli.Context) *state {
	return c.App.Metadata["clikit"].(*state)
}

// EnvOf returns the streams of the running app.
func EnvOf(c *cli.Context) Env { return stateOf(c).env }

// Output returns the record writer on stdout. It is flushed when the app
// ends, including on an interrupt.
func Output(c *cli.Context) *record.Writer {
	s := stateOf(c)
	return s.newWriter(s.env.Stdout)
}

// OutputTo returns a record writer on w, flushed like Output's.
func OutputTo(c *cli.Context, w io.Writer) *record.Writer {
	return stateOf(c).newWriter(w)
}

// newWriter makes a record writer on w: line-buffered on a terminal, so a
// user sees each record as it is made.
func (s *state) newWriter(w io.Writer) *record.Writer {
	rw := record.NewWriter(w)
	rw.LineBuffered = isTerminal(w)
	s.mu.Lock()
	s.writers = append(s.writers, rw)
	s.mu.Unlock()
	return rw
}

func (s *state) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for _, w := range s.writers {
		if err := w.Flush(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Input returns a record input configured from the common flags.
func Input(c *cli.Context) (*record.Input, error) {
	shard, err := record.ParseShard(c.String("shard"))
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	env := EnvOf(c)
	return &record.Input{
		Tool:    c.App.Name,
		Strict:  c.Bool("strict"),
		Stderr:  env.Stderr,
		Stdin:   env.Stdin,
		Shard:   shard,
		MaxLine: c.Int("max-line"), // 0 without the flag: the default
	}, nil
}

// ShowProgress reports whether progress should be drawn: --progress, or
// stderr is a terminal and stdout is not (records written to the terminal
// would share the bar's row).
func ShowProgress(c *cli.Context) bool {
	if c.Bool("progress") {
		return true
	}
	env := EnvOf(c)
	return isTerminal(env.Stderr) && !isTerminal(env.Stdout)
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Progress returns a progress bar on stderr counting up to total (bytes when
// bytes is true), or a silent one when progress is off. total -1 draws a
// spinner.
func Progress(c *cli.Context, total int64, desc string, bytes bool) *progressbar.ProgressBar {
	if !ShowProgress(c) {
		return progressbar.DefaultSilent(total)
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(EnvOf(c).Stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(24),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionOnCompletion(func() { fmt.Fprint(EnvOf(c).Stderr, "\n") }),
	}
	if bytes {
		// The byte rate once, as MB/s; an items rate beside it would
		// repeat it as "it/s".
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("records"))
	}
	return progressbar.NewOptions64(total, opts...)
}

// InputSize returns the total size of the named files, or -1 when reading
// standard input or a size is unknown; it sizes a progress bar.
func InputSize(files []string) int64 {
	if len(files) == 0 {
		return -1
	}
	var total int64
	for _, f := range files {
		st, err := os.Stat(f)
		if f == "-" || err != nil || !st.Mode().IsRegular() {
			return -1
		}
		total += st.Size()
	}
	return total
}

// TrackInput makes in advance bar by the bytes it reads.
func TrackInput(in *record.Input, bar *progressbar.ProgressBar) {
	var pending int
	in.Counted = func(n int) {
		pending += n
		if pending >= 64<<10 {
			bar.Add(pending)
			pending = 0
		}
	}
}

// gcBallast is the heap the collector counts as live in every tool, from
// its first collection on.
var gcBallast = 16 << 20

// ballast holds the ballast once allocated (armBallast); armed is set by
// the first arming of the process.
var (
	ballast atomic.Pointer[[]byte]
	armed   atomic.Bool
)

// ballastProbe is an object left unreachable, whose finalizer runs at the
// first collection.
type ballastProbe struct {
	_ *byte // not tiny: the tiny allocator's objects may never be finalized
	_ [16]byte
}

// armBallast has the ballast allocated at the process's first collection.
// A tool streaming records keeps little alive, and the collector's default
// goal (twice the live heap, 4 MB at least) would have it collect every
// few thousand records; the ballast raises that floor (it is never
// written, so it takes address space, not memory). Allocated at start, its
// 16 MB passed the first goal at once: a collection in every command, 2 ms
// of the 12 of a one-query barrel search. A command that ends before its
// heap reaches 4 MB now never collects.
func armBallast() {
	if armed.Swap(true) {
		return // one ballast a process, however many runs (the tests')
	}
	runtime.SetFinalizer(&ballastProbe{}, func(*ballastProbe) {
		b := make([]byte, gcBallast)
		ballast.Store(&b)
	})
}

// interruptGrace is how long a tool has to finish by itself after a signal
// before its output is flushed and the process exits.
var interruptGrace = 3 * time.Second

// Run runs app with args and returns the exit status. On SIGINT or SIGTERM
// the context given to the actions is cancelled; a tool that does not return
// within a few seconds (blocked reading stdin, say) has its whole output lines
// flushed and the process exits with status 130.
func Run(app *cli.App, args []string, env Env) int {
	armBallast()
	defer StartProfiles(app.Name, env.Stderr)()
	st := &state{env: env, path: app.Name}
	app.Metadata["clikit"] = st
	app.Writer = env.Stdout
	app.ErrWriter = env.Stderr
	for _, cmd := range app.Commands {
		setUsageHandler(cmd)
	}
	prepareCommands(app)
	addDocCommands(app)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if isCompletion(args) {
		// the completion scripts' request: urfave/cli answers it as given
		return exitCode(st, app.RunContext(ctx, args), ctx, env.Stderr)
	}
	st.path = commandPath(app, args)
	st.bare = len(strings.Fields(st.path)) == len(args) && isTerminal(env.Stdin)
	if err := checkCommand(app, args); err != nil {
		return exitCode(st, err, ctx, env.Stderr)
	}
	if err := checkStrayFlags(app, args); err != nil {
		return exitCode(st, err, ctx, env.Stderr)
	}
	st.env.Stdin = interruptibleStdin(ctx, st, env.Stdin)
	stopWatch := watchStdout(env.Stdout, st, cancel)
	defer stopWatch()
	stopFlush := st.flushEvery()
	defer stopFlush()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// probe receives the same signals and is read by nobody: at the end of
	// the run, stopping it waits until every signal the process has taken
	// is delivered, so that a signal that came just before the input's end
	// is not lost to the race with the goroutine below (see settleSignals).
	probe := make(chan os.Signal, 2)
	signal.Notify(probe, syscall.SIGINT, syscall.SIGTERM)
	// With SIGPIPE caught, a write to a closed stdout returns EPIPE instead
	// of killing the process (status 141), and exitCode makes it the quiet
	// exit 0 that `tool | head` should end with.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case sig := <-sigs:
			st.noteSignal(sig)
		case <-done:
			return
		}
		cancel()
		select {
		case <-sigs:
		case <-time.After(interruptGrace):
		case <-done:
			return
		}
		st.flush()
		fmt.Fprintf(env.Stderr, "%s: interrupted\n", app.Name)
		os.Exit(st.interruptedCode())
	}()

	err := app.RunContext(ctx, permute(app, args))
	st.settleSignals(probe)
	stopFlush()
	ferr := st.flush()
	if err == nil && ferr != nil && !isBrokenPipe(ferr) {
		err = ferr
	}
	return exitCode(st, err, ctx, env.Stderr)
}

// prepareCommands gives every subcommand a --version flag, and takes over
// the check of required flags from urfave/cli, which prints the command's
// help on standard output, where it would flow into the next tool of a
// pipe: here a missing flag prints the help on stderr and exits 2.
func prepareCommands(app *cli.App) {
	type job struct {
		cmd      *cli.Command
		required []string
	}
	var jobs []job
	var walk func(cmds []*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			jobs = append(jobs, job{cmd, requiredNames(cmd.Flags)})
			walk(cmd.Subcommands)
		}
	}
	walk(app.Commands)
	rootRequired := requiredNames(app.Flags)
	// Flags may be shared between commands: clear Required only once
	// every command's list is taken.
	clearRequired(app.Flags)
	for _, j := range jobs {
		clearRequired(j.cmd.Flags)
	}
	if len(rootRequired) > 0 {
		app.Before = checkRequired(rootRequired, app.Before)
	}
	app.Before = remember(app.Before)
	for _, j := range jobs {
		if !hasFlag(j.cmd.Flags, "version") {
			j.cmd.Flags = append(j.cmd.Flags, &cli.BoolFlag{Name: "version", Usage: "print the version"})
			j.cmd.Before = showVersion(j.cmd.Before)
		}
		j.cmd.Before = remember(j.cmd.Before)
		if len(j.required) > 0 {
			j.cmd.Before = checkRequired(j.required, j.cmd.Before)
		}
	}
}

func requiredNames(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			names = append(names, f.Names()[0])
		}
	}
	return names
}

// clearRequired sets the Required field every urfave/cli flag type has;
// reflection, since the flag types share no setter.
func clearRequired(flags []cli.Flag) {
	for _, f := range flags {
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			v := reflect.ValueOf(f)
			if v.Kind() == reflect.Pointer {
				if field := v.Elem().FieldByName("Required"); field.IsValid() && field.CanSet() {
					field.SetBool(false)
				}
			}
		}
	}
}

func hasFlag(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// errVersionShown ends a run that printed the version: exit status 0.
var errVersionShown = cli.Exit("", ExitOK)

func showVersion(next cli.BeforeFunc) cli.BeforeFunc {
	return func(c *cli.Context) error {
		if c.Bool("version") {
			fmt.Fprintf(c.App.Writer, "%s version %s\n", c.App.Name, c.App.Version)
			return errVersionShown
		}
		if next != nil {
			return next(c)
		}
		return nil
	}
}

func checkRequired(names []string, next cli.BeforeFunc) cli.BeforeFunc {
	return func(c *cli.Context) error {
		if c.Bool("version") && next != nil {
			return next(c) // --version needs no other flag
		}
		var missing []string
		for _, n := range names {
			if !c.IsSet(n) {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			if c.NumFlags() == 0 && c.NArg() == 0 && stdinIsTerminal(c) {
				// the bare command typed at a terminal: its help
				HelpToStderr(c)
				return helpShown{}
			}
			if len(missing) == 1 {
				return Usagef("Required flag %q not set", missing[0])
			}
			return Usagef("Required flags %q not set", strings.Join(missing, ", "))
		}
		if next != nil {
			return next(c)
		}
		return nil
	}
}

func setUsageHandler(cmd *cli.Command) {
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = onUsageError
	}
	for _, sub := range cmd.Subcommands {
		setUsageHandler(sub)
	}
}

func exitCode(st *state, err error, ctx context.Context, stderr io.Writer) int {
	name, _, _ := strings.Cut(st.path, " ")
	if st.readerGone.Load() {
		return ExitOK // the reader of stdout went away: `tool | head` is normal use
	}
	if st.helpShown.Load() || errors.As(err, new(helpShown)) {
		return ExitUsage // the help is on stderr
	}
	if st.signal.Load() != 0 || ctx.Err() != nil {
		// Whatever the tool made of its cancelled work (some wrap the
		// error as text, some finish it when the input ends just after
		// the signal), the run was interrupted: 130 after SIGINT, 143
		// after SIGTERM.
		fmt.Fprintf(stderr, "%s: interrupted\n", name)
		return st.interruptedCode()
	}
	if err == nil {
		return ExitOK
	}
	if isBrokenPipe(err) {
		return ExitOK // the reader went away: `tool | head` is normal use
	}
	var ue *UsageError
	if errors.As(err, &ue) || isFlagError(err) {
		if st.bare && st.cmd != nil {
			// the bare command typed at a terminal: its help first
			HelpToStderr(st.cmd)
		}
		// One line: the mistake and where the command's flags are told.
		fmt.Fprintf(stderr, "%s: %s; see '%s --help'\n", st.path, strings.TrimSpace(err.Error()), st.path)
		return ExitUsage
	}
	if errors.Is(err, record.ErrStrict) {
		return ExitFailure // the bad line is already reported
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintf(stderr, "%s: %s\n", name, msg)
		}
		return ec.ExitCode()
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return ExitFailure
}

// noteSignal records the run's first SIGINT or SIGTERM.
func (s *state) noteSignal(sig os.Signal) {
	if n, ok := sig.(syscall.Signal); ok {
		s.signal.CompareAndSwap(0, int32(n))
	}
}

// interruptedCode is the exit status of an interrupted run: 128 plus the
// signal's number (130 for SIGINT, 143 for SIGTERM); 130 when the run was
// cancelled some other way.
func (s *state) interruptedCode() int {
	if n := s.signal.Load(); n != 0 {
		return 128 + int(n)
	}
	return ExitInterrupted
}

// settleSignals is called when the command has returned: a SIGINT or
// SIGTERM the process received before then must decide the exit status
// even if the goroutine that reads the signals has not run yet (the input
// ended just after the signal, and the tool finished its work). Stopping
// probe waits until every signal the Go runtime has taken is delivered to
// the channels; a signal the kernel holds pending for the process, not
// yet taken by the runtime, is read from /proc.
func (s *state) settleSignals(probe chan os.Signal) {
	signal.Stop(probe)
	select {
	case sig := <-probe:
		s.noteSignal(sig)
	default:
	}
	// A thread may have taken the signal from the kernel and not yet
	// handed it to the runtime (it was preempted in between, on a busy
	// machine): look again a moment later. The goroutine reading sigs
	// records what reaches it meanwhile. The pending signals of the other
	// threads (a signal sent to one thread) are read at the last look.
	for i := range 3 {
		if s.signal.Load() != 0 {
			return
		}
		if sig := pendingSignal(i == 2); sig != 0 {
			s.signal.CompareAndSwap(0, int32(sig))
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// isFlagError recognises urfave/cli's errors for bad flags that bypass
// OnUsageError (required flags, unknown commands).
func isFlagError(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "Required flag") || strings.HasPrefix(s, "flag provided but not defined") ||
		strings.HasPrefix(s, "No help topic")
}

// HelpToStderr prints the help of the running command (or of the app at
// the top level) on stderr, where it cannot flow into the next tool of a
// pipe as input.
func HelpToStderr(c *cli.Context) {
	w := c.App.Writer
	c.App.Writer = c.App.ErrWriter
	defer func() { c.App.Writer = w }()
	if c.Command != nil && c.Command.Name != "" && len(c.Lineage()) > 2 {
		cli.ShowCommandHelp(c.Lineage()[1], c.Command.Name)
		return
	}
	cli.ShowAppHelp(c)
}

// errHelpShown ends a run whose usage mistake was answered with the help.
var errHelpShown = cli.Exit("", ExitUsage)

// NoInput answers a tool started with no file and its standard input on a
// terminal: a user who typed the bare name wants the help, not a tool
// waiting for them to type records. It prints the help on stderr and
// returns an error for exit status 2; it returns nil when there is input.
func NoInput(c *cli.Context) error {
	if c.NArg() > 0 || !stdinIsTerminal(c) {
		return nil
	}
	HelpToStderr(c)
	return errHelpShown
}

func stdinIsTerminal(c *cli.Context) bool {
	switch in := EnvOf(c).Stdin.(type) {
	case *termStdin:
		return true
	case *os.File:
		return term.IsTerminal(int(in.Fd()))
	}
	return false
}

// noCommand is the action of an app without a default command: the help
// on stderr and exit status 2, since a bare name or an unknown command is
// a usage mistake.
func noCommand(c *cli.Context) error {
	if c.NArg() > 0 {
		return Usagef("no command %q", c.Args().First())
	}
	HelpToStderr(c)
	return errHelpShown
}

// StartProfiles writes the CPU profile to $CRAWLKIT_CPUPROFILE and the heap
// profile at exit to $CRAWLKIT_MEMPROFILE, for `go tool pprof`: a tool
// that is slow or large inside a pipeline or the crawl loop is profiled
// where it runs, without a flag on every command. A %n in the name becomes
// the tool's name and process ID, so that the several tools of one turn
// write several files. Run calls it for every tool; a command of its own
// (internal/cmd) calls it from main.
func StartProfiles(name string, stderr io.Writer) (stop func()) {
	n := fmt.Sprintf("%s.%d", name, os.Getpid())
	cpu := strings.ReplaceAll(os.Getenv("CRAWLKIT_CPUPROFILE"), "%n", n)
	heap := strings.ReplaceAll(os.Getenv("CRAWLKIT_MEMPROFILE"), "%n", n)
	var cpuFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "CRAWLKIT_CPUPROFILE: %v\n", err)
		} else {
			cpuFile = f
		}
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		if heap != "" {
			f, err := os.Create(heap)
			if err == nil {
				err = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintf(stderr, "CRAWLKIT_MEMPROFILE: %v\n", err)
			}
		}
	}
}

// SplitList splits a comma-separated flag value ("html, pdf,"), trimming
// spaces and dropping empty items.
func SplitList(v string) []string {
	var l []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			l = append(l, f)
		}
	}
	return l
}
