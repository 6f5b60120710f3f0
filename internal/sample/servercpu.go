package sample

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/proc"
)

// A server's CPU from /proc. A node the sampler reaches on this host (loopback, a Unix
// socket, one of this machine's addresses, or a network namespace of this machine whose
// backend holds the sampler's very connection) has its postmaster found from the sampler's
// own backend: pg_backend_pid(), whose /proc entry must be a postgres process whose title
// names the sampler's side of the connection ("(port)" or "[local]"), which proves it is
// in this host's pid namespace; its parent is the postmaster. The server's CPU is then the
// user and system time of the postmaster and all its children, living (utime+stime, and
// cutime+cstime of what they waited for) and gone (the postmaster's cutime+cstime, which
// take in every child it reaped). /proc/<pid>/stat and cmdline are readable by any user,
// so an ordinary login (no superuser, no pg_monitor) gets it too.

// serverProcs is a server found on this host: its postmaster's pid and start time (a pid
// reused by another process is not taken for it).
type serverProcs struct {
	procRoot   string
	postmaster int
	start      uint64
}

// isPostgres says whether a process's comm is PostgreSQL's server.
func isPostgres(comm string) bool { return comm == "postgres" || comm == "postmaster" }

// findPostmaster finds the server of a backend on this host: backend is pg_backend_pid()
// of the sampler's session, mark what its process title must hold ("(<our port>)" for TCP,
// "[local]" for a Unix socket). It returns why not when it cannot.
func findPostmaster(procRoot string, backend int, mark string) (serverProcs, string) {
	b, err := proc.ReadStat(procRoot, backend)
	if err != nil {
		return serverProcs{}, fmt.Sprintf("the server's backend (pid %d) is not in this host's /proc: the server runs in another pid namespace (a container) or on another host", backend)
	}
	title, err := proc.Cmdline(procRoot, backend)
	if !isPostgres(b.Comm) || err != nil || !strings.Contains(strings.Join(title, " "), mark) {
		return serverProcs{}, fmt.Sprintf("pid %d on this host is not the sampler's backend (%s, title without %s): the server runs in another pid namespace (a container)", backend, b.Comm, mark)
	}
	pm, err := proc.ReadStat(procRoot, b.PPID)
	if err != nil || !isPostgres(pm.Comm) {
		return serverProcs{}, fmt.Sprintf("the parent of backend %d (pid %d) is not a postgres process", backend, b.PPID)
	}
	return serverProcs{procRoot: procRoot, postmaster: b.PPID, start: pm.StartTime}, ""
}

// PostmasterCPU is the CPU time so far of the postmaster pid on this host and of all its
// children, living and gone: what the database sampler counts as the server's CPU, for
// callers that know the postmaster already (its postmaster.pid).
func PostmasterCPU(pid int) (time.Duration, error) {
	pm, err := proc.ReadStat(proc.Root, pid)
	if err != nil {
		return 0, fmt.Errorf("postmaster %d: %w", pid, err)
	}
	sec, err := serverProcs{procRoot: proc.Root, postmaster: pid, start: pm.StartTime}.cpuSeconds()
	return time.Duration(sec * float64(time.Second)), err
}

// cpuSeconds is cpuTicks in seconds.
func (s serverProcs) cpuSeconds() (float64, error) {
	ticks, err := s.cpuTicks()
	return proc.Seconds(ticks), err
}

// cpuTicks is the CPU time of the postmaster and all its children so far, in clock ticks.
// A child reaped while the children are read would be counted twice or not at all, so the
// reading is taken again (a few times at most) until the postmaster's reaped children's
// time did not change across it.
func (s serverProcs) cpuTicks() (uint64, error) {
	var total uint64
	for attempt := 0; attempt < 5; attempt++ {
		pm, err := proc.ReadStat(s.procRoot, s.postmaster)
		if err != nil || pm.StartTime != s.start {
			return 0, fmt.Errorf("the postmaster (pid %d) is gone", s.postmaster)
		}
		children, err := s.childrenTicks()
		if err != nil {
			return 0, err
		}
		again, err := proc.ReadStat(s.procRoot, s.postmaster)
		if err != nil || again.StartTime != s.start {
			return 0, fmt.Errorf("the postmaster (pid %d) is gone", s.postmaster)
		}
		total = again.Ticks() + children
		if again.ReapedTicks() == pm.ReapedTicks() {
			break
		}
	}
	return total, nil
}

// childrenTicks sums the CPU time of the postmaster's living children.
func (s serverProcs) childrenTicks() (uint64, error) {
	kids, err := proc.Children(s.procRoot, s.postmaster)
	if err != nil {
		return 0, err
	}
	var total uint64
	for _, c := range kids {
		total += c.Ticks()
	}
	return total, nil
}

// locateServer says whether the sampler's session reaches a server on this host and, if
// so, finds its postmaster. remote names the server's host when it is another one.
func locateServer(ctx context.Context, conn *pgx.Conn, procRoot string) (s serverProcs, remote, absent string) {
	nc := conn.PgConn().Conn()
	var mark string
	switch ra := nc.RemoteAddr().(type) {
	case *net.UnixAddr:
		mark = "[local]"
	case *net.TCPAddr:
		la, ok := nc.LocalAddr().(*net.TCPAddr)
		if !ok {
			return s, "", "the session's own address is unknown"
		}
		mark = "(" + strconv.Itoa(la.Port) + ")"
		if !isThisHost(ra.IP) {
			return locateInNamespace(ctx, conn, procRoot, ra, la, mark)
		}
	default:
		return s, "", fmt.Sprintf("the session's transport (%T) is not TCP or a Unix socket", ra)
	}
	pid, err := backendPID(ctx, conn)
	if err != nil {
		return s, "", err.Error()
	}
	s, absent = findPostmaster(procRoot, pid, mark)
	return s, "", absent
}

// backendPID is pg_backend_pid() of the sampler's session.
func backendPID(ctx context.Context, conn *pgx.Conn) (int, error) {
	var pid int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return 0, fmt.Errorf("pg_backend_pid(): %w", err)
	}
	return pid, nil
}

// locateInNamespace finds a server at an address that is not on this (network namespace's)
// interfaces: one in a network namespace of its own on this machine is still this host's
// when the process of pg_backend_pid() here holds, in its own namespace, this very session
// (an established connection from the server's address and port to ours) — a pid of
// another host never does. Otherwise the server is another host's.
func locateInNamespace(ctx context.Context, conn *pgx.Conn, procRoot string, ra, la *net.TCPAddr, mark string) (s serverProcs, remote, absent string) {
	elsewhere := "the server runs on another host (" + ra.IP.String() + ")"
	pid, err := backendPID(ctx, conn)
	if err != nil {
		return s, ra.IP.String(), elsewhere
	}
	server, sok := netip.AddrFromSlice(ra.IP)
	own, ook := netip.AddrFromSlice(la.IP)
	if !sok || !ook || !proc.HasEstablished(procRoot, pid,
		netip.AddrPortFrom(server.Unmap(), uint16(ra.Port)), netip.AddrPortFrom(own.Unmap(), uint16(la.Port))) {
		return s, ra.IP.String(), elsewhere
	}
	s, absent = findPostmaster(procRoot, pid, mark)
	return s, "", absent
}

// isThisHost says whether an IP address is this machine's (loopback or an interface's).
func isThisHost(ip net.IP) bool {
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// startCPU reads the server's CPU at the window's start.
func (n *pgNode) startCPU() {
	n.cpuErr, n.cpuAt = nil, time.Time{}
	if n.procs.postmaster == 0 {
		return
	}
	n.cpuFirst, n.cpuErr = n.procs.cpuSeconds()
	n.cpuAt = time.Now()
}

// stopCPU reads the server's CPU at the window's end: the cores it used in between.
func (n *pgNode) stopCPU() (float64, bool) {
	if n.procs.postmaster == 0 || n.cpuErr != nil || n.cpuAt.IsZero() {
		return 0, false
	}
	last, err := n.procs.cpuSeconds()
	if err != nil {
		n.cpuErr = err
		return 0, false
	}
	secs := time.Since(n.cpuAt).Seconds()
	if secs <= 0 {
		return 0, false
	}
	return max(0, last-n.cpuFirst) / secs, true
}
