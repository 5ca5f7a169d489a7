package fetchcli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/warc"
	"github.com/sekitei/crawlkit/pkg/warc/cdxj"
)

// cdxCommand indexes the WARC files fetch wrote. It lives here, beside the
// writer of those files, as robots and sitemaps do: the archive and its
// index come from the same tool.
func cdxCommand() *cli.Command {
	return &cli.Command{
		Name:      "cdx",
		Usage:     "write a CDXJ index of WARC files, as pywb replays from",
		UsageText: "fetch cdx WARC...",
		Description: `Writes one line per response, revisit and resource record of the WARC files,
sorted, in the CDXJ form pywb and warcio read:
   SURT-key timestamp {"url","mime","status","digest","length","offset","filename"}
filename is the file's base name (pywb finds it in its archive directory).
A damaged record is reported on stderr with its offset and left out; the
records after it are indexed. Exit status 1 when a file cannot be read.

Example:
   $ fetch --warc crawl/ urls.txt > fetched.ndjson
   $ fetch cdx crawl/*.warc.gz > crawl/index.cdxj`,
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return &clikit.UsageError{Msg: "fetch cdx: name the WARC files to index"}
			}
			env := clikit.EnvOf(c)
			var all []cdxj.Entry
			for _, path := range c.Args().Slice() {
				es, err := cdxj.IndexFile(path, func(s *warc.SkipError) {
					fmt.Fprintf(env.Stderr, "fetch cdx: %s: %v\n", path, s)
				})
				if err != nil {
					return fmt.Errorf("fetch cdx: %w", err)
				}
				all = append(all, es...)
			}
			return cdxj.Write(env.Stdout, all)
		},
	}
}
