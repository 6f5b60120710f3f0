package seed

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
)

// backupFile is one tar file of a tar-format backup and where it goes in the data folder.
type backupFile struct {
	Name  string // base.tar.zst, pg_wal.tar
	Path  string
	Size  int64
	Under string // "" for the data folder, "pg_wal" for WAL
}

// backupFiles lists the tar files of a backup folder made by pg_basebackup -F t: base.tar[.ext]
// into the data folder and pg_wal.tar[.ext] into pg_wal. Other tablespaces are refused (a
// local agbench cluster has none); backup_manifest is left out.
func backupFiles(dir string) ([]backupFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []backupFile
	for _, e := range entries {
		name := e.Name()
		if name == "backup_manifest" || e.IsDir() {
			continue
		}
		st, err := e.Info()
		if err != nil {
			return nil, err
		}
		f := backupFile{Name: name, Path: filepath.Join(dir, name), Size: st.Size()}
		switch {
		case strings.HasPrefix(name, "base.tar"):
		case strings.HasPrefix(name, "pg_wal.tar"):
			f.Under = "pg_wal"
		default:
			return nil, fmt.Errorf("backup %s: %s is a tablespace or file agbench does not restore", dir, name)
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Under < out[j].Under }) // base first
	if len(out) == 0 || out[0].Under != "" {
		return nil, fmt.Errorf("backup %s: no base.tar", dir)
	}
	return out, nil
}

// countingReader counts the bytes read through it, for progress from another goroutine,
// and stops with the context's error once it is cancelled.
type countingReader struct {
	ctx context.Context
	r   io.Reader
	n   *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// restoreBackup extracts every tar file of a backup into dataDir, decompressing as the file
// names say. compressedRead counts bytes read from the backup files; written counts bytes
// of files written. It returns the uncompressed bytes extracted.
func restoreBackup(ctx context.Context, files []backupFile, dataDir string, compressedRead, written *atomic.Int64) (int64, error) {
	var total int64
	for _, f := range files {
		n, err := restoreFile(ctx, f, dataDir, compressedRead, written)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func restoreFile(ctx context.Context, f backupFile, dataDir string, compressedRead, written *atomic.Int64) (int64, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	r, release, err := decompressor(f.Name, countingReader{ctx, fh, compressedRead})
	if err != nil {
		return 0, err
	}
	defer release()
	dest := dataDir
	if f.Under != "" {
		dest = filepath.Join(dataDir, f.Under)
		if err := os.MkdirAll(dest, 0o700); err != nil {
			return 0, err
		}
	}
	n, err := extractTar(r, dest, written)
	if err != nil {
		return n, fmt.Errorf("restore %s: %w", f.Name, err)
	}
	return n, nil
}

// extractTar writes a tar stream's entries under dest. Names that would leave dest
// (absolute, or climbing with ..) are refused, and so are entries under a symbolic link the
// stream made; only files, folders and symbolic links are made. It returns the bytes of
// file contents written.
func extractTar(r io.Reader, dest string, written *atomic.Int64) (int64, error) {
	tr := tar.NewReader(r)
	var total int64
	buf := make([]byte, 1<<20)
	links := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		path, err := safeJoin(dest, h.Name)
		if err != nil {
			return total, err
		}
		for p := filepath.Dir(path); len(p) > len(dest); p = filepath.Dir(p) {
			if links[p] {
				return total, fmt.Errorf("tar entry %q lies under a symbolic link", h.Name)
			}
		}
		if links[path] {
			return total, fmt.Errorf("tar entry %q replaces a symbolic link", h.Name)
		}
		mode := os.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, mode|0o700); err != nil {
				return total, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return total, err
			}
			out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode|0o600)
			if err != nil {
				return total, err
			}
			n, err := io.CopyBuffer(struct{ io.Writer }{out}, tr, buf)
			total += n
			if written != nil {
				written.Add(n)
			}
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return total, err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return total, err
			}
			if err := os.Symlink(h.Linkname, path); err != nil {
				return total, err
			}
			links[path] = true
		default:
			return total, fmt.Errorf("%s: tar entry type %q is not a file, folder or link", h.Name, h.Typeflag)
		}
	}
}

// safeJoin joins a tar entry's name under dest, refusing names that leave it.
func safeJoin(dest, name string) (string, error) {
	clean := filepath.Clean("/" + name)
	if name == "" || filepath.IsAbs(name) || strings.Contains("/"+filepath.ToSlash(name)+"/", "/../") {
		return "", fmt.Errorf("tar entry %q leaves the target folder", name)
	}
	return filepath.Join(dest, clean), nil
}
