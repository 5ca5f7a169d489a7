package clikit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/sekitei/crawlkit/pkg/record"
)

func init() {
	// -v means --verbose wherever a command has it; the version is
	// --version alone, at every level.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
}

// remember records the context of each command as it starts: the deepest
// one is the command that runs.
func remember(next cli.BeforeFunc) cli.BeforeFunc {
	return func(c *cli.Context) error {
		if m, ok := c.App.Metadata["clikit"].(*state); ok {
			m.cmd = c
		}
		if next != nil {
			return next(c)
		}
		return nil
	}
}

const completionFlag = "--generate-bash-completion"

func isCompletion(args []string) bool {
	return len(args) > 0 && args[len(args)-1] == completionFlag
}

// walkArgs follows args down the command tree: it calls at for the first
// positional argument of each level (nil, nil at the end) and returns the
// path of command names.
func walkArgs(app *cli.App, args []string, at func(cmds []*cli.Command, action cli.ActionFunc, arg string) bool) []string {
	path := []string{app.Name}
	flags, cmds, action := app.Flags, app.Commands, app.Action
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return path
		}
		if len(a) > 1 && a[0] == '-' {
			if !strings.Contains(a, "=") && takesValueAt(flags, cmds, a) {
				i++
			}
			continue
		}
		cmd := findCommand(cmds, a)
		if cmd == nil {
			if at != nil {
				at(cmds, action, a)
			}
			return path
		}
		path = append(path, cmd.Name)
		flags, cmds, action = cmd.Flags, cmd.Subcommands, cmd.Action
	}
	return path
}

// commandPath names the command args run: "sekitei", "urlfeat sample".
func commandPath(app *cli.App, args []string) string {
	return strings.Join(walkArgs(app, args, nil), " ")
}

// checkCommand refuses a mistyped command: a level without an action of
// its own takes only its commands' names, and a level that reads files
// takes a word near a command's name that is neither a file nor a URL as a
// mistake ("sekitei segmnts x").
func checkCommand(app *cli.App, args []string) error {
	var err error
	walkArgs(app, args, func(cmds []*cli.Command, action cli.ActionFunc, arg string) bool {
		if len(cmds) == 0 || arg == "-" || record.IsURLArg(arg) {
			return false
		}
		near := nearest(cmds, arg)
		if isNoCommand(action) {
			err = Usagef("unknown command %q", arg)
			if near != "" {
				err = Usagef("unknown command %q; did you mean %q?", arg, near)
			}
			return false
		}
		if _, statErr := os.Stat(arg); statErr != nil && near != "" {
			err = Usagef("unknown command %q; did you mean %q?", arg, near)
		}
		return false
	})
	return err
}

func isNoCommand(action cli.ActionFunc) bool {
	return action == nil || reflect.ValueOf(action).Pointer() == reflect.ValueOf(noCommand).Pointer()
}

// nearest returns the visible command name within two edits of word (a
// transposition is one), or its only prefix match, or "".
func nearest(cmds []*cli.Command, word string) string {
	best, bestD := "", 3
	var prefixed []string
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, n := range c.Names() {
			if d := editDistance(word, n); d < bestD && d < len(n)/2+1 {
				best, bestD = c.Name, d
			}
			if len(word) >= 2 && strings.HasPrefix(n, word) {
				prefixed = append(prefixed, c.Name)
			}
		}
	}
	if best == "" && len(prefixed) == 1 {
		return prefixed[0]
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and adjacent transpositions.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// helpShown ends a run whose command was answered with its help.
type helpShown struct{}

func (helpShown) Error() string { return "help shown" }

// termStdin is standard input on a terminal. Its first read, by a command
// given no file, prints the command's help instead: the user typed the bare
// name. A read returns at once when the run is cancelled (Ctrl-C), where a
// read of the terminal itself would wait for a line.
type termStdin struct {
	ctx     context.Context
	f       *os.File
	st      *state
	asked   bool
	pending chan termRead
	rest    []byte
}

type termRead struct {
	b   []byte
	err error
}

func interruptibleStdin(ctx context.Context, st *state, r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return r
	}
	return &termStdin{ctx: ctx, f: f, st: st}
}

func (t *termStdin) Read(p []byte) (int, error) {
	if !t.asked {
		t.asked = true
		if c := t.st.cmd; c != nil && c.NArg() == 0 {
			HelpToStderr(c)
			t.st.helpShown.Store(true)
			return 0, helpShown{}
		}
	}
	if len(t.rest) > 0 {
		n := copy(p, t.rest)
		t.rest = t.rest[n:]
		return n, nil
	}
	if t.pending == nil {
		t.pending = make(chan termRead, 1)
		buf := make([]byte, max(len(p), 4096))
		go func(ch chan termRead) {
			n, err := t.f.Read(buf)
			ch <- termRead{buf[:n], err}
		}(t.pending)
	}
	select {
	case r := <-t.pending:
		t.pending = nil
		n := copy(p, r.b)
		t.rest = r.b[n:]
		return n, r.err
	case <-t.ctx.Done():
		return 0, t.ctx.Err()
	}
}

// watchStdout cancels the run as soon as the reader of a pipe on stdout
// goes away (`fetch urls.txt | head -1`): a tool that writes its records
// through a buffer would learn it only at its next flush, and a fetcher
// would go on requesting pages meanwhile. A tool that does not stop within
// the interrupt grace exits 0 all the same.
func watchStdout(w io.Writer, st *state, cancel func()) (stop func()) {
	f, ok := w.(*os.File)
	if !ok {
		return func() {}
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return func() {}
	}
	done := make(chan struct{})
	var once sync.Once
	go func() {
		fds := []unix.PollFd{{Fd: int32(f.Fd())}}
		for {
			select {
			case <-done:
				return
			default:
			}
			fds[0].Revents = 0
			n, err := unix.Poll(fds, 50)
			if err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				break
			}
		}
		st.readerGone.Store(true)
		cancel()
		select {
		case <-done:
		case <-time.After(interruptGrace):
			os.Exit(ExitOK)
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// flushInterval bounds how long a record waits in an output buffer: a slow
// producer's (fetch's) records reach the reader downstream while they come,
// and `fetch | head -1` ends after a few requests, not a buffer's worth. A
// fast producer fills its buffer long before: the extra writes cost nothing.
const flushInterval = 250 * time.Millisecond

// flushEvery writes out buffered records every flushInterval.
func (s *state) flushEvery() (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		tick := time.NewTicker(flushInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				s.flush()
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// addDocCommands gives the app the hidden commands that print its shell
// completion and its manual page, both made from the app's own
// definitions.
func addDocCommands(app *cli.App) {
	if findCommand(app.Commands, "completion") == nil {
		app.Commands = append(app.Commands, &cli.Command{
			Name: "completion", Hidden: true, ArgsUsage: "bash|zsh",
			Usage: "print the shell completion script (source <(TOOL completion bash))",
			Action: func(c *cli.Context) error {
				script, ok := completionScripts[c.Args().First()]
				if !ok || c.NArg() != 1 {
					return Usagef("want one shell: bash or zsh")
				}
				_, err := fmt.Fprint(c.App.Writer, strings.ReplaceAll(script, "PROG", c.App.Name))
				return err
			},
		})
	}
	if findCommand(app.Commands, "man") == nil {
		app.Commands = append(app.Commands, &cli.Command{
			Name: "man", Hidden: true,
			Usage: "print the manual page in roff (TOOL man > TOOL.1)",
			Action: func(c *cli.Context) error {
				if c.NArg() != 0 {
					return Usagef("man takes no argument")
				}
				page, err := c.App.ToManWithSection(1) // a user command
				if err != nil {
					return err
				}
				_, err = fmt.Fprint(c.App.Writer, page)
				return err
			},
		})
	}
}

// The scripts ask the tool itself for the words that may follow (urfave/cli's
// --generate-bash-completion), so they follow its commands and flags.
var completionScripts = map[string]string{
	"bash": `# bash completion for PROG: source <(PROG completion bash)
_PROG_complete() {
  local cur=${COMP_WORDS[COMP_CWORD]} opts
  if [[ "$cur" == -* ]]; then
    opts=$("${COMP_WORDS[@]:0:COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${COMP_WORDS[@]:0:COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _PROG_complete PROG
`,
	"zsh": `#compdef PROG
# zsh completion for PROG: PROG completion zsh > "${fpath[1]}/_PROG"
_PROG() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
# Autoloaded from fpath this file is _PROG's body: complete now. Sourced,
# register the function.
if [[ "${funcstack[1]}" == "_PROG" ]]; then
  _PROG "$@"
else
  compdef _PROG PROG
fi
`,
}

// checkStrayFlags refuses a flag written before a command name that the
// command does not take (`fetch --workers 8 stats`): the parent's flag
// would be set and the command would go on without it. A flag the command
// takes is moved to it by permute.
func checkStrayFlags(app *cli.App, args []string) error {
	path := []string{app.Name}
	flags, cmds := app.Flags, app.Commands
	var seen []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if len(a) > 1 && a[0] == '-' {
			seen = append(seen, flagName(a))
			if !strings.Contains(a, "=") && takesValueAt(flags, cmds, a) {
				i++
			}
			continue
		}
		cmd := findCommand(cmds, a)
		if cmd == nil {
			return nil
		}
		for _, name := range seen {
			switch name {
			case "help", "h", "version", "generate-bash-completion":
				continue
			}
			if !hasFlag(cmd.Flags, name) {
				return Usagef("--%s is a flag of '%s', not of '%s %s'", name, strings.Join(path, " "), strings.Join(path, " "), cmd.Name)
			}
		}
		path = append(path, cmd.Name)
		flags, cmds, seen = cmd.Flags, cmd.Subcommands, nil
	}
	return nil
}
