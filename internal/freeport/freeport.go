// Package freeport owns finding free loopback ports for servers that agbench starts for a
// while (tests' and benchmarks' clusters, a readahead run's private server): runs of
// consecutive ports below the kernel's ephemeral range, reserved for this process by a
// lock file that every agbench process on the machine shares.
//
// Imports from agbench: none.
package freeport

import (
	"fmt"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Ports that Consecutive hands out lie below Linux's ephemeral range (32768-60999), so an
// outgoing connection's local port never takes one between the check and the server's start.
const (
	portLow  = 10000
	portHigh = 32000
)

// Consecutive finds n consecutive free loopback ports, reserves them for this process
// (reserve) and returns the first. Without the reservation, a test or benchmark running at
// the same time could find the same ports free in the seconds between this check and the
// server's start (a plan's cluster lost its standby's port to a Patroni test's etcd so).
func Consecutive(n int) (int, error) {
	for i := 0; i < 200; i++ {
		base := portLow + rand.Intn(portHigh-portLow-n)
		var held []*os.File
		ok := true
		for p := base; p < base+n && ok; p++ {
			f, got := reserve(p)
			if !got {
				ok = false
				break
			}
			held = append(held, f)
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			reservedMu.Lock()
			reserved = append(reserved, held...)
			reservedMu.Unlock()
			return base, nil
		}
		for _, f := range held {
			f.Close()
		}
	}
	return 0, fmt.Errorf("no %d consecutive free ports found", n)
}

// The ports this process reserved: their lock files stay open, so their locks hold, until
// the process ends.
var (
	reservedMu sync.Mutex
	reserved   []*os.File
)

// portsDir is the folder of the ports' lock files: in /tmp itself, not in $TMPDIR, which
// differs between runs side by side (each clean-clone test run has its own); they then
// did not see each other's ports, and a server of one lost its port to the other's.
// os.TempDir() is used only where /tmp cannot be written.
func portsDir() (string, error) {
	for _, root := range []string{"/tmp", os.TempDir()} {
		dir := filepath.Join(root, "agbench-test-ports")
		if err := os.MkdirAll(dir, 0o777); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no folder for the ports' lock files")
}

// reserve takes port p for this process: an exclusive lock on a file named after it in a
// folder that every agbench process on the machine shares (portsDir). It fails when another
// process (or this one) holds it. Where no folder can be written, the listen check alone
// decides.
func reserve(p int) (*os.File, bool) {
	dir, err := portsDir()
	if err != nil {
		return nil, true
	}
	_ = os.Chmod(dir, 0o1777) // tests run as root and as other users alike
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return f, true
}
