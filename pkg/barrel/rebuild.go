package barrel

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// Rebuild rebuilds every structure of the index in dir from its repository
// alone (section 4.2.2): the latest record of each docID is re-indexed, in
// repository order, into a new index beside dir, which then replaces it.
// The repository is compacted on the way (superseded versions dropped);
// docIDs are renumbered. An index of an older format is converted so.
func Rebuild(ctx context.Context, dir string, opts Options) (*Stats, error) {
	m, err := readManifestFormat(dir, true) // the repository's format is that of every version
	if err != nil {
		return nil, err
	}
	repo, size := filepath.Join(dir, m.RepoSpace.name(repoName)), m.RepositoryBytes()
	latest := map[uint32]int64{}
	if err := scanRepo(repo, size, func(r *RepoRecord) error {
		latest[r.Doc] = r.Offset
		return nil
	}); err != nil {
		return nil, err
	}
	tmp := dir + ".rebuild"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	b, err := NewBuilder(tmp, opts)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	err = scanRepo(repo, size, func(r *RepoRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if latest[r.Doc] != r.Offset {
			return nil
		}
		body, err := inflate(m.RepoCodec, r.Page)
		if err != nil {
			return fmt.Errorf("doc %d: %w", r.Doc, err)
		}
		if _, err := url.Parse(r.URL); err != nil {
			return corrupt("repository record at %d: bad URL", r.Offset)
		}
		return b.AddPage(Page{URL: r.URL, Body: body, Charset: "utf-8"}) // stored decoded
	})
	if err == nil {
		err = b.Commit()
	}
	if err != nil {
		b.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	b.Close()
	os.Remove(filepath.Join(tmp, "LOCK"))
	old := dir + ".old"
	os.RemoveAll(old)
	if err := os.Rename(dir, old); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Rename(old, dir)
		return nil, err
	}
	syncDir(filepath.Dir(dir))
	return &b.Stats, os.RemoveAll(old)
}
