// Package atomicfile owns writing files so that readers see the old content or the new,
// never a part: results, topology files and reports are written through it.
//
// Imports from agbench: none.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path so that a reader sees the old or the new content,
// never a part: it writes a temporary file in the same folder, syncs it and renames it.
func Write(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}
