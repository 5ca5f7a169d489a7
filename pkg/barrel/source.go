package barrel

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HTMLFile is a page read from disk with the URL it is served under.
type HTMLFile struct {
	Path, URL string
}

// HTMLFiles lists the .html and .htm files under dir, in lexical order,
// with their URLs under baseURL (which should end in "/").
func HTMLFiles(dir, baseURL string) ([]HTMLFile, error) {
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	var out []HTMLFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := strings.ToLower(filepath.Ext(p))
		if d.Type().IsRegular() && (ext == ".html" || ext == ".htm") {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out = append(out, HTMLFile{Path: p, URL: baseURL + filepath.ToSlash(rel)})
		}
		return nil
	})
	return out, err
}

// AddHTMLFiles adds files to the batch.
func (b *Builder) AddHTMLFiles(ctx context.Context, files []HTMLFile) error {
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		body, err := os.ReadFile(f.Path)
		if err != nil {
			return err
		}
		if err := b.Add(f.URL, body); err != nil {
			return err
		}
	}
	return nil
}
