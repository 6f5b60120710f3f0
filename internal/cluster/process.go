package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/agbench/agbench/internal/proc"
)

// Every process agbench runs beside the nodes (etcd, each node's Patroni, the listener, the
// links) is started here by startDaemon and stopped by stopProcess, and so is a node whose
// pg_ctl could not stop it: one start, one stop, whoever the process is.

// killWait bounds the wait for a process to be gone after SIGKILL (a process in
// uninterruptible sleep dies only when its IO ends).
const killWait = 10 * time.Second

// process is a process known by its pid and its start time, so that a pid reused by another
// process is never signalled.
type process struct {
	pid   int
	start uint64
}

// find pins the process that pid names now; false when there is none (or only its zombie).
func find(pid int) (process, bool) {
	if pid <= 0 {
		return process{}, false
	}
	st, err := proc.ReadStat(proc.Root, pid)
	if err != nil || st.Zombie() {
		return process{}, false
	}
	return process{pid, st.StartTime}, true
}

func (p process) same() bool {
	st, err := proc.ReadStat(proc.Root, p.pid)
	return err == nil && st.StartTime == p.start
}

// alive reports whether the process still runs: the same process, and not a zombie.
func (p process) alive() bool {
	st, err := proc.ReadStat(proc.Root, p.pid)
	return err == nil && st.StartTime == p.start && !st.Zombie()
}

// signal sends sig to the process unless it is gone; a process that ends meanwhile is not
// an error.
func (p process) signal(sig syscall.Signal) error {
	if !p.same() {
		return nil
	}
	if err := syscall.Kill(p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// waitGone waits up to d for the process to end, and reports whether it did.
func (p process) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for p.alive() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// stopProcess stops process pid: it sends sig, waits up to grace for the process to end,
// then kills it (SIGKILL) and waits until it is gone. It reports whether it had to kill.
// A process already gone is not an error; only the process that pid named when it was
// called is ever signalled. A process that is still there after SIGKILL is an error.
// Reaping is its parent's: init's for a process an earlier agbench started, startDaemon's
// goroutine for one this agbench started (daemon.stop waits for it).
func stopProcess(pid int, sig syscall.Signal, grace time.Duration) (killed bool, err error) {
	p, ok := find(pid)
	if !ok {
		return false, nil
	}
	if err := p.signal(sig); err != nil {
		return false, fmt.Errorf("signal process %d: %w", pid, err)
	}
	if p.waitGone(grace) {
		return false, nil
	}
	if err := p.signal(syscall.SIGKILL); err != nil {
		return true, fmt.Errorf("kill process %d: %w", pid, err)
	}
	if !p.waitGone(killWait) {
		return true, fmt.Errorf("process %d still alive %v after SIGKILL", pid, killWait)
	}
	return true, nil
}

// daemon is a background process this agbench started: in a session of its own, so that a
// Ctrl-C at the terminal does not reach it and it outlives the command that started it.
type daemon struct {
	pid    int
	exited chan struct{} // closed once the process has ended and been reaped
	err    error         // Wait's, once exited is closed
}

// startDaemon starts cmd in a session of its own, its output appended to logFile (made with
// perm), and reaps it in a goroutine if it ends while agbench still runs.
func startDaemon(cmd *exec.Cmd, logFile string, perm os.FileMode) (*daemon, error) {
	logf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, perm)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Setsid = false, true
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &daemon{pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.exited)
	}()
	return d, nil
}

// stop stops the daemon as stopProcess does, and waits until it is reaped.
func (d *daemon) stop(sig syscall.Signal, grace time.Duration) error {
	if _, err := stopProcess(d.pid, sig, grace); err != nil {
		return err
	}
	<-d.exited // it is dead or a zombie: Wait returns at once
	return nil
}

// endpoint is an address a daemon serves, with the name its error messages give it.
type endpoint struct{ name, addr string }

// dialEvery is how often waitAccepting tries an address that refused.
const dialEvery = 50 * time.Millisecond

// waitAccepting waits until the daemon accepts TCP connections on every endpoint. When it
// ends first, ctx ends, or timeout passes, it stops the daemon (what still runs) and says why,
// with the end of its log.
func (d *daemon) waitAccepting(ctx context.Context, what string, eps []endpoint, timeout time.Duration, logFile string) error {
	deadline := time.Now().Add(timeout)
	for _, ep := range eps {
		for {
			c, err := net.DialTimeout("tcp", ep.addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-d.exited:
				return fmt.Errorf("%s exited (%v)%s", what, d.err, logTail(logFile))
			default:
			}
			if time.Now().After(deadline) {
				return errors.Join(fmt.Errorf("%s did not accept connections on %s within %v (%v)%s", ep.name, ep.addr, timeout, err, logTail(logFile)),
					d.stop(syscall.SIGTERM, 0))
			}
			select {
			case <-ctx.Done():
				return errors.Join(ctx.Err(), d.stop(syscall.SIGTERM, 0))
			case <-time.After(dialEvery):
			}
		}
	}
	return nil
}
