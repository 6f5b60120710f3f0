package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// ReadsInFlight reads the number of the block device's reads that were issued and have
// not completed, from /sys/block/<name>/inflight.
//
// By hand: procfs reads a device's stat file, whose in-flight figure sums reads and
// writes, where agbench waits for reads only (a file system's journal writes do not
// matter to it).
func (f FS) ReadsInFlight(name string) (int64, error) {
	b, err := os.ReadFile(f.Sys("block", name, "inflight"))
	if err != nil {
		return 0, err
	}
	reads, _, err := ParseInflight(b)
	if err != nil {
		return 0, fmt.Errorf("/sys/block/%s/inflight: %w", name, err)
	}
	return reads, nil
}

// ParseInflight reads a device's inflight file: "<reads> <writes>".
func ParseInflight(data []byte) (reads, writes int64, err error) {
	f := bytes.Fields(data)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("%q: want reads and writes", data)
	}
	var n [2]int64
	for i := range n {
		if n[i], err = strconv.ParseInt(string(f[i]), 10, 64); err != nil || n[i] < 0 {
			return 0, 0, fmt.Errorf("%q is not a count", f[i])
		}
	}
	return n[0], n[1], nil
}
