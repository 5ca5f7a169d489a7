package ireval

import (
	"fmt"
	"testing"
)

func TestLoadGenIndex(t *testing.T) {
	qs, err := LoadGenIndex("testdata/site")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(qs)
	// "struct" is its page's title: dropped; "!=" has no word; the
	// outside link is no page of the site.
	want := "[{pack [library/mailbox.html library/struct.html]} {package [glossary.html library/site.html]} {package namespace [reference/import.html]}]"
	if got != want {
		t.Errorf("queries\n got %s\nwant %s", got, want)
	}
	if _, err := LoadGenIndex("testdata"); err == nil {
		t.Error("no error for a directory without genindex-all.html")
	}
}
