package sample

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
)

// The test process stands for a postmaster: a child that burns CPU and is reaped must be
// in the total afterwards (through cutime), and a living child's time while it runs.
func TestServerCPUCountsChildrenGoneAndLiving(t *testing.T) {
	self, err := proc.ReadStat(proc.Root, os.Getpid())
	if err != nil {
		t.Skip("no /proc")
	}
	s := serverProcs{procRoot: "/proc", postmaster: os.Getpid(), start: self.StartTime}
	before, err := s.cpuSeconds()
	if err != nil {
		t.Fatal(err)
	}
	burn := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	if err := burn.Run(); err != nil {
		t.Fatal(err)
	}
	used := (burn.ProcessState.UserTime() + burn.ProcessState.SystemTime()).Seconds()
	afterTicks, err := s.cpuTicks()
	if err != nil {
		t.Fatal(err)
	}
	after := proc.Seconds(afterTicks)
	// /proc counts in ticks of 10 ms, rounding each process's time down.
	if after-before < used-0.02 {
		t.Errorf("a reaped child used %.3f s of CPU, the total grew by %.3f s", used, after-before)
	}
	// A living child: its own time is counted while it runs.
	live := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; exec sleep 60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	pid := strconv.Itoa(live.Process.Pid)
	var child proc.Stat
	for { // until the loop is done and the shell has become sleep
		c, err := proc.ReadStat(proc.Root, live.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if c.Comm == "sleep" {
			child = c
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// In whole ticks: the same ticks as seconds need not subtract exactly (10.34-10.00 is
	// 0.33999999999999986 in floating point), and this compares them to the tick.
	withLiving, err := s.cpuTicks()
	if err != nil {
		t.Fatal(err)
	}
	if got := withLiving - afterTicks; got < child.Ticks() {
		t.Errorf("living child %s used %d ticks, the total grew by %d ticks", pid, child.Ticks(), got)
	}
	// A process whose title does not name the session is not taken for its backend.
	if _, why := findPostmaster("/proc", os.Getpid(), "(1)"); !strings.Contains(why, "not the sampler's backend") {
		t.Errorf("the test process taken for a backend: %q", why)
	}
	if _, why := findPostmaster("/proc", 1<<30, "(1)"); !strings.Contains(why, "another pid namespace") {
		t.Errorf("a pid not on this host: %q", why)
	}
	if !isThisHost(net.ParseIP("127.0.0.1")) || isThisHost(net.ParseIP("192.0.2.1")) {
		t.Error("isThisHost")
	}
}

// A server on this host, watched by an ordinary login (no superuser, no pg_monitor): its
// postmaster is the one of postmaster.pid, and the CPU of a backend's busy query is in
// the window's server CPU.
func TestServerCPUOfALocalServer(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	cs := clustertest.OrdinaryConnString(topo, topo.Primary())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := NewPG(ctx, []PGNode{{Name: "node0", ConnString: cs}}, PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	pidFile, err := os.ReadFile(filepath.Join(topo.Primary().DataDir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	info := p.Nodes()[0]
	if info.Postmaster != want || info.ServerCPUAbsent != "" || info.Remote != "" {
		t.Fatalf("postmaster %d (%q, remote %q), postmaster.pid says %d", info.Postmaster, info.ServerCPUAbsent, info.Remote, want)
	}
	work, err := pgx.Connect(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	defer work.Close(context.Background())
	var backend int
	if err := work.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		t.Fatal(err)
	}
	key := result.OwnXactKey(work.PgConn().Conn().RemoteAddr().String(), work.Config().Database)
	ownBefore := result.OwnXacts(key)
	t0 := time.Now()
	st := &result.Step{Window: result.Window{Start: t0}}
	if err := p.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	before, err := proc.ReadStat(proc.Root, backend)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := work.Exec(ctx, "SELECT count(*) FROM generate_series(1, 3000000)"); err != nil {
		t.Fatal(err)
	}
	after, err := proc.ReadStat(proc.Root, backend)
	if err != nil {
		t.Fatal(err)
	}
	st.Window.End = time.Now()
	if err := p.Stop(ctx, st); err != nil {
		t.Fatal(err)
	}
	span := time.Since(t0).Seconds() // the figure's own interval lies inside it
	// The sampler counted its own transactions: each wait sample, and the statistics
	// readings at the window's start and end.
	x, err := st.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if own, want := result.OwnXacts(key)-ownBefore, int64(x.Nodes["node0"].WaitSamples+2); own < want {
		t.Errorf("the sampler counted %d own transactions, want at least %d", own, want)
	}
	cores, ok := st.Counters[result.PGName("node0", result.PGServerCPUCores)]
	if !ok {
		t.Fatalf("no server CPU; counters %v", st.Counters)
	}
	if busy := proc.Seconds(after.Ticks() - before.Ticks()); cores*span < busy {
		t.Errorf("server CPU %.3f cores within %.2f s, but one backend alone used %.2f s", cores, span, busy)
	}
}

func TestSetBusy(t *testing.T) {
	prev := map[int]proc.CPUTicks{0: {User: 20, System: 5, Idle: 25}, 1: {User: 10, System: 5, Idle: 35}}
	cur := map[int]proc.CPUTicks{0: {User: 110, System: 5, Idle: 25}, 1: {User: 10, System: 15, Idle: 125}}
	b, ok := setBusy(prev, cur, []int{0})
	if !ok || b.Set != 1 || b.Other != 0.1 {
		t.Errorf("%+v %v", b, ok)
	}
	if _, ok := setBusy(prev, cur, []int{0, 1}); ok {
		t.Error("an affinity of every CPU has no others to compare with")
	}
}

// PostmasterCPU of a process that is not a postgres server still sums it and its children;
// a pid with no process is an error.
func TestPostmasterCPU(t *testing.T) {
	if _, err := proc.ReadStat(proc.Root, os.Getpid()); err != nil {
		t.Skip("no /proc")
	}
	d, err := PostmasterCPU(os.Getpid())
	if err != nil || d < 0 {
		t.Fatalf("PostmasterCPU(self) = %v, %v", d, err)
	}
	if _, err := PostmasterCPU(1 << 30); err == nil {
		t.Error("PostmasterCPU of no process: no error")
	}
}

// A server in a network namespace of its own on this machine is this host's: its address is
// on none of this namespace's interfaces, yet its backend is in this /proc and holds the
// sampler's session, so its CPU is measured. Seen through a /proc where pg_backend_pid() is
// some other process (as another host's pid would be), it is another host's, with the reason.
func TestServerCPUOfANetnsServer(t *testing.T) {
	t.Parallel()
	clustertest.RequireNetns(t)
	topo := clustertest.Shared(t, clustertest.Options{Netns: true})
	n := topo.Primary()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if isThisHost(net.ParseIP(n.ClientHost())) {
		t.Fatalf("node address %s is on this namespace's interfaces", n.ClientHost())
	}
	conn, err := pgx.Connect(ctx, clustertest.OrdinaryConnString(topo, n))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	pidFile, err := os.ReadFile(filepath.Join(n.DataDir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	s, remote, absent := locateServer(ctx, conn, "/proc")
	if s.postmaster != want || remote != "" || absent != "" {
		t.Fatalf("postmaster %d (remote %q, absent %q), postmaster.pid says %d", s.postmaster, remote, absent, want)
	}
	if _, err := s.cpuSeconds(); err != nil {
		t.Fatal(err)
	}
	// Another host: its backend's pid names a process here that is not it (this test).
	var backend int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		t.Fatal(err)
	}
	fake := t.TempDir()
	if err := os.Symlink(filepath.Join("/proc", strconv.Itoa(os.Getpid())), filepath.Join(fake, strconv.Itoa(backend))); err != nil {
		t.Fatal(err)
	}
	s, remote, absent = locateServer(ctx, conn, fake)
	if s.postmaster != 0 || remote != n.ClientHost() || absent != "the server runs on another host ("+n.ClientHost()+")" {
		t.Fatalf("another host's server: postmaster %d, remote %q, absent %q", s.postmaster, remote, absent)
	}
}
