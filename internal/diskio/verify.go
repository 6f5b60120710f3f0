package diskio

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"

	"golang.org/x/sys/unix"
)

// A verify unit (the alignment, a multiple of 512 bytes) holds, in order: its own file
// offset (8 bytes), a generation (8 bytes), data derived from both, and a CRC-32C of all
// that (4 bytes). A unit that comes back with a wrong CRC or another offset was lost,
// torn or misplaced by the storage.
const stampOverhead = 20

// stampUnit fills one unit for file offset off.
func stampUnit(b []byte, off int64, gen uint64) {
	n := len(b)
	binary.LittleEndian.PutUint64(b, uint64(off))
	binary.LittleEndian.PutUint64(b[8:], gen)
	r := newRand(uint64(off)*0x9e3779b97f4a7c15 ^ gen)
	fillRandom(b[16:n-4], &r)
	binary.LittleEndian.PutUint32(b[n-4:], crc32.Checksum(b[:n-4], castagnoli))
}

// unitOK reports whether b is an intact unit stamped for offset off.
func unitOK(b []byte, off int64) bool {
	n := len(b)
	return binary.LittleEndian.Uint32(b[n-4:]) == crc32.Checksum(b[:n-4], castagnoli) &&
		int64(binary.LittleEndian.Uint64(b)) == off
}

// stampBuffer stamps every unit of b, which goes to file offset off.
func stampBuffer(b []byte, off, unit int64, gen uint64) {
	for i := int64(0); i+unit <= int64(len(b)); i += unit {
		stampUnit(b[i:i+unit], off+i, gen)
	}
}

// checkBuffer returns the file offsets of the units of b (read from off) that are not intact.
func checkBuffer(b []byte, off, unit int64, bad []int64) []int64 {
	for i := int64(0); i+unit <= int64(len(b)); i += unit {
		if !unitOK(b[i:i+unit], off+i) {
			bad = append(bad, off+i)
		}
	}
	return bad
}

func verifyChunk(unit int64) int64 { return max(unit, (fillChunk/unit)*unit) }

func verifyUnitOK(unit int64) error {
	if unit < minDirectUnit || unit%minDirectUnit != 0 || unit <= stampOverhead {
		return fmt.Errorf("verify unit %d: must be a multiple of %d bytes", unit, minDirectUnit)
	}
	return nil
}

// WritePattern stamps every whole unit of the test file's data region.
func WritePattern(ctx context.Context, t *TestFile, unit int64, gen uint64) error {
	if err := verifyUnitOK(unit); err != nil {
		return err
	}
	f, err := os.OpenFile(t.Path, os.O_WRONLY|unix.O_DIRECT, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	chunk := verifyChunk(unit)
	buf, err := alignedBuffer(int(chunk))
	if err != nil {
		return err
	}
	defer freeBuffer(buf)
	start := alignedStart(t, unit)
	end := start + (t.Size-start)/unit*unit
	for off := start; off < end; off += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(chunk, end-off)
		stampBuffer(buf[:n], off, unit, gen)
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return err
		}
	}
	return f.Sync()
}

// CheckPattern reads every whole unit of the data region back and reports those that differ.
func CheckPattern(ctx context.Context, t *TestFile, unit int64) (*VerifyReport, error) {
	if err := verifyUnitOK(unit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(t.Path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	chunk := verifyChunk(unit)
	buf, err := alignedBuffer(int(chunk))
	if err != nil {
		return nil, err
	}
	defer freeBuffer(buf)
	rep := &VerifyReport{Unit: unit}
	start := alignedStart(t, unit)
	end := start + (t.Size-start)/unit*unit
	var bad []int64
	for off := start; off < end; off += chunk {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		n := min(chunk, end-off)
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return rep, err
		}
		bad = checkBuffer(buf[:n], off, unit, bad[:0])
		rep.Checked += n / unit
		rep.BadCount += int64(len(bad))
		for _, b := range bad {
			if len(rep.Bad) < MaxBadReported {
				rep.Bad = append(rep.Bad, b)
			}
		}
	}
	return rep, nil
}
