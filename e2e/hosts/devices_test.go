package hosts

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agbench/agbench/internal/cgroup"
)

// A device the test makes, keeps idle or saturates, and that only one exporter watches.

// throttledReadIOPS is the reads per second the saturating fio's group may make of the disk
// under its loop device: with 32 reads always waiting, a read waits about 100 ms in the loop
// device (its queue and await), while the disk itself sees only 300 reads a second.
const throttledReadIOPS = 300

// requireDevices skips the test where it cannot make loop devices and limit IO: it needs
// root, losetup, fio and a control-group IO controller.
func requireDevices(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("loop devices and IO limits need root")
	}
	for _, bin := range []string{"losetup", "fio"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s", bin)
		}
	}
	if s, err := cgroup.Detect(); err != nil || s.IORoot == "" {
		t.Skipf("no control-group IO controller (%v)", err)
	}
}

// loopDevice makes a loop device over a 16 MiB file of random data in dir, reading its file
// with direct IO (so its reads reach the disk and its IO limit), detached at the test's end;
// it returns the device's name ("loop3").
func loopDevice(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name+".img")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.CopyN(f, rand.Reader, 16<<20)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", "--direct-io=on", path).CombinedOutput()
	if err != nil {
		t.Skipf("losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v: %s", dev, err, out)
		}
	})
	return filepath.Base(dev)
}

// onlyDevice are node_exporter's flags that make it report this device alone.
func onlyDevice(dev string) []string {
	return []string{"--collector.diskstats.device-exclude=", "--collector.diskstats.device-include=^" + dev + "$"}
}

// fioJob is fio reading a device at random until stopped.
type fioJob struct {
	cmd    *exec.Cmd
	stderr string // its file
	done   chan struct{}
	once   sync.Once
}

// light reads a few times a second, one read at a time: a device with some IO, far from
// saturated. heavy keeps 32 reads waiting.
var (
	light = []string{"--ioengine=psync", "--iodepth=1", "--rate_iops=50"}
	heavy = []string{"--ioengine=libaio", "--iodepth=32"}
)

// startFio starts fio on /dev/<dev> with the pattern's flags, in group g when it is not nil;
// it is stopped at the test's end if not before.
func startFio(t *testing.T, g *cgroup.Group, dev string, pattern []string) *fioJob {
	t.Helper()
	return startFioOn(t, g, "/dev/"+dev, pattern)
}

// startFioOn is startFio on a device's or a file's path (a file is made 16 MiB first).
func startFioOn(t *testing.T, g *cgroup.Group, path string, pattern []string) *fioJob {
	t.Helper()
	if !strings.HasPrefix(path, "/dev/") {
		pattern = append([]string{"--size=16M"}, pattern...)
	}
	// One process (--thread): a job forked apart would outlive a kill of fio.
	args := append([]string{"--name=hosttest", "--thread", "--filename=" + path, "--rw=randread", "--bs=4k", "--direct=1",
		"--time_based", "--runtime=600", "--output=/dev/null"}, pattern...)
	j := &fioJob{cmd: exec.Command("fio", args...), stderr: filepath.Join(t.TempDir(), "fio.err"), done: make(chan struct{})}
	errf, err := os.Create(j.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	j.cmd.Stderr = errf
	if g != nil {
		err = g.Start(j.cmd)
	} else {
		err = j.cmd.Start()
	}
	if err != nil {
		t.Fatalf("fio on %s: %v", path, err)
	}
	go func() { _ = j.cmd.Wait(); close(j.done) }()
	t.Cleanup(j.stop)
	return j
}

// running fails the test when fio has already ended (it could not read the device).
func (j *fioJob) running(t *testing.T) {
	t.Helper()
	select {
	case <-j.done:
		msg, _ := os.ReadFile(j.stderr)
		t.Fatalf("fio %v ended early (%v): %s", j.cmd.Args, j.cmd.ProcessState, msg)
	default:
	}
}

// stop kills fio and waits until it is gone; stopping twice is nothing.
func (j *fioJob) stop() {
	j.once.Do(func() {
		_ = j.cmd.Process.Kill()
		<-j.done
	})
}

// throttledGroup makes a control group whose reads of disk are limited to
// throttledReadIOPS, removed at the test's end.
func throttledGroup(t *testing.T, disk *cgroup.Device) *cgroup.Group {
	t.Helper()
	return testGroup(t, cgroup.Budget{ReadIOPS: throttledReadIOPS}, disk)
}

// testGroup makes a control group of the test's own with budget b (on disk, for IO limits),
// killing what runs in it and removing it at the test's end.
func testGroup(t *testing.T, b cgroup.Budget, disk *cgroup.Device) *cgroup.Group {
	t.Helper()
	sys, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	// Named after the test, not its temporary folder (numbered per test, so "004" in two
	// tests side by side): one test's cleanup would kill what runs in the other's group.
	name := fmt.Sprintf("%shosttest-%d-%s", cgroup.GroupPrefix, os.Getpid(), strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, t.Name()))
	g, err := sys.Create(name, b, sys.CPUs, disk)
	if err != nil {
		t.Fatalf("control group: %v", err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Errorf("remove %s: %v", name, err)
		}
	})
	return g
}
