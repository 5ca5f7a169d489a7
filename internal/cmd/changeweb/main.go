// Command changeweb serves internal/changeweb's changing web on loopback
// until interrupted, for trying fetch and the crawl loop against hosts of
// known capacity by hand.
//
//	go run ./internal/cmd/changeweb -speed 60 -truth truth.tsv \
//	    -host a.test:2 -host b.test:20:1s -host c.test:hang -host d.test:refuse
//
// A -host is NAME[:CAPACITY[:CRAWL-DELAY]] (capacity in requests per virtual
// second, 0 unlimited) or NAME:hang / NAME:refuse for a dead host. It prints
// the hosts in /etc/hosts form (for fetch --hosts-file --allow-private) and
// the seed URLs; -truth writes each page's URL, change rate per day and noise.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sekitei/crawlkit/internal/changeweb"
)

type hostFlags []changeweb.HostConfig

func (h *hostFlags) String() string { return fmt.Sprint(len(*h), " hosts") }

func (h *hostFlags) Set(v string) error {
	f := strings.Split(v, ":")
	hc := changeweb.HostConfig{Name: f[0]}
	if len(f) > 3 || f[0] == "" {
		return fmt.Errorf("want NAME[:CAPACITY[:CRAWL-DELAY]], NAME:hang or NAME:refuse")
	}
	if len(f) > 1 {
		switch f[1] {
		case "hang":
			hc.Dead = changeweb.Hang
		case "refuse":
			hc.Dead = changeweb.Refuse
		default:
			c, err := strconv.ParseFloat(f[1], 64)
			if err != nil || c < 0 {
				return fmt.Errorf("capacity %q: want a number >= 0", f[1])
			}
			hc.Capacity = c
		}
	}
	if len(f) > 2 {
		d, err := time.ParseDuration(f[2])
		if err != nil || d < 0 {
			return fmt.Errorf("crawl delay %q: want a duration such as 1s", f[2])
		}
		hc.CrawlDelay = d
	}
	*h = append(*h, hc)
	return nil
}

func main() {
	var hosts hostFlags
	cfg := changeweb.Config{}
	flag.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	flag.Float64Var(&cfg.Speed, "speed", 1, "virtual seconds per real second")
	flag.IntVar(&cfg.Articles, "articles", 0, "articles over all hosts (0: 20 per host)")
	flag.Var(&hosts, "host", "`NAME[:CAPACITY[:CRAWL-DELAY]]`, NAME:hang or NAME:refuse (repeatable)")
	truth := flag.String("truth", "", "write each page's URL, change rate per day and noise to `FILE`")
	flag.Parse()
	if len(hosts) == 0 {
		hosts = hostFlags{{Name: "a.test", Capacity: 2}, {Name: "b.test", Capacity: 5}, {Name: "c.test", Capacity: 20}}
	}
	cfg.Hosts = hosts
	s, err := changeweb.Start(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "changeweb:", err)
		os.Exit(1)
	}
	defer s.Close()
	if *truth != "" {
		var b strings.Builder
		for _, p := range s.Pages() {
			fmt.Fprintf(&b, "%s\t%g\t%s\n", p.URL, p.Rate, [...]string{"none", "timestamp", "counter"}[p.Noise])
		}
		if err := os.WriteFile(*truth, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "changeweb:", err)
			os.Exit(1)
		}
	}
	fmt.Print(s.HostsFile())
	for _, h := range hosts {
		fmt.Println(s.URL(h.Name, "/"))
	}
	fmt.Fprintf(os.Stderr, "changeweb: %d pages on %d hosts, port %d, speed %gx; Ctrl-C stops\n", len(s.Pages()), len(hosts), s.Port(), s.Clock().Speed())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	for _, h := range hosts {
		st := s.Stats(h.Name)
		fmt.Fprintf(os.Stderr, "%s: %d requests, %d served, %d 503s, at most %d in one second\n", h.Name, st.Requests, st.Served, st.Rejected, st.MaxPerSecond)
	}
}
