package fetchcli

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"
)

// netLogShown is how many of net/http's own messages a run shows; the
// rest are counted.
const netLogShown = 10

// netLog takes the lines Go's net/http writes with the standard logger
// (an unsolicited response on an idle connection, an HTTP/2 transport's
// complaint) and writes them as fetch's diagnostics, "fetch: net/http:
// MESSAGE", the message clipped and quoted where it holds bytes a server
// sent: at most netLogShown of them, then a count.
type netLog struct {
	mu     sync.Mutex
	w      io.Writer
	shown  int
	hidden int
}

func (l *netLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		if l.shown >= netLogShown {
			l.hidden++
			continue
		}
		l.shown++
		msg := strings.TrimPrefix(string(line), "net/http: ")
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		msg = strings.ToValidUTF8(msg, "\uFFFD")
		msg = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return '?'
			}
			return r
		}, msg)
		fmt.Fprintf(l.w, "fetch: net/http: %s\n", msg)
	}
	return len(p), nil
}

// routeNetLog sends the standard logger to w as netLog lines until the
// returned function restores it and reports what was not shown.
func routeNetLog(w io.Writer) (restore func()) {
	l := &netLog{w: w}
	out, flags, prefix := log.Writer(), log.Flags(), log.Prefix()
	log.SetOutput(l)
	log.SetFlags(0)
	log.SetPrefix("")
	return func() {
		log.SetOutput(out)
		log.SetFlags(flags)
		log.SetPrefix(prefix)
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.hidden > 0 {
			fmt.Fprintf(w, "fetch: net/http: %d more messages not shown\n", l.hidden)
		}
	}
}
