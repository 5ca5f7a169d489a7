package clikit

import (
	"fmt"
	"io"

	"github.com/sekitei/crawlkit/pkg/boltstate"
)

// ReportCompaction tells on stderr what a store's compaction after a batch
// did (boltstate.CompactIfSparse): a line when it compacted, a warning
// when it failed. A failed compaction is not the command's failure: the
// batch was committed before it, and the state is as it was.
func ReportCompaction(stderr io.Writer, cmd, path string, c boltstate.Compaction, err error) {
	switch {
	case err != nil && c.Done:
		fmt.Fprintf(stderr, "%s: warning: compacted %s: %v, but: %v (the batch is applied)\n", cmd, path, c, err)
	case err != nil:
		fmt.Fprintf(stderr, "%s: warning: %s not compacted (the batch is applied, the state as it was): %v\n", cmd, path, err)
	case c.Done:
		fmt.Fprintf(stderr, "%s: compacted %s: %v\n", cmd, path, c)
	}
}
