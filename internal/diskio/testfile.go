package diskio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/units"
)

// HeaderSize is the first block of every test file agbench creates: it holds the marker
// that lets a later run tell its own files from anyone else's. IO never touches it.
const HeaderSize = 4096

// headerMagic opens the header block of a test file.
var headerMagic = []byte("agbench disk test file v1\n")

const fillChunk = 4 << 20

// PrepareOptions says how to find or make a test file.
type PrepareOptions struct {
	// Size wanted; 0 reuses an existing agbench file's size, or DefaultFileSize.
	Size int64
	// MinRegion is the least room IO needs (the largest block size).
	MinRegion int64
	// Force allows a file agbench did not create.
	Force bool
	// Progress, when set, is told how many bytes of a new file are written.
	Progress func(done, total int64)
}

// PrepareFile returns the test file at path: an agbench file made before (of the size
// asked for), a new one filled with incompressible data, or, with Force, any regular file.
// Devices, folders and files agbench did not make are bad input; nothing is written then.
func PrepareFile(ctx context.Context, path string, o PrepareOptions) (*TestFile, error) {
	if path == "" {
		return nil, agerr.BadInputf("FILE: a test file path is needed")
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return createFile(ctx, path, o)
	case err != nil:
		return nil, agerr.BadInputf("%s: %v", path, err)
	case st.IsDir():
		return nil, agerr.BadInputf("%s is a folder; give a file path inside it (e.g. %s)", path, filepath.Join(path, "agbench-disk.dat"))
	case st.Mode()&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return nil, agerr.BadInputf("%s is a device; agbench tests files it creates, not raw devices: give a file on the device's filesystem", path)
	case !st.Mode().IsRegular():
		return nil, agerr.BadInputf("%s is not a regular file", path)
	}
	own, err := IsOwnFile(path)
	if err != nil {
		return nil, agerr.BadInputf("%s: %v", path, err)
	}
	if !own {
		if !o.Force {
			return nil, agerr.BadInputf("%s was not created by agbench (no test-file header); refusing to use it; pass --force to use it anyway (write tests overwrite its contents)", path)
		}
		tf := &TestFile{Path: path, Size: st.Size(), Foreign: true}
		if tf.RegionLen() < o.MinRegion {
			return nil, agerr.BadInputf("%s: %s is smaller than the block size %s", path, units.FormatBytesExact(tf.Size), units.FormatBytesExact(o.MinRegion))
		}
		return tf, nil
	}
	if o.Size > 0 && o.Size != st.Size() {
		// Ours, but of another size: make it anew.
		if err := checkSize(path, o, st.Size()); err != nil {
			return nil, err
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("replace %s: %w", path, err)
		}
		return createFile(ctx, path, o)
	}
	tf := &TestFile{Path: path, Size: st.Size(), DataStart: HeaderSize}
	if tf.RegionLen() < o.MinRegion {
		return nil, agerr.BadInputf("--block-size %s is larger than the test file's %s of data", units.FormatBytesExact(o.MinRegion), units.FormatBytesExact(tf.RegionLen()))
	}
	return tf, nil
}

func checkSize(path string, o PrepareOptions, reclaim int64) error {
	size := o.Size
	if size == 0 {
		size = DefaultFileSize
	}
	if size-HeaderSize < o.MinRegion || size <= HeaderSize {
		return agerr.BadInputf("--size %s: too small for block size %s (a %d-byte header comes first)", units.FormatBytesExact(size), units.FormatBytesExact(o.MinRegion), HeaderSize)
	}
	dir := filepath.Dir(path)
	var sfs unix.Statfs_t
	if err := unix.Statfs(dir, &sfs); err != nil {
		return agerr.BadInputf("%s: folder %s: %v", path, dir, err)
	}
	free := int64(sfs.Bavail)*int64(sfs.Bsize) + reclaim
	if free < size {
		return agerr.BadInputf("%s: not enough space in %s for a %s test file (%s free)", path, dir, units.FormatBytesExact(size), units.FormatBytes(free))
	}
	return nil
}

func createFile(ctx context.Context, path string, o PrepareOptions) (*TestFile, error) {
	if err := checkSize(path, o, 0); err != nil {
		return nil, err
	}
	size := o.Size
	if size == 0 {
		size = DefaultFileSize
	}
	f, err := openDirectCreate(path)
	if err != nil {
		return nil, agerr.BadInputf("%s: %v", path, err)
	}
	tf := &TestFile{Path: path, Size: size, DataStart: HeaderSize, Created: true}
	if err := fillFile(ctx, f, size, o.Progress); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("write test file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return nil, err
	}
	return tf, nil
}

// openDirectCreate creates path exclusively, with O_DIRECT where the filesystem allows
// (so filling it does not flood the page cache).
func openDirectCreate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|unix.O_DIRECT, 0o644)
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
}

// encodeHeader writes the header block for a file of size bytes.
func encodeHeader(b []byte, size int64, created time.Time) {
	clear(b[:HeaderSize])
	n := copy(b, headerMagic)
	binary.LittleEndian.PutUint64(b[n:], uint64(size))
	binary.LittleEndian.PutUint64(b[n+8:], uint64(created.UnixNano()))
	binary.LittleEndian.PutUint32(b[HeaderSize-4:], crc32.Checksum(b[:HeaderSize-4], castagnoli))
}

// validHeader reports whether b holds an agbench test-file header.
func validHeader(b []byte) bool {
	if len(b) < HeaderSize || !bytes.HasPrefix(b, headerMagic) {
		return false
	}
	return binary.LittleEndian.Uint32(b[HeaderSize-4:]) == crc32.Checksum(b[:HeaderSize-4], castagnoli)
}

// IsOwnFile reports whether path starts with an agbench test-file header.
func IsOwnFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	b := make([]byte, HeaderSize)
	n, err := f.ReadAt(b, 0)
	if n < HeaderSize {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return validHeader(b), nil
}

// fillFile writes the header and then incompressible data over the whole file, so reads
// reach the device (a sparse or fallocated file reads as zeros without any IO).
func fillFile(ctx context.Context, f *os.File, size int64, progress func(done, total int64)) error {
	buf, err := alignedBuffer(fillChunk)
	if err != nil {
		return err
	}
	defer freeBuffer(buf)
	_ = unix.Fallocate(int(f.Fd()), 0, 0, size) // best effort; the writes below do the work
	rng := newRand(uint64(time.Now().UnixNano()))
	var off int64
	for off < size {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(buf)), size-off)
		fillRandom(buf[:n], &rng)
		if off == 0 {
			encodeHeader(buf, size, time.Now())
		}
		w := buf[:n]
		if n%minDirectUnit != 0 {
			// The tail of an odd size cannot go through O_DIRECT.
			if err := clearDirect(f); err != nil {
				return err
			}
		}
		if _, err := f.WriteAt(w, off); err != nil {
			return err
		}
		off += n
		if progress != nil {
			progress(off, size)
		}
	}
	return f.Sync()
}

func clearDirect(f *os.File) error {
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	_, err = unix.FcntlInt(f.Fd(), unix.F_SETFL, fl&^unix.O_DIRECT)
	return err
}

// RemoveFile removes a test file this run created; it refuses anything else.
func RemoveFile(t *TestFile) error {
	if t == nil || !t.Created || t.Foreign {
		return nil
	}
	own, err := IsOwnFile(t.Path)
	if err != nil || !own {
		return err
	}
	return os.Remove(t.Path)
}
