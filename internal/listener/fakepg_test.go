package listener

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/agbench/agbench/internal/cluster"
)

// fakePG is a scripted PostgreSQL backend on 127.0.0.1:0 for tests that need no real
// server: it trusts every login, answers the listener's health probe from its fields,
// answers "SELECT node" with its name, and holds "SELECT pg_sleep" until a cancel
// request with the session's key arrives. With refuse set, it answers every StartupMessage
// but the probe's with that FATAL error, as a server shutting down or full does (the
// probe's connection, open before, keeps working, as on a real server in smart shutdown).
type fakePG struct {
	name       string
	ln         net.Listener
	inRecovery atomic.Bool
	lsn        atomic.Uint64
	// timeline is what pg_walfile_name reports out of recovery; denyTimeline makes the
	// probe's query fail as for a login without EXECUTE on pg_walfile_name.
	timeline     atomic.Uint32
	denyTimeline atomic.Bool
	refuse       atomic.Pointer[pgproto3.ErrorResponse]
	refused      atomic.Int64
	// refuseProbe makes the probe's logins fail as on a server starting up, so that a test
	// decides which node a listener's first probe round sees.
	refuseProbe atomic.Bool
	// beforeAnswer, when set, runs (once) on a session's StartupMessage before the answer.
	beforeAnswer atomic.Pointer[func()]
	pid          uint32 // every fake hands out the same PIDs: cancel keys differ by secret only

	mu       sync.Mutex
	startups []map[string]string
	cancels  []uint32
	sleepers map[uint32]chan struct{}
	conns    map[net.Conn]bool
}

func startFakePG(t testing.TB, name string, inRecovery bool) *fakePG {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePG{name: name, ln: ln, pid: 1000, sleepers: map[uint32]chan struct{}{}, conns: map[net.Conn]bool{}}
	f.inRecovery.Store(inRecovery)
	f.lsn.Store(0x3000000)
	f.timeline.Store(1)
	go f.accept()
	t.Cleanup(f.stop)
	return f
}

func (f *fakePG) addr() string { return f.ln.Addr().String() }

func (f *fakePG) backend() Backend {
	return Backend{Name: f.name, Addr: f.addr(), ProbeConnString: "postgres://probe@" + f.addr() + "/postgres?sslmode=disable"}
}

// stop closes the listening socket and every session, as a crashed server would.
func (f *fakePG) stop() {
	_ = f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
}

func (f *fakePG) lastStartup() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.startups) - 1; i >= 0; i-- {
		if f.startups[i]["user"] != "probe" {
			return f.startups[i]
		}
	}
	return nil
}

func (f *fakePG) cancelCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.cancels)
}

func (f *fakePG) accept() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns[c] = true
		f.mu.Unlock()
		go func() {
			defer func() {
				f.mu.Lock()
				delete(f.conns, c)
				f.mu.Unlock()
				c.Close()
			}()
			f.serve(c)
		}()
	}
}

func (f *fakePG) serve(c net.Conn) {
	be := pgproto3.NewBackend(c, c)
	var sm *pgproto3.StartupMessage
	for sm == nil {
		msg, err := be.ReceiveStartupMessage()
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			_, _ = c.Write([]byte{'N'})
		case *pgproto3.CancelRequest:
			f.mu.Lock()
			f.cancels = append(f.cancels, m.ProcessID)
			if ch, ok := f.sleepers[m.ProcessID]; ok && string(m.SecretKey) == f.name {
				close(ch)
				delete(f.sleepers, m.ProcessID)
			}
			f.mu.Unlock()
			return
		case *pgproto3.StartupMessage:
			sm = m
		}
	}
	f.mu.Lock()
	params := map[string]string{}
	for k, v := range sm.Parameters {
		params[k] = v
	}
	f.startups = append(f.startups, params)
	f.pid++
	pid := f.pid
	f.mu.Unlock()
	if params["user"] != "probe" {
		if h := f.beforeAnswer.Swap(nil); h != nil {
			(*h)()
		}
	}
	e := f.refuse.Load()
	if params["user"] == "probe" {
		e = nil
		if f.refuseProbe.Load() {
			e = &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "57P03", Message: "the database system is starting up"}
		}
	}
	if e != nil {
		if params["user"] != "probe" {
			f.refused.Add(1)
		}
		be.Send(e)
		_ = be.Flush()
		return
	}
	be.Send(&pgproto3.AuthenticationOk{})
	be.Send(&pgproto3.ParameterStatus{Name: "server_version", Value: "15.0-fake"})
	be.Send(&pgproto3.BackendKeyData{ProcessID: pid, SecretKey: []byte(f.name)})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if be.Flush() != nil {
		return
	}
	for {
		msg, err := be.Receive()
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *pgproto3.Terminate:
			return
		case *pgproto3.Query:
			f.query(be, pid, m.String)
		default:
			be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "0A000", Message: fmt.Sprintf("fake: %T not supported", msg)})
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		}
		if be.Flush() != nil {
			return
		}
	}
}

func (f *fakePG) query(be *pgproto3.Backend, pid uint32, q string) {
	row := func(vals ...string) {
		var fields []pgproto3.FieldDescription
		var data [][]byte
		for i, v := range vals {
			fields = append(fields, pgproto3.FieldDescription{Name: []byte(fmt.Sprintf("c%d", i)), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1})
			data = append(data, []byte(v))
		}
		be.Send(&pgproto3.RowDescription{Fields: fields})
		be.Send(&pgproto3.DataRow{Values: data})
		be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
	}
	switch {
	case q == probeSQL && f.denyTimeline.Load():
		be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: codeInsufficientPrivilege, Message: "permission denied for function pg_walfile_name"})
	case q == probeSQL || q == probeSQLNoTimeline:
		rec, wal := "f", fmt.Sprintf("%08X%016X", f.timeline.Load(), f.lsn.Load()>>24)
		if f.inRecovery.Load() {
			rec = "t"
		}
		if q == probeSQL {
			row(rec, cluster.FormatLSN(f.lsn.Load()), "f", wal)
		} else {
			row(rec, cluster.FormatLSN(f.lsn.Load()), "f")
		}
	case q == "SELECT node":
		row(f.name)
	case strings.HasPrefix(q, "SELECT pg_sleep"):
		ch := make(chan struct{})
		f.mu.Lock()
		f.sleepers[pid] = ch
		f.mu.Unlock()
		select {
		case <-ch:
			be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "57014", Message: "canceling statement due to user request"})
		case <-time.After(30 * time.Second):
			row("slept")
		}
	default:
		be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "42601", Message: "fake: unknown query " + q})
	}
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
}

// startFake starts a listener in front of the fakes, closed when the test ends.
func startFake(t *testing.T, cfg Config, fakes ...*fakePG) *Listener {
	t.Helper()
	for _, f := range fakes {
		cfg.Backends = append(cfg.Backends, f.backend())
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.ProbeInterval == 0 {
		cfg.ProbeInterval = 50 * time.Millisecond
	}
	l, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// waitFor polls cond until it holds, failing the test after a generous time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// refuseWith makes the fake refuse new sessions with a FATAL error of the given SQLSTATE.
func (f *fakePG) refuseWith(code, msg string) {
	f.refuse.Store(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg})
}
