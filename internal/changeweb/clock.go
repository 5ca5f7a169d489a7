package changeweb

import (
	"context"
	"sync/atomic"
	"time"
)

// Clock is a virtual clock that runs Speed times faster than real time from
// an epoch: with Speed 3600 one real second is one virtual hour. The server,
// the tests' clients and the host-rate estimator share one Clock, so that
// latencies, pacing, host capacities and page changes are all measured in the
// same virtual time.
type Clock struct {
	epoch time.Time // virtual time at start
	start time.Time // real time at start (with its monotonic reading)
	speed float64
	// skipped is the virtual time jumped over by Skip, in nanoseconds.
	skipped atomic.Int64
}

// NewClock returns a clock reading epoch now and running speed times faster
// than real time (speed <= 0 means 1).
func NewClock(epoch time.Time, speed float64) *Clock {
	if !(speed > 0) {
		speed = 1
	}
	return &Clock{epoch: epoch, start: time.Now(), speed: speed}
}

// Now returns the virtual time.
func (c *Clock) Now() time.Time {
	return c.epoch.Add(time.Duration(float64(time.Since(c.start))*c.speed) + time.Duration(c.skipped.Load()))
}

// Skip moves the clock forward by a virtual duration at once (d <= 0 does
// nothing): a test whose crawler idles between turns jumps over the idle
// time instead of sleeping through it, so that its run time is the time
// spent crawling and a slow machine does not stretch the turns. Requests
// in flight keep their real-time waits.
func (c *Clock) Skip(d time.Duration) {
	if d > 0 {
		c.skipped.Add(int64(d))
	}
}

// Epoch returns the virtual time at which the clock started.
func (c *Clock) Epoch() time.Time { return c.epoch }

// Speed returns how many virtual seconds pass in one real second.
func (c *Clock) Speed() float64 { return c.speed }

// Real converts a virtual duration to the real duration it takes.
func (c *Clock) Real(virtual time.Duration) time.Duration {
	return time.Duration(float64(virtual) / c.speed)
}

// Virtual converts a real duration to virtual time.
func (c *Clock) Virtual(real time.Duration) time.Duration {
	return time.Duration(float64(real) * c.speed)
}

// Sleep waits for a virtual duration, or until ctx is done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(c.Real(d))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
