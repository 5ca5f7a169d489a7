package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// resolver is the crawler's DNS cache (the 1998 paper's answer to DNS being
// the bottleneck): one lookup per host per TTL, failures cached briefly, and
// concurrent lookups of one host share a single query.
type resolver struct {
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	ttl    time.Duration
	negTTL time.Duration

	mu sync.Mutex
	m  map[string]*dnsEntry
}

type dnsEntry struct {
	ready   chan struct{}
	addrs   []netip.Addr
	err     error
	expires time.Time
}

func newResolver(lookup func(context.Context, string) ([]netip.Addr, error), ttl time.Duration) *resolver {
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	neg := time.Minute
	if ttl < neg {
		neg = ttl
	}
	return &resolver{lookup: lookup, ttl: ttl, negTTL: neg, m: make(map[string]*dnsEntry)}
}

// resolve returns the addresses of host (a name or an IP literal).
func (r *resolver) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	now := time.Now()
	r.mu.Lock()
	e := r.m[host]
	if e != nil {
		select {
		case <-e.ready:
			if now.After(e.expires) {
				e = nil
			}
		default: // a lookup is under way: wait for it
		}
	}
	if e == nil {
		if len(r.m) > 200000 {
			r.sweep(now)
		}
		e = &dnsEntry{ready: make(chan struct{})}
		r.m[host] = e
		r.mu.Unlock()
		// The lookup serves every caller, so it outlives a caller that
		// gives up; it has its own time limit.
		go func() {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
			addrs, err := r.lookup(lctx, host)
			cancel()
			if err == nil && len(addrs) == 0 {
				err = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
			}
			e.addrs, e.err = addrs, err
			if err != nil {
				e.expires = time.Now().Add(r.negTTL)
			} else {
				e.expires = time.Now().Add(r.ttl)
			}
			close(e.ready)
		}()
	} else {
		r.mu.Unlock()
	}
	select {
	case <-e.ready:
		return e.addrs, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *resolver) sweep(now time.Time) {
	for k, e := range r.m {
		select {
		case <-e.ready:
			if now.After(e.expires) {
				delete(r.m, k)
			}
		default:
		}
	}
}

// blockedError is returned when every address of a host is one a crawler
// must not reach (SSRF protection).
type blockedError struct {
	host string
	addr netip.Addr
}

func (e *blockedError) Error() string {
	const what = "a private, loopback, link-local or multicast address (use --allow-private)"
	if e.host == e.addr.String() {
		return fmt.Sprintf("%s is %s", e.host, what)
	}
	return fmt.Sprintf("%s resolves to %s, %s", e.host, e.addr, what)
}

var errBlocked = errors.New("blocked address")

func (e *blockedError) Is(target error) bool { return target == errBlocked }

var specialPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("100::/64"),       // discard
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	netip.MustParsePrefix("::ffff:0:0/96"),  // (mapped, checked after Unmap)
	netip.MustParsePrefix("2002::/16"),      // 6to4 can tunnel to private v4
	netip.MustParsePrefix("2001::/32"),      // Teredo, likewise
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 of any v4 address
	netip.MustParsePrefix("169.254.0.0/16"), // link-local (also below)
	netip.MustParsePrefix("255.255.255.255/32"),
}

// isPublic reports whether a crawler may connect to a.
func isPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range specialPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// publicAddr is isPublic; tests swap it to call one loopback address public.
var publicAddr = isPublic
