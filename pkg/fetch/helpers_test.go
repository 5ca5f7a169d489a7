package fetch

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
)

// A testHost is a real HTTP server on its own loopback address, logging
// when each request arrives (the server's view of politeness).
type testHost struct {
	addr string // ip:port
	srv  *http.Server
	mu   sync.Mutex
	hits []hit
}

type hit struct {
	path string
	at   time.Time
}

func newHost(t *testing.T, ip string, h http.Handler) *testHost {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatalf("listen on %s: %v", ip, err)
	}
	th := &testHost{addr: ln.Addr().String()}
	th.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		th.mu.Lock()
		th.hits = append(th.hits, hit{r.URL.RequestURI(), time.Now()})
		th.mu.Unlock()
		h.ServeHTTP(w, r)
	})}
	go th.srv.Serve(ln)
	t.Cleanup(func() { th.srv.Close() })
	return th
}

func (th *testHost) url(path string) string { return "http://" + th.addr + path }

func (th *testHost) log() []hit {
	th.mu.Lock()
	defer th.mu.Unlock()
	return append([]hit(nil), th.hits...)
}

func (th *testHost) requested(path string) int {
	n := 0
	for _, h := range th.log() {
		if h.path == path {
			n++
		}
	}
	return n
}

// minGap returns the shortest gap between consecutive requests.
func (th *testHost) minGap() time.Duration { return th.minSpan(1) }

// minSpan returns the shortest time between a request and the k-th after
// it: with concurrent requests one late arrival shortens one gap, not k.
func (th *testHost) minSpan(k int) time.Duration {
	hs := th.log()
	best := time.Duration(1 << 62)
	for i := k; i < len(hs); i++ {
		if d := hs[i].at.Sub(hs[i-k].at); d < best {
			best = d
		}
	}
	return best
}

type emitted struct {
	rec *record.Record
	at  time.Time
}

// testConfig is fast, allows loopback and fetches every content type.
func testConfig() Config {
	return Config{
		Types:          []string{"all"},
		AllowPrivate:   true,
		Delay:          NoDelay,
		Workers:        16,
		Timeout:        5 * time.Second,
		ConnectTimeout: 2 * time.Second,
		ReadTimeout:    2 * time.Second,
		RetryBackoff:   50 * time.Millisecond,
	}
}

// runFetch fetches inputs (URLs or NDJSON lines) and returns the records
// by URL, failing on a duplicate or a missing one.
func runFetch(t *testing.T, cfg Config, inputs ...string) map[string]emitted {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := fetchAll(ctx, cfg, inputs)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(out) != len(inputs) {
		t.Fatalf("%d records out for %d in", len(out), len(inputs))
	}
	return out
}

func fetchAll(ctx context.Context, cfg Config, inputs []string) (map[string]emitted, error) {
	out, _, err := fetchTaken(ctx, cfg, inputs)
	return out, err
}

// fetchTaken is fetchAll, and also returns how many of the inputs the run
// took (add returned nil) before it stopped, if it did: those not taken
// get no record.
func fetchTaken(ctx context.Context, cfg Config, inputs []string) (map[string]emitted, int, error) {
	taken := 0
	var mu sync.Mutex
	out := map[string]emitted{}
	var dup error
	cfg.Emit = func(r *record.Record) error {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := out[r.URL()]; ok && dup == nil {
			dup = &codedError{"test", "duplicate record for " + r.URL()}
		}
		// Round-trip through JSON, as a reader downstream would see it.
		r2, err := record.Parse(r.AppendJSON(nil))
		if err != nil {
			return err
		}
		out[r.URL()] = emitted{r2, time.Now()}
		return nil
	}
	cfg.EmitRaw = func(line []byte) error {
		r, err := record.Parse(line)
		if err != nil {
			return err
		}
		return cfg.Emit(r)
	}
	f, err := New(cfg)
	if err != nil {
		return nil, 0, err
	}
	err = f.Run(ctx, func(add func(*record.Record) error) error {
		for i, in := range inputs {
			r, err := record.Parse([]byte(in))
			if err != nil {
				return err
			}
			r.Line = i + 1
			if err := add(r); err != nil {
				return err
			}
			taken++
		}
		return nil
	})
	if dup != nil {
		return out, taken, dup
	}
	return out, taken, err
}

func str(r *record.Record, k string) string {
	s, _ := r.String(k)
	return s
}

func num(r *record.Record, k string) int {
	v, _, _ := r.Float(k)
	return int(v)
}

func errCode(r *record.Record) string {
	e := str(r, "error")
	code, _, _ := strings.Cut(e, ":")
	return code
}

// lookupMap resolves test host names to fixed addresses.
func lookupMap(m map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(ctx context.Context, host string) ([]netip.Addr, error) {
		if a, ok := m[host]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
}
