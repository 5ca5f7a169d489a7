package fetch

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/hostrate"
)

// Six host names on one IP address (shared hosting, a subdomain farm):
// queued by IP (the default) or by registered domain, the server sees the
// delay between any two requests, robots.txt included; queued by host it
// sees six times the rate. Paced by host-rate estimates (--host-rates, the
// loop's default), each host's estimate spaces the requests of its whole
// queue in the same way.
func TestQueueBy(t *testing.T) {
	const delay = 60 * time.Millisecond
	for _, c := range []struct {
		mode    string
		ip      string
		atLeast bool // the server's smallest gap is at least the delay
		rates   bool // paced by a hostrate.Estimator whose hosts start at one request per delay
	}{
		{QueueByIP, "127.0.0.66", true, false},
		{"", "127.0.0.67", true, false}, // the default is by IP
		{QueueByDomain, "127.0.0.68", true, false},
		{QueueByHost, "127.0.0.69", false, false},
		{QueueByIP, "127.0.0.65", true, true},
		{QueueByDomain, "127.0.0.76", true, true},
	} {
		name := c.mode
		if c.rates {
			name += "+host-rates"
		}
		t.Run(name, func(t *testing.T) {
			srv := newHost(t, c.ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					http.NotFound(w, r)
					return
				}
				fmt.Fprintf(w, "<title>%s</title>", r.Host)
			}))
			_, port, _ := net.SplitHostPort(srv.addr)
			names := map[string]string{}
			var in []string
			for i := 0; i < 6; i++ {
				name := fmt.Sprintf("user%d.narod.test", i)
				names[name] = c.ip
				for j := 0; j < 2; j++ {
					in = append(in, fmt.Sprintf("http://%s:%s/p%d", name, port, j))
				}
			}
			cfg := testConfig()
			cfg.QueueBy = c.mode
			cfg.Delay = delay
			cfg.LookupIP = lookupMap(names)
			least := delay
			if c.rates {
				cfg.HostRates = hostrate.New(hostrate.Config{Initial: float64(time.Second) / float64(delay), Ceiling: 100})
				// The estimator spaces request starts on our side; the
				// server sees them give or take the network's jitter.
				least = delay * 3 / 4
			}
			out := runFetch(t, cfg, in...)
			for _, u := range in {
				if num(out[u].rec, "status") != 200 {
					t.Fatalf("%s: %s", u, out[u].rec.AppendJSON(nil))
				}
			}
			if n := len(srv.log()); n != 18 {
				t.Fatalf("%d requests, want 12 pages and 6 robots.txt", n)
			}
			gap := srv.minGap()
			if c.atLeast && gap < least {
				t.Errorf("smallest gap %v between requests to one server, want at least %v", gap, least)
			}
			if !c.atLeast && gap >= delay {
				t.Errorf("queued by host: smallest gap %v; six hosts should have overlapped", gap)
			}
		})
	}
}

func TestRegisteredDomain(t *testing.T) {
	for in, want := range map[string]string{
		"user1.narod.ru": "narod.ru", "a.b.example.co.uk:8080": "example.co.uk", "127.0.0.1:80": "127.0.0.1",
		"[::1]:8080": "::1", "xn--e1afmkfd.xn--p1ai": "xn--e1afmkfd.xn--p1ai", "com": "com",
		"foo.blogspot.com": "foo.blogspot.com",
	} {
		if got := registeredDomain(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
