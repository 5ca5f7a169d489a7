package fetchcli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// sitemapTodo is a site or sitemap URL a cap cut short, and how many of its
// URLs the runs before listed: the next run reads it again past those.
type sitemapTodo struct {
	url    string
	listed int
}

// readSitemapTodo reads --continue's file; a missing file is an empty one.
// A damaged line is an error naming the file and line: the file is the
// crawl's state, and guessing would list URLs twice or never.
func readSitemapTodo(path string) ([]sitemapTodo, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var todo []sitemapTodo
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		u, count, ok := strings.Cut(sc.Text(), "\t")
		listed, err := strconv.Atoi(count)
		if !ok || err != nil || listed < 0 || u == "" {
			return nil, fmt.Errorf("%s: line %d: want URL<TAB>count, got %q", path, n, clip(sc.Text()))
		}
		todo = append(todo, sitemapTodo{u, listed})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return todo, nil
}

// writeSitemapTodo replaces the file whole (written beside it, then
// renamed), so a kill leaves the old list or the new one.
func writeSitemapTodo(path string, todo []sitemapTodo) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(tmp)
	for _, t := range todo {
		fmt.Fprintf(w, "%s\t%d\n", t.url, t.listed)
	}
	err = w.Flush()
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
