package target

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// Sessions over the blocking connection work like any: queries, a large result, a
// cancelled query, and close while a read is blocked.
func TestBlockingConnOnServer(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	ctx := context.Background()
	cs := topo.ConnString(topo.Primary(), "")
	c, err := Connect(ctx, cs, "agbench-test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, ok := c.PgConn().Conn().(*blockingConn); !ok {
		t.Fatalf("connection is %T, want the blocking one", c.PgConn().Conn())
	}
	var n int64
	if err := c.QueryRow(ctx, `SELECT sum(length(repeat('x', g))) FROM generate_series(1, 2000) g`).Scan(&n); err != nil || n != 2001000 {
		t.Fatalf("sum %d, %v", n, err)
	}
	var total int
	rows, _ := c.Query(ctx, `SELECT repeat('y', 1000) FROM generate_series(1, 5000)`)
	for rows.Next() {
		var s string
		rows.Scan(&s)
		total += len(s)
	}
	if rows.Err() != nil || total != 5_000_000 {
		t.Fatalf("large result: %d bytes, %v", total, rows.Err())
	}
	l, err := Land(ctx, c)
	if err != nil || l.Node != topo.Primary().Name || l.InRecovery {
		t.Fatalf("landing %+v %v", l, err)
	}
	// A cancelled query ends promptly (the cancel request reaches the server).
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Exec(qctx, `SELECT pg_sleep(60)`)
	if err == nil || time.Since(start) > 30*time.Second {
		t.Fatalf("cancelled sleep: %v after %v", err, time.Since(start))
	}
	// Close wakes a read blocked in the kernel.
	c2, err := Connect(ctx, cs, "agbench-test")
	if err != nil {
		t.Fatal(err)
	}
	var execErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, execErr = c2.Exec(context.Background(), `SELECT pg_sleep(60)`)
	}()
	// The query is sleeping on the server, so the session's read is blocked in the kernel:
	// waited for, not assumed after a pause (a busy machine may not have sent it yet, and
	// Close would then only fail the write).
	pid := c2.PgConn().PID()
	watch, err := Connect(ctx, cs, "agbench-test")
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var sleeping bool
		if err := watch.QueryRow(ctx, `SELECT count(*) > 0 FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'PgSleep'`, pid).Scan(&sleeping); err != nil {
			t.Fatal(err)
		}
		if sleeping {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session's pg_sleep did not begin within a minute")
		}
	}
	c2.PgConn().Conn().Close()
	select {
	case <-done:
		if execErr == nil {
			t.Fatal("the query whose connection was closed succeeded")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not wake the blocked read")
	}
}

// BenchmarkRoundTripCPU compares the client CPU of a prepared point query over the blocking
// connection and over Go's network poller, interleaved, on 1 and 4 concurrent sessions
// (ns/op is wall time per operation of all sessions together).
func BenchmarkRoundTripCPU(b *testing.B) {
	topo := clustertest.New(b, clustertest.Options{})
	ctx := context.Background()
	cs := topo.ConnString(topo.Primary(), "")
	for _, run := range []string{"poller/1", "blocking/1", "poller/4", "blocking/4", "poller/1", "blocking/1", "poller/4", "blocking/4"} {
		mode, n, _ := strings.Cut(run, "/")
		vus, _ := strconv.Atoi(n)
		b.Run(run, func(b *testing.B) {
			conns := make([]*pgx.Conn, vus)
			for i := range conns {
				cfg, _ := pgx.ParseConfig(cs)
				if mode == "blocking" {
					cfg.DialFunc = dialBlocking
				}
				c, err := pgx.ConnectConfig(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close(ctx)
				c.Prepare(ctx, "q", `SELECT $1::int + 1`)
				conns[i] = c
			}
			u0, s0 := cpu()
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N/vus + 1
			for _, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < per; i++ {
						rr := c.PgConn().ExecPrepared(ctx, "q", [][]byte{[]byte("1")}, nil, nil)
						rr.Close()
					}
				}()
			}
			wg.Wait()
			u1, s1 := cpu()
			b.ReportMetric(float64((u1-u0)+(s1-s0))/float64(time.Microsecond)/float64(per*vus), "cpu-us/op")
		})
	}
}

func cpu() (time.Duration, time.Duration) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// The session's descriptor is in no epoll set of the process: a registered socket would
// wake a poller thread on every packet (the fault that os.File's Fd left behind).
func TestBlockingConnIsNotInThePoller(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		s, err := ln.Accept()
		if err == nil {
			io.Copy(s, s)
			s.Close()
		}
	}()
	c, err := dialBlocking(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bc, ok := c.(*blockingConn)
	if !ok {
		t.Fatalf("connection is %T, want the blocking one", c)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo %q, %v", buf, err)
	}
	fl, err := unix.FcntlInt(uintptr(bc.fd), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_NONBLOCK != 0 {
		t.Fatalf("descriptor flags %#x, %v: want blocking", fl, err)
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	epolls := 0
	for _, e := range fds {
		if link, _ := os.Readlink("/proc/self/fd/" + e.Name()); link != "anon_inode:[eventpoll]" {
			continue
		}
		epolls++
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(info), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "tfd:" && f[1] == strconv.Itoa(bc.fd) {
				t.Fatalf("descriptor %d is registered with epoll %s: %s", bc.fd, e.Name(), line)
			}
		}
	}
	if epolls == 0 {
		t.Fatal("no epoll descriptor found: the check looked at nothing")
	}
}

// A server that takes the connection and never completes the start-up (frozen, or too busy
// within connect_timeout) is a connect that timed out, said so: the blocking connection
// honours the deadline by shutting its socket down, and the end of file that then gave was
// read as the server hanging up ("failed to receive message: unexpected EOF", which a
// test's connect to a new database at a CI load of 40 said).
func TestConnectTimeoutIsSaidToBeOne(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // accepted, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	_, err = Connect(context.Background(), "postgres://u@"+l.Addr().String()+"/d?connect_timeout=1&sslmode=disable", "agbench-test")
	var ne net.Error
	if err == nil || !strings.Contains(err.Error(), "no session within 1s (connect_timeout") || strings.Contains(err.Error(), "EOF") ||
		!errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("connect to a silent server: %v; want a timeout said to be one", err)
	}
}
