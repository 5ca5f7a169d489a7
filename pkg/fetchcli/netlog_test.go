package fetchcli

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/clikit"
)

// TestNetHTTPLogIsFetchDiagnostics: a server that sends an unsolicited
// response on an idle keep-alive connection makes Go's transport log a
// line of its own; fetch writes it on its stderr as "fetch: net/http: ...",
// quoted and clipped, not as a raw line of the standard logger.
func TestNetHTTPLogIsFetchDiagnostics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.32.20:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				for {
					for { // one request's header
						l, err := br.ReadString('\n')
						if err != nil {
							return
						}
						if l == "\r\n" {
							break
						}
					}
					c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 16\r\n\r\n<title>a</title>"))
					time.Sleep(50 * time.Millisecond) // the connection is idle in the client's pool
					c.Write([]byte("HTTP/1.1 200 OK\r\nX-Ghost: \x1b[31mred\r\n\r\n"))
				}
			}()
		}
	}()
	base := "http://" + ln.Addr().String()
	var out, stderr bytes.Buffer
	args := []string{"fetch", "--allow-private", "--ignore-robots", "--delay", "500ms", "--per-host", "1", base + "/a", base + "/b"}
	if rc := Main(args, clikit.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &stderr}); rc != 0 {
		t.Fatalf("fetch exit %d: %s", rc, stderr.String())
	}
	if n := strings.Count(out.String(), `"status":200`); n != 2 {
		t.Errorf("%d pages fetched, want 2:\n%s", n, out.String())
	}
	found := false
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "Unsolicited response") {
			found = true
			t.Logf("%s", l)
			if !strings.HasPrefix(l, "fetch: net/http: ") || strings.ContainsRune(l, '\x1b') {
				t.Errorf("net/http's line not written as fetch's: %q", l)
			}
		}
	}
	if !found {
		t.Errorf("no net/http message on fetch's stderr:\n%s", stderr.String())
	}
}
