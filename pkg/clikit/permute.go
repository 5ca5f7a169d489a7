package clikit

import (
	"strconv"
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
	// pending holds the flags of the current level, each with its value:
	// those a subcommand named next defines move after its name, so that
	// `fetch --allow-private sitemaps` means what `fetch sitemaps
	// --allow-private` does instead of setting the parent's flag alone.
	var pending [][]string
	var positional []string
	late, moved := false, false
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
			if name, v, ok := strings.Cut(a, "="); ok && isDuration(flags, name) {
				a = name + "=" + seconds(v)
			}
			group := []string{a}
			if takesValueAt(flags, cmds, a) && !strings.Contains(a, "=") && i+1 < len(args) {
				i++
				v := args[i]
				if isDuration(flags, a) {
					v = seconds(v)
				}
				group = append(group, v)
			}
			pending = append(pending, group)
		default:
			if len(positional) == 0 {
				if cmd := findCommand(cmds, a); cmd != nil {
					var move [][]string
					for _, g := range pending {
						if hasFlag(cmd.Flags, flagName(g[0])) {
							move = append(move, g)
							moved = true
						} else {
							out = append(out, g...)
						}
					}
					out = append(out, a)
					pending = move
					flags, cmds = cmd.Flags, cmd.Subcommands
					continue
				}
			}
			positional = append(positional, a)
		}
	}
	for _, g := range pending {
		out = append(out, g...)
	}
	if !late && !moved {
		// Only the durations may have been rewritten: keep the order.
		return rewriteDurations(app, args)
	}
	return append(out, positional...)
}

func flagName(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}

// takesValueAt reports whether a flag takes a value at a level: by the
// level's own flags, or, for a flag the level does not define, by the
// commands below it that do.
func takesValueAt(flags []cli.Flag, cmds []*cli.Command, arg string) bool {
	if hasFlag(flags, flagName(arg)) {
		return takesValue(flags, arg)
	}
	for _, c := range cmds {
		if hasFlag(c.Flags, flagName(arg)) {
			return takesValue(c.Flags, arg)
		}
	}
	return false
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

// One rule for durations in every tool: a plain number is seconds ("5",
// "1.5"), anything else a Go duration ("300ms", "2m", "1h"). urfave/cli's
// duration flags take only the latter, so a plain number gets its "s" here.
func seconds(v string) string {
	if _, err := strconv.ParseFloat(v, 64); err == nil && v != "" && !strings.ContainsAny(v, "eEnNiI") {
		return v + "s"
	}
	return v
}

func isDuration(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	name, _, _ = strings.Cut(name, "=")
	for _, f := range flags {
		if _, ok := f.(*cli.DurationFlag); ok {
			for _, n := range f.Names() {
				if n == name {
					return true
				}
			}
		}
	}
	return false
}

// rewriteDurations is permute's walk without moving anything: it gives
// plain-number durations their unit.
func rewriteDurations(app *cli.App, args []string) []string {
	flags, cmds := app.Flags, app.Commands
	out := append([]string(nil), args...)
	seenPositional := false
	for i := 1; i < len(out); i++ {
		a := out[i]
		switch {
		case a == "--":
			return out
		case len(a) > 1 && a[0] == '-':
			if name, v, ok := strings.Cut(a, "="); ok {
				if isDuration(flags, name) {
					out[i] = name + "=" + seconds(v)
				}
				continue
			}
			if takesValueAt(flags, cmds, a) && i+1 < len(out) {
				if isDuration(flags, a) {
					out[i+1] = seconds(out[i+1])
				}
				i++
			}
		default:
			if !seenPositional {
				if cmd := findCommand(cmds, a); cmd != nil {
					flags, cmds = cmd.Flags, cmd.Subcommands
					continue
				}
			}
			seenPositional = true
		}
	}
	return out
}
