package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrBusy says another agbench process is changing the same cluster.
var ErrBusy = errors.New("cluster is busy")

// Lock takes the cluster's lock for a change (start, stop, failover, destroy, seeding), so two
// agbench processes never change one cluster at once. It returns the function that releases it.
//
// The release unlocks before it closes: a flock belongs to the open file, and a child this
// process is starting meanwhile (any goroutine's exec) holds a copy of every descriptor from
// its fork until its exec closes it, so a close alone would leave the cluster locked for
// that while and the process's next Lock would find it busy.
func (t *Topology) Lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(t.Dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: another agbench is changing cluster %s; try again when it is done", ErrBusy, t.Name)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
