package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/proc"
)

// await waits up to 10 s for cond, failing the test with what it waited for.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ignoresTERM reports whether process pid has SIGTERM ignored (SigIgn in /proc/pid/status).
func ignoresTERM(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(syscall.SIGTERM-1)) != 0
		}
	}
	return false
}

// reaped reports whether no process pid exists any more, not even a zombie.
func reaped(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return errors.Is(err, os.ErrNotExist)
}

func startSh(t *testing.T, script string) *daemon {
	t.Helper()
	d, err := startDaemon(exec.Command("/bin/sh", "-c", script), filepath.Join(t.TempDir(), "log"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.stop(syscall.SIGKILL, 0) })
	return d
}

// A process that ignores SIGTERM is killed once the grace has passed, and reaped; one that
// ends on the signal is not killed.
func TestStopProcessKillsAfterTheGrace(t *testing.T) {
	t.Parallel()
	stubborn := startSh(t, `trap "" TERM; exec sleep 600`)
	await(t, "the shell to ignore SIGTERM", func() bool { return ignoresTERM(stubborn.pid) })
	const grace = 300 * time.Millisecond
	start := time.Now()
	killed, err := stopProcess(stubborn.pid, syscall.SIGTERM, grace)
	if took := time.Since(start); err != nil || !killed || took < grace {
		t.Fatalf("stopProcess of a process that ignores SIGTERM: killed %v, %v after %v; want killed after at least %v", killed, err, took, grace)
	}
	select {
	case <-stubborn.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed process was not reaped")
	}
	if !reaped(stubborn.pid) || !strings.Contains(stubborn.err.Error(), "killed") {
		t.Fatalf("after the kill: reaped %v, Wait said %v", reaped(stubborn.pid), stubborn.err)
	}

	polite := startSh(t, `exec sleep 600`)
	await(t, "sleep to run", func() bool {
		args, err := proc.Cmdline(proc.Root, polite.pid)
		return err == nil && len(args) > 0 && args[0] == "sleep"
	})
	start = time.Now()
	if err := polite.stop(syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 30*time.Second || !reaped(polite.pid) || !strings.Contains(polite.err.Error(), "terminated") {
		t.Fatalf("a process that ends on SIGTERM: took %v, reaped %v, Wait said %v", took, reaped(polite.pid), polite.err)
	}
}

// A process already gone, an unreaped zombie, no pid, and a pid of no process are not
// errors, and nothing is signalled.
func TestStopProcessOfOneGone(t *testing.T) {
	t.Parallel()
	gone := startSh(t, `exit 0`)
	<-gone.exited
	zombie := exec.Command("/bin/sh", "-c", "exit 0")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	await(t, "the unreaped process to be a zombie", func() bool {
		st, err := proc.ReadStat(proc.Root, zombie.Process.Pid)
		return err == nil && st.Zombie()
	})
	for _, pid := range []int{gone.pid, zombie.Process.Pid, 0, -1, 1 << 30} {
		killed, err := stopProcess(pid, syscall.SIGTERM, time.Minute)
		if killed || err != nil {
			t.Errorf("stopProcess(%d) of no live process: killed %v, %v", pid, killed, err)
		}
	}
	if err := gone.stop(syscall.SIGTERM, time.Minute); err != nil {
		t.Errorf("daemon.stop of one that ended: %v", err)
	}
}

// A pid pinned with another start time (a pid reused by another process) is never
// signalled: the process ends by the signal sent to it as itself, not by the one sent
// before to the other start time (a signal sent is pending at once, and would have come
// first).
func TestProcessSignalsOnlyTheProcessItPinned(t *testing.T) {
	t.Parallel()
	d := startSh(t, `exec sleep 600`)
	await(t, "sleep to run", func() bool {
		args, err := proc.Cmdline(proc.Root, d.pid)
		return err == nil && len(args) > 0 && args[0] == "sleep"
	})
	p, ok := find(d.pid)
	if !ok || !p.alive() {
		t.Fatalf("find(%d) of a running process: %v", d.pid, ok)
	}
	other := process{pid: p.pid, start: p.start + 1}
	if other.same() || other.alive() {
		t.Fatal("a process with another start time counts as the same")
	}
	if err := other.signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if err := p.signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-d.exited
	if d.err == nil || !strings.Contains(d.err.Error(), "terminated") {
		t.Fatalf("the process ended with %v: want SIGTERM's end", d.err)
	}
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// waitAccepting returns once the daemon's address accepts; it says so, with the end of the
// log, when the daemon exits first; and it stops the daemon when the time is up or ctx ends.
func TestWaitAccepting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// A sleep that holds a listening socket, the test's copy closed: only it accepts.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "exec sleep 600")
	cmd.ExtraFiles = []*os.File{f}
	log := filepath.Join(t.TempDir(), "log")
	holder, err := startDaemon(cmd, log, 0o644)
	f.Close()
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer holder.stop(syscall.SIGKILL, 0)
	if err := holder.waitAccepting(ctx, "holder", []endpoint{{"holder", l.Addr().String()}}, 10*time.Second, log); err != nil {
		t.Fatalf("a daemon that holds a listening socket: %v", err)
	}

	quits := startSh(t, `echo cannot serve; exit 3`)
	err = quits.waitAccepting(ctx, "quitter", []endpoint{{"quitter", closedAddr(t)}}, time.Minute, filepath.Join(t.TempDir(), "none"))
	if err == nil || !strings.Contains(err.Error(), "quitter exited (exit status 3)") {
		t.Fatalf("a daemon that exits: %v", err)
	}

	deaf := startSh(t, `exec sleep 600`)
	addr := closedAddr(t)
	err = deaf.waitAccepting(ctx, "deaf", []endpoint{{"link x", addr}}, 200*time.Millisecond, log)
	if err == nil || !strings.Contains(err.Error(), "link x did not accept connections on "+addr+" within 200ms") {
		t.Fatalf("a daemon that never listens: %v", err)
	}
	if !reaped(deaf.pid) {
		t.Fatal("the daemon that never listened is still there")
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	deaf = startSh(t, `exec sleep 600`)
	if err := deaf.waitAccepting(cancelled, "deaf", []endpoint{{"deaf", closedAddr(t)}}, time.Minute, log); !errors.Is(err, context.Canceled) || !reaped(deaf.pid) {
		t.Fatalf("waitAccepting with ctx ended: %v, reaped %v", err, reaped(deaf.pid))
	}
}

// StopListener and StopLinks stop the recorded process, clear its pid and save the
// topology; a pid that is not agbench's listener or links (reused) is left alone and only
// forgotten.
func TestStopListenerAndLinks(t *testing.T) {
	t.Parallel()
	// A shell named as agbench's process, reading a pipe that never brings a line.
	as := func(argv0 string, args ...string) *daemon {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := &exec.Cmd{Path: "/bin/sh", Args: append([]string{argv0, "-c", `read x`, "sh"}, args...), Stdin: r}
		d, err := startDaemon(cmd, filepath.Join(t.TempDir(), "log"), 0o644)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close(); _ = d.stop(syscall.SIGKILL, 0) })
		return d
	}
	listener, links, stranger := as("agbench", "listener", "--cluster", "t"), as("agbench", "cluster", "links", "--name", "t"), as("agbench", "cluster", "status")
	dir := t.TempDir()
	topo := &Topology{Dir: dir, Listener: &ListenerInfo{PID: listener.pid}, Links: &LinksInfo{PID: links.pid}}
	if err := topo.StopListener(); err != nil {
		t.Fatal(err)
	}
	if err := topo.StopLinks(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*daemon{listener, links} {
		select {
		case <-d.exited:
		case <-time.After(10 * time.Second):
			t.Fatalf("process %d not stopped", d.pid)
		}
	}
	saved, err := os.ReadFile(topologyPath(dir))
	if err != nil || topo.Listener.PID != 0 || topo.Links.PID != 0 || strings.Contains(string(saved), `"pid"`) {
		t.Fatalf("after the stops: listener pid %d, links pid %d, saved %s (%v)", topo.Listener.PID, topo.Links.PID, saved, err)
	}
	topo.Listener.PID, topo.Links.PID = stranger.pid, stranger.pid
	if err := errors.Join(topo.StopListener(), topo.StopLinks()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stranger.exited:
		t.Fatalf("a process not the listener's or the links' was stopped: %v", stranger.err)
	default:
	}
	if topo.Listener.PID != 0 || topo.Links.PID != 0 {
		t.Fatalf("a pid not the listener's or the links': records %d %d", topo.Listener.PID, topo.Links.PID)
	}
}
