package ctype

import "testing"

func TestPolicy(t *testing.T) {
	def := New(nil)
	imgs := New([]string{"html", "image/*", "application/pdf"})
	all := New([]string{"all"})
	for _, c := range []struct {
		p    *Policy
		mt   string
		want bool
	}{
		{def, "text/html", true}, {def, "application/xhtml+xml", true}, {def, "image/png", false},
		{def, "application/pdf", false}, {def, "", true}, {def, "TEXT/HTML", true},
		{imgs, "image/webp", true}, {imgs, "application/pdf", true}, {imgs, "video/mp4", false},
		{all, "application/zip", true},
	} {
		if got := c.p.Accepts(c.mt); got != c.want {
			t.Errorf("%v accepts %q: %v", c.p, c.mt, got)
		}
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/a/photo.JPG", false}, {"/dist/app-1.2.tar.gz", false}, {"/page.html", true}, {"/index.php", true},
		{"/", true}, {"/news/2013/09/30/mid/", true}, {"/doc.pdf", false},
	} {
		if _, got := def.AcceptsPath(c.path); got != c.want {
			t.Errorf("default policy, path %q: %v", c.path, got)
		}
	}
	if mt, ok := def.AcceptsHeader("image/png; q=1"); ok || mt != "image/png" {
		t.Errorf("header image/png: %q %v", mt, ok)
	}
	if _, ok := def.AcceptsHeader("text/html; charset=utf-8"); !ok {
		t.Error("header text/html refused")
	}
}
