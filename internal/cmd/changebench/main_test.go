package main

import (
	"math"
	"testing"
	"time"
)

// On a short crawl of the loopback site the signature's estimates follow
// the article changes and stay near zero for clock-only pages, while the
// digest sees a change at every fetch of every page.
func TestSignatureFollowsArticleChanges(t *testing.T) {
	res, err := measure(6, 4*time.Hour, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.turns != 37 || res.requests != int64(37*res.pages) {
		t.Fatalf("%d turns, %d requests; want 37 turns of %d pages", res.turns, res.requests, res.pages)
	}
	clock, fast := res.rows[0], res.rows[len(res.rows)-1]
	if clock.truth != 0 || clock.sig > 0.2 {
		t.Errorf("clock-only pages: signature estimate %g a day, want below the 0.2 prior", clock.sig)
	}
	if math.Abs(fast.sig-fast.truth) > 0.25*fast.truth {
		t.Errorf("4/day pages: signature estimate %g, true %g: not within 25%%", fast.sig, fast.truth)
	}
	for _, rw := range res.rows {
		if rw.digest < 2*max(rw.truth, 1) {
			t.Errorf("%s: digest estimate %g a day, true %g: the clock should inflate it", rw.class.name, rw.digest, rw.truth)
		}
	}
}
