package fetch

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The DNS cache asks once per host per TTL, shares a lookup between
// concurrent callers, caches failures briefly and passes IP literals by.
func TestResolverCache(t *testing.T) {
	var calls atomic.Int32
	r := newResolver(func(ctx context.Context, host string) ([]netip.Addr, error) {
		calls.Add(1)
		time.Sleep(50 * time.Millisecond)
		if host == "bad.test" {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
	}, 200*time.Millisecond)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := r.resolve(ctx, "good.test")
			if err != nil || len(a) != 1 {
				t.Errorf("%v %v", a, err)
			}
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d lookups for 20 concurrent callers", n)
	}
	r.resolve(ctx, "good.test")
	if calls.Load() != 1 {
		t.Fatal("cached answer not used")
	}
	time.Sleep(250 * time.Millisecond)
	r.resolve(ctx, "good.test")
	if calls.Load() != 2 {
		t.Fatal("expired answer still used")
	}
	var dnsErr *net.DNSError
	if _, err := r.resolve(ctx, "bad.test"); !errors.As(err, &dnsErr) {
		t.Fatalf("bad host: %v", err)
	}
	r.resolve(ctx, "bad.test")
	if calls.Load() != 3 {
		t.Fatal("failure not cached")
	}
	if a, err := r.resolve(ctx, "10.1.2.3"); err != nil || a[0] != netip.MustParseAddr("10.1.2.3") || calls.Load() != 3 {
		t.Fatal("IP literal looked up")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.resolve(cctx, "slow.test"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled lookup: %v", err)
	}
}
