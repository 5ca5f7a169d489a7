package record

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestUnchangedRuns changes fields in the middle of a line and checks the
// output against the record rebuilt field by field: the runs of unchanged
// fields copied as they were must give the same object, in order.
func TestUnchangedRuns(t *testing.T) {
	line := `{"url":"http://a.example/","host":"A.example","status":200,"title":"x \u00e9","links":["http://b/"],"n":1.5e3}`
	cases := []struct {
		name string
		edit func(r *Record)
		want string
	}{
		{"replace in the middle", func(r *Record) { r.SetString("host", "a.example") },
			`{"url":"http://a.example/","host":"a.example","status":200,"title":"x \u00e9","links":["http://b/"],"n":1.5e3}`},
		{"replace two apart, add one", func(r *Record) {
			r.SetString("host", "a.example")
			r.SetInt("links", 0)
			r.SetRawOwned("features", []byte(`["segments:0"]`))
		}, `{"url":"http://a.example/","host":"a.example","status":200,"title":"x \u00e9","links":0,"n":1.5e3,"features":["segments:0"]}`},
		{"delete in the middle", func(r *Record) { r.Delete("status") },
			`{"url":"http://a.example/","host":"A.example","title":"x \u00e9","links":["http://b/"],"n":1.5e3}`},
		{"replace the first", func(r *Record) { r.SetString("url", "http://c/") },
			`{"url":"http://c/","host":"A.example","status":200,"title":"x \u00e9","links":["http://b/"],"n":1.5e3}`},
	}
	var reused Record
	for _, c := range cases {
		for _, into := range []bool{false, true} {
			r := &reused
			if into {
				if err := ParseInto(r, []byte(line)); err != nil {
					t.Fatal(err)
				}
			} else {
				var err error
				if r, err = Parse([]byte(line)); err != nil {
					t.Fatal(err)
				}
			}
			c.edit(r)
			if got := string(r.AppendJSON(nil)); got != c.want {
				t.Errorf("%s (ParseInto %v):\n got %s\nwant %s", c.name, into, got, c.want)
			}
			var a, b any
			if err := json.Unmarshal(r.AppendJSON(nil), &a); err != nil {
				t.Fatal(err)
			}
			json.Unmarshal([]byte(c.want), &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s: objects differ", c.name)
			}
		}
	}
	// A line with spaces is not compact: every field after a change is
	// rebuilt, and the output is canonical.
	r, err := Parse([]byte(`{"url": "http://a/", "host": "X", "k": [1, 2]}`))
	if err != nil {
		t.Fatal(err)
	}
	r.SetString("host", "x")
	if got, want := string(r.AppendJSON(nil)), `{"url":"http://a/","host":"x","k":[1, 2]}`; got != want {
		t.Errorf("spaced line: got %s want %s", got, want)
	}
}
