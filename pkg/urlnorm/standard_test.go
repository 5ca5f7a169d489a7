package urlnorm

import (
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/internal/urltestdata"
)

// Every valid http(s) URL of the URL Standard's test data (testdata/
// conformance, with its licence) has a key: printable ASCII, its own key,
// and the key of the Standard's serialisation of it.
func TestKeysOfStandardURLs(t *testing.T) {
	cases, err := urltestdata.Load()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		if c.Base != nil || c.Failure || !(strings.HasPrefix(c.Href, "http://") || strings.HasPrefix(c.Href, "https://")) {
			continue
		}
		n++
		key, err := Normalize(c.Input)
		if err != nil {
			t.Errorf("%q: valid (%s), no key: %v", c.Input, c.Href, err)
			continue
		}
		for i := 0; i < len(key); i++ {
			if key[i] <= ' ' || key[i] >= 0x7f {
				t.Errorf("%q: key %q holds byte %#x", c.Input, key, key[i])
				break
			}
		}
		if again, err := Normalize(key); err != nil || again != key {
			t.Errorf("%q: key %q has the key %q, %v", c.Input, key, again, err)
		}
		if k2, err := Normalize(c.Href); err != nil || k2 != key {
			t.Errorf("%q: key %q, but its serialisation %q has %q, %v", c.Input, key, c.Href, k2, err)
		}
	}
	if n < 100 {
		t.Fatalf("only %d cases", n)
	}
	t.Logf("%d valid absolute http(s) URLs keyed", n)
}
