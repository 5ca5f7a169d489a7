// Package ctype is the fetcher's content-type policy: which media types are
// fetched, decided first from the URL's extension (no request at all for
// an image link when only HTML is wanted) and then from the Content-Type
// response header (the body is not read).
package ctype

import (
	"mime"
	"path"
	"strings"
)

// DefaultTypes are fetched when no policy is given: HTML.
var DefaultTypes = []string{"text/html", "application/xhtml+xml"}

// A Policy accepts media types by a list of patterns: "text/html", a
// family "image/*", or "*/*" for all.
type Policy struct {
	exact  map[string]bool
	family map[string]bool
	all    bool
}

// New returns the policy accepting patterns (DefaultTypes when empty). A
// short name stands for its types: "html", "xml" (sitemaps, feeds), "pdf",
// "text", "image", "all".
func New(patterns []string) *Policy {
	if len(patterns) == 0 {
		patterns = DefaultTypes
	}
	p := &Policy{exact: map[string]bool{}, family: map[string]bool{}}
	for _, pat := range patterns {
		pat = strings.ToLower(strings.TrimSpace(pat))
		switch pat {
		case "html":
			p.exact["text/html"], p.exact["application/xhtml+xml"] = true, true
		case "xml":
			for _, t := range []string{"application/xml", "text/xml", "application/rss+xml", "application/atom+xml", "application/gzip", "application/x-gzip"} {
				p.exact[t] = true
			}
		case "pdf":
			p.exact["application/pdf"] = true
		case "text", "image", "audio", "video":
			p.family[pat] = true
		case "all", "*", "*/*":
			p.all = true
		case "":
		default:
			if fam, ok := strings.CutSuffix(pat, "/*"); ok {
				p.family[fam] = true
			} else {
				p.exact[pat] = true
			}
		}
	}
	return p
}

// Accepts reports whether a media type (without parameters) is fetched.
// An empty type is accepted: the body will say.
func (p *Policy) Accepts(mediaType string) bool {
	mt := strings.ToLower(strings.TrimSpace(mediaType))
	if p.all || mt == "" || p.exact[mt] {
		return true
	}
	fam, _, _ := strings.Cut(mt, "/")
	return p.family[fam]
}

// AcceptsHeader applies Accepts to a Content-Type header value; a value
// that does not parse is accepted (sniffed later).
func (p *Policy) AcceptsHeader(contentType string) (string, bool) {
	if contentType == "" {
		return "", true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", true
	}
	return mt, p.Accepts(mt)
}

// extensions are file types whose media type is clear from the name; an
// extension not listed (.php, .asp, none) says nothing.
var extensions = map[string]string{
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif",
	".webp": "image/webp", ".svg": "image/svg+xml", ".ico": "image/x-icon", ".bmp": "image/bmp",
	".tif": "image/tiff", ".tiff": "image/tiff", ".avif": "image/avif",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".flac": "audio/flac",
	".mp4": "video/mp4", ".avi": "video/x-msvideo", ".mov": "video/quicktime", ".mkv": "video/x-matroska",
	".webm": "video/webm", ".flv": "video/x-flv", ".wmv": "video/x-ms-wmv",
	".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip",
	".bz2": "application/x-bzip2", ".xz": "application/x-xz", ".7z": "application/x-7z-compressed",
	".rar": "application/vnd.rar", ".tar": "application/x-tar", ".exe": "application/octet-stream",
	".msi": "application/octet-stream", ".dmg": "application/octet-stream", ".iso": "application/octet-stream",
	".apk": "application/vnd.android.package-archive", ".deb": "application/octet-stream",
	".rpm": "application/octet-stream", ".bin": "application/octet-stream",
	".pdf": "application/pdf", ".doc": "application/msword", ".xls": "application/vnd.ms-excel",
	".ppt":  "application/vnd.ms-powerpoint",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".odt":  "application/vnd.oasis.opendocument.text", ".css": "text/css", ".js": "text/javascript",
	".json": "application/json", ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf",
	".eot": "application/vnd.ms-fontobject", ".swf": "application/x-shockwave-flash",
	".xml": "application/xml", ".txt": "text/plain", ".csv": "text/csv", ".rss": "application/rss+xml",
}

// ByExtension returns the media type a URL path's extension implies, ""
// when it implies none.
func ByExtension(urlPath string) string {
	return extensions[strings.ToLower(path.Ext(urlPath))]
}

// AcceptsPath reports whether a URL with this (decoded or raw) path may be
// requested: false only when its extension names a type the policy
// refuses.
func (p *Policy) AcceptsPath(urlPath string) (string, bool) {
	mt := ByExtension(urlPath)
	return mt, mt == "" || p.Accepts(mt)
}
