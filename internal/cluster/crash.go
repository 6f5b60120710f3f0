package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agbench/agbench/internal/proc"
)

// crashWait bounds the wait for a killed postmaster's children to exit.
const crashWait = 30 * time.Second

// OwnPostmaster returns the pid of the named node's live postmaster after checking that the
// process is this cluster's: the pid comes from the node's postmaster.pid in the cluster's
// own folder, and the process runs this cluster's postgres binary on that data folder. Any
// other process (a pid reused, a server agbench did not start) is refused with the reason.
func (t *Topology) OwnPostmaster(name string) (int, error) {
	n := t.Node(name)
	if n == nil {
		return 0, fmt.Errorf("no node %q in cluster %s", name, t.Name)
	}
	if !under(n.DataDir, t.Dir) {
		return 0, fmt.Errorf("node %s: data folder %s is not inside the cluster's folder %s", name, n.DataDir, t.Dir)
	}
	// The lock file's process, whatever it runs: one that is not this node's postmaster is
	// named as such, rather than the node called not running.
	pid := lockFilePID(n.DataDir)
	if pid == 0 {
		return 0, fmt.Errorf("node %s is not running", name)
	}
	if err := checkPostmaster(pid, t.PG.Path("postgres"), n.DataDir); err != nil {
		return 0, fmt.Errorf("node %s: %w", name, err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return 0, fmt.Errorf("node %s: no permission to signal its postmaster %d: %v", name, pid, err)
	}
	return pid, nil
}

// checkPostmaster checks that process pid runs binary on dataDir (from /proc/pid/cmdline).
func checkPostmaster(pid int, binary, dataDir string) error {
	args, err := proc.Cmdline(proc.Root, pid)
	if err != nil {
		return fmt.Errorf("process %d: %v", pid, err)
	}
	if err := postmasterCmdline(args, binary, dataDir); err != nil {
		return fmt.Errorf("process %d %w", pid, err)
	}
	return nil
}

// postmasterCmdline checks a process's command line (proc.Cmdline): binary, then somewhere
// "-D" and dataDir.
func postmasterCmdline(args []string, binary, dataDir string) error {
	if filepath.Clean(args[0]) != filepath.Clean(binary) {
		return fmt.Errorf("runs %q, not this cluster's %s", args[0], binary)
	}
	if dataDirArg(args, dataDir) {
		return nil
	}
	return fmt.Errorf("is not the postmaster of %s (%s)", dataDir, strings.Join(args, " "))
}

// dataDirArg reports whether a command line gives "-D dataDir".
func dataDirArg(args []string, dataDir string) bool {
	for i, a := range args {
		if a == "-D" && i+1 < len(args) && filepath.Clean(args[i+1]) == filepath.Clean(dataDir) {
			return true
		}
	}
	return false
}

func under(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// CrashNode kills the named node's postmaster with SIGKILL, as a crash of the server would,
// after OwnPostmaster's checks, and waits until its children have exited too (they notice the
// postmaster's death by themselves), so that the folder can be recovered and started again.
func (t *Topology) CrashNode(ctx context.Context, name string) error {
	pid, err := t.OwnPostmaster(name)
	if err != nil {
		return err
	}
	kids := children(pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill postmaster %d of %s: %w", pid, name, err)
	}
	return t.waitDead(ctx, name, append([]int{pid}, kids...))
}

// clearZombieLock removes the lock file of a killed postmaster that its parent (init here:
// pg_ctl's child outlives it) has not reaped yet. While it is a zombie, kill(pid, 0) still
// succeeds, so PostgreSQL (pg_rewind's crash recovery, a start) takes the lock file for a
// live postmaster's; the process is dead, so its lock file goes, as a DBA removes a dead
// server's.
func clearZombieLock(dataDir string, pid int) error {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil || Alive(pid) {
		return nil // reaped, or (never here) alive
	}
	lock := filepath.Join(dataDir, "postmaster.pid")
	b, err := os.ReadFile(lock)
	if err != nil {
		return nil
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if strings.TrimSpace(line) != strconv.Itoa(pid) {
		return nil
	}
	if err := os.Remove(lock); err != nil {
		return fmt.Errorf("postmaster %d is dead but not reaped, and its lock file stays: %w", pid, err)
	}
	return nil
}

// children lists the pids whose parent is pid.
func children(pid int) []int {
	kids, _ := proc.Children(proc.Root, pid)
	out := make([]int, len(kids))
	for i, k := range kids {
		out[i] = k.PID
	}
	return out
}

var (
	walEndRE  = regexp.MustCompile(`error in WAL record at [0-9A-F]+/[0-9A-F]+: .*\bat ([0-9A-F]+/[0-9A-F]+)`)
	walNoneRE = regexp.MustCompile(`could not find a valid record after ([0-9A-F]+/[0-9A-F]+)`)
	// walEmptyRE is pg_waldump's refusal of a segment that was created (recycled or
	// preallocated) but never written: its first page header is zeros.
	walEmptyRE = regexp.MustCompile(`WAL file "[0-9A-F]+" header specifies 0 bytes`)
	tliRE      = regexp.MustCompile(`(?m)^Latest checkpoint's TimeLineID:\s+(\d+)`)
	redoFileRE = regexp.MustCompile(`(?m)^Latest checkpoint's REDO WAL file:\s+([0-9A-F]{24})$`)
)

// RedoWALFile is the WAL segment file in which the last checkpoint of a stopped node begins
// its redo (pg_controldata's "Latest checkpoint's REDO WAL file"). After a clean shutdown it
// is the segment the node's WAL ends in: segments in its pg_wal with a higher number are
// recycled ones (renamed ahead by earlier checkpoints, written again before they are read).
func (t *Topology) RedoWALFile(ctx context.Context, name string) (string, error) {
	n := t.Node(name)
	if n == nil {
		return "", fmt.Errorf("no node %q in cluster %s", name, t.Name)
	}
	if t.nodeRunning(n) {
		return "", fmt.Errorf("node %s is running", name)
	}
	cd, err := t.install().Run(ctx, t.user(), "pg_controldata", "-D", n.DataDir)
	if err != nil {
		return "", err
	}
	m := redoFileRE.FindStringSubmatch(cd)
	if m == nil {
		return "", fmt.Errorf("pg_controldata of %s shows no REDO WAL file", name)
	}
	return m[1], nil
}

// EndOfWAL returns where the valid WAL of a stopped node ends, reading its pg_wal with
// pg_waldump from from (a WAL position the node has) on the timeline of its last checkpoint.
func (t *Topology) EndOfWAL(ctx context.Context, name, from string) (uint64, error) {
	n := t.Node(name)
	if n == nil {
		return 0, fmt.Errorf("no node %q in cluster %s", name, t.Name)
	}
	if t.nodeRunning(n) {
		return 0, fmt.Errorf("node %s is running", name)
	}
	cd, err := t.install().Run(ctx, t.user(), "pg_controldata", "-D", n.DataDir)
	if err != nil {
		return 0, err
	}
	m := tliRE.FindStringSubmatch(cd)
	if m == nil {
		return 0, fmt.Errorf("pg_controldata of %s shows no timeline", name)
	}
	out, _ := t.install().Run(ctx, t.user(), "pg_waldump", "--quiet", "-p", filepath.Join(n.DataDir, "pg_wal"), "-t", m[1], "-s", from)
	return parseWALEnd(out, from)
}

// parseWALEnd reads the end of valid WAL from pg_waldump's last words, run from position
// from: the position of the first invalid record, or from when no valid record follows it
// or the segment holding it was never written (the node's WAL ends before that segment).
func parseWALEnd(out, from string) (uint64, error) {
	if m := walEndRE.FindStringSubmatch(out); m != nil {
		return ParseLSN(m[1])
	}
	if m := walNoneRE.FindStringSubmatch(out); m != nil {
		return ParseLSN(m[1])
	}
	if walEmptyRE.MatchString(out) {
		return ParseLSN(from)
	}
	return 0, fmt.Errorf("pg_waldump did not say where the WAL ends: %s", strings.TrimSpace(out))
}

// ReceivedLSN is the WAL position a standby has received (or replayed, if further).
func (t *Topology) ReceivedLSN(ctx context.Context, name string) (string, error) {
	n := t.Node(name)
	if n == nil {
		return "", fmt.Errorf("no node %q in cluster %s", name, t.Name)
	}
	return t.receivedLSN(ctx, n)
}
