package readahead

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// EvictFiles writes each relation file's dirty pages and drops its pages from the OS page
// cache (posix_fadvise POSIX_FADV_DONTNEED after fsync). paths are relative to dataDir, as
// pg_relation_filepath returns them; every segment (path, path.1, ...) and fork (_fsm, _vm)
// is evicted. It returns the number of files evicted.
func EvictFiles(dataDir string, paths []string) (int, error) {
	n := 0
	var errs []error
	for _, p := range paths {
		base := filepath.Join(dataDir, p)
		files, _ := filepath.Glob(base + "*")
		for _, f := range files {
			if err := evictFile(f); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}

func evictFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // a relation file removed meanwhile (vacuum truncation)
		}
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("posix_fadvise DONTNEED %s: %w", path, err)
	}
	return nil
}

// DropPageCache writes all dirty pages and drops the whole OS page cache (every process's,
// not only the server's): only done when the user asks (--drop-caches).
func DropPageCache() error {
	unix.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("1\n"), 0o200); err != nil {
		return fmt.Errorf("drop the page cache: %w", err)
	}
	return nil
}
