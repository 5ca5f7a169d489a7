package clikit

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// permute moves flags written after positional arguments in front of them,
// as GNU tools allow (`tool FILE --tsv`): urfave/cli, like Go's flag
// package, stops reading flags at the first positional argument. It walks
// the subcommand path so that each flag stays at its command's level, keeps
// a flag's value with it, and leaves everything after "--" alone. Args
// without a late flag come back unchanged.
func permute(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	flags, cmds := app.Flags, app.Commands
	out := []string{args[0]}
	var positional []string
	late := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			if len(positional) > 0 {
				late = true
			}
			out = append(out, a)
			if takesValue(flags, a) && !strings.Contains(a, "=") && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		default:
			if len(positional) == 0 {
				if cmd := findCommand(cmds, a); cmd != nil {
					out = append(out, a)
					flags, cmds = cmd.Flags, cmd.Subcommands
					continue
				}
			}
			positional = append(positional, a)
		}
	}
	if !late {
		return args
	}
	return append(out, positional...)
}

func takesValue(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	name, _, _ = strings.Cut(name, "=")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				if d, ok := f.(cli.DocGenerationFlag); ok {
					return d.TakesValue()
				}
				return false
			}
		}
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
