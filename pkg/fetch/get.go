package fetch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sekitei/crawlkit/pkg/fetch/content"
	"github.com/sekitei/crawlkit/pkg/weburl"
)

// maxGetRedirects is how many redirects Get follows (as for robots.txt).
const maxGetRedirects = 5

// Get fetches one file outside the queue, for readers of sitemaps and the
// like: through the same transport (address check, TLS options, proxy),
// following up to five redirects, waiting the delay between two requests
// to one host, and returning the body with its content coding undone, at
// most limit bytes of each. Its requests together take at most Timeout. The exchange is archived when WARC is set.
func (f *Fetcher) Get(ctx context.Context, rawURL string, limit int64) (int, []byte, error) {
	// Requested as written, in the URL Standard's serialisation.
	u, err := weburl.Parse(rawURL)
	if err != nil {
		return 0, nil, err
	}
	var spent time.Duration // in requests: all hops within --timeout
	for hops := 0; ; hops++ {
		if err := f.politeWait(ctx, hostKey(u)); err != nil {
			return 0, nil, err
		}
		left := f.cfg.Timeout - spent
		if left <= 0 {
			return 0, nil, errorf(CodeTimeout, "--timeout %v spent over %d requests", f.cfg.Timeout, hops)
		}
		rctx, cancel := context.WithTimeout(ctx, left)
		x := f.do(rctx, u, nil, limit, nil)
		cancel()
		spent += x.elapsed
		f.politeDone(hostKey(u))
		f.stats.requests.Add(1)
		f.stats.bytes.Add(int64(len(x.body)))
		if x.status != 0 && f.cfg.WARC != nil {
			if _, err := f.writeWARC(x, nil); err != nil {
				x.release()
				return 0, nil, err
			}
		}
		if x.err != nil && x.status == 0 {
			x.release()
			return 0, nil, x.err
		}
		if x.status >= 300 && x.status < 400 && hops < maxGetRedirects {
			next, err := u.Resolve(x.header.Get("Location"))
			x.release()
			if err != nil {
				return 0, nil, fmt.Errorf("redirect to a bad Location: %w", err)
			}
			u = next
			continue
		}
		if x.truncated != "" {
			x.release()
			return x.status, nil, fmt.Errorf("body over %d bytes or cut off (%s)", limit, x.truncated)
		}
		body, err := content.Decode(x.body, x.header.Get("Content-Encoding"), limit)
		body = append([]byte(nil), body...) // x's buffer goes back to the pool
		status := x.status
		x.release()
		if errors.Is(err, content.ErrTooLarge) {
			return status, nil, fmt.Errorf("decoded body over %d bytes (a compression bomb?)", limit)
		}
		if err != nil {
			return status, nil, err
		}
		return status, body, nil
	}
}

// politeWait waits until host may be asked again by Get.
func (f *Fetcher) politeWait(ctx context.Context, host string) error {
	if f.cfg.HostRates != nil && !f.backoffOnly {
		return f.hostWait(ctx, host)
	}
	f.mu.Lock()
	if f.getNext == nil {
		f.getNext = map[string]time.Time{}
	}
	wait := time.Until(f.getNext[host])
	f.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *Fetcher) politeDone(host string) {
	f.mu.Lock()
	f.getNext[host] = time.Now().Add(f.cfg.Delay)
	f.mu.Unlock()
}
