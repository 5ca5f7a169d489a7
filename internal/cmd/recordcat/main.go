// Command recordcat copies records from its input to its output through the
// toolkit's record layer (clikit input, parse, write) and changes nothing:
// the cost every tool pays before its own work, measured as a whole process
// by scripts/records-bench.sh. --shard, --strict and bad-line reports work
// as in every tool.
package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
)

func main() {
	app := clikit.New("recordcat", "copy records through the record layer", "recordcat [FILE...]")
	app.Flags = clikit.InputFlags()
	app.Action = func(c *cli.Context) error {
		in, err := clikit.Input(c)
		in.Reuse = true // each record is written and forgotten
		if err != nil {
			return err
		}
		out := clikit.Output(c)
		return in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error { return out.Write(r) })
	}
	os.Exit(clikit.Run(app, os.Args, clikit.StdEnv()))
}
