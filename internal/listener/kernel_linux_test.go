package listener

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// kernelOrSkip loads the kernel forwarder. As root (as `make test` runs) it must load;
// elsewhere the test is skipped with the reason.
func kernelOrSkip(t *testing.T) *kernelForwarder {
	t.Helper()
	k, err := newKernelForwarder()
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("kernel forwarder unavailable as root: %v", err)
		}
		t.Skipf("kernel forwarder unavailable: %v", err)
	}
	t.Cleanup(k.close)
	return k
}

// proxied is client <-> (in, out) <-> server with the kernel forwarding between in and out,
// taken off the poller and watched as forward runs a session after its startup phase.
type proxied struct {
	client, server *net.TCPConn
	ks             *kernelSession
	up, down       atomic.Int64
	counts         chan byteCounts
}

type byteCounts struct {
	toBackend, toClient int64
	ok                  bool
}

func newProxied(t *testing.T, k *kernelForwarder) *proxied {
	t.Helper()
	client, in := tcpPair(t)
	out, server := tcpPair(t)
	p := &proxied{client: client, server: server, counts: make(chan byteCounts, 1)}
	ks, err := k.start(in, out, &p.up, &p.down)
	if err != nil {
		t.Fatal(err)
	}
	ks.mark()
	p.ks = ks
	if err := ks.detach(); err != nil {
		t.Fatal(err)
	}
	in.Close()
	out.Close()
	go func() {
		var c byteCounts
		c.toBackend, c.toClient, c.ok = ks.watch()
		p.counts <- c
	}()
	t.Cleanup(func() {
		client.Close()
		server.Close()
		ks.shutdown()
		ks.end()
	})
	return p
}

// sendBothWays writes 3 MB of random bytes from the client and 5 MB from the server at
// once, and returns what each sent and what the server read. The client closes its sending
// half after its bytes; the server closes its own only once it has read the client's end,
// as a PostgreSQL backend ends only after the client's Terminate: a backend's end of
// stream ends the session (as with the copy loops), so a server that half-closed first
// would have the client's bytes still in flight cut off.
func (p *proxied) sendBothWays() (up, down []byte, serverGot <-chan readResult) {
	up, down = make([]byte, 3<<20), make([]byte, 5<<20)
	rand.Read(up)
	rand.Read(down)
	go func() {
		p.client.Write(up)
		p.client.CloseWrite()
	}()
	got := make(chan readResult, 1)
	read := make(chan struct{})
	go func() {
		p.server.SetReadDeadline(time.Now().Add(20 * time.Second))
		b, err := io.ReadAll(p.server)
		close(read)
		got <- readResult{b, err}
	}()
	go func() {
		p.server.Write(down)
		<-read
		p.server.CloseWrite()
	}()
	return up, down, got
}

// readResult is what io.ReadAll returned.
type readResult struct {
	b   []byte
	err error
}

// Bytes cross both ways through the kernel, none through user space, and each side's end
// of stream reaches the other after all its data.
func TestKernelForwarderMovesBothWays(t *testing.T) {
	k := kernelOrSkip(t)
	p := newProxied(t, k)
	up, down, serverGot := p.sendBothWays()
	r := <-serverGot
	if gotUp, err := r.b, r.err; err != nil || !bytes.Equal(gotUp, up) {
		t.Fatalf("server got %d of %d bytes (equal %v), %v; %s", len(gotUp), len(up), bytes.Equal(gotUp, up), err, p.watchSaw())
	}
	gotDown, err := io.ReadAll(p.client)
	if err != nil || !bytes.Equal(gotDown, down) {
		t.Fatalf("client got %d of %d bytes (equal %v), %v", len(gotDown), len(down), bytes.Equal(gotDown, down), err)
	}
	if p.up.Load() != 0 || p.down.Load() != 0 {
		t.Fatalf("the watch moved %d and %d bytes: the kernel did not forward", p.up.Load(), p.down.Load())
	}
	if c := <-p.counts; !c.ok || c.toBackend != int64(len(up)) || c.toClient != int64(len(down)) {
		t.Fatalf("byte counts %d/%d (%v), want %d/%d", c.toBackend, c.toClient, c.ok, len(up), len(down))
	}
}

// A message sent just before the sender closes arrives before the end of stream, every
// time: the copy loop sees the close at once, while the kernel may still hold the message.
func TestKernelForwarderLastMessageBeforeClose(t *testing.T) {
	k := kernelOrSkip(t)
	for i := 0; i < 200; i++ {
		p := newProxied(t, k)
		msg := []byte{'X', 0, 0, 0, 4}
		if i%2 == 1 {
			msg = bytes.Repeat([]byte("query;"), 1000)
		}
		p.client.Write(msg)
		p.client.Close()
		p.server.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(p.server)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("round %d: server got %d of %d bytes before the end of stream, %v", i, len(got), len(msg), err)
		}
		p.server.Write([]byte("fatal error"))
		p.server.Close()
	}
}

// Both ways at once, each receiver reading as data comes (a COPY with notices, a pipeline
// with large results): every byte arrives, each way.
func TestKernelForwarderFullDuplex(t *testing.T) {
	k := kernelOrSkip(t)
	for i := 0; i < 20; i++ {
		p := newProxied(t, k)
		up, down, serverGot := p.sendBothWays()
		p.client.SetReadDeadline(time.Now().Add(20 * time.Second))
		gd, errDown := io.ReadAll(p.client)
		gu := <-serverGot
		if !bytes.Equal(gu.b, up) || !bytes.Equal(gd, down) {
			t.Fatalf("round %d: server got %d of %d bytes (%v), client %d of %d (%v); %s",
				i, len(gu.b), len(up), gu.err, len(gd), len(down), errDown, p.watchSaw())
		}
	}
}

// watchSaw tells what the session's watch saw, for a failing test's message: the byte
// counts it returned and why it ended (or that it has not yet), what it copied itself, and
// how far the client's own socket got sending (what the listener's kernel took from it).
func (p *proxied) watchSaw() string {
	if c, err := tcpInfo(p.client); err == nil {
		clientSent := fmt.Sprintf("; the client's socket sent %d bytes, %d acknowledged", c.sent, c.acked)
		return p.watchEnd() + clientSent
	}
	return p.watchEnd()
}

func (p *proxied) watchEnd() string {
	select {
	case c := <-p.counts:
		p.ks.mu.Lock()
		why := p.ks.why
		p.ks.mu.Unlock()
		return fmt.Sprintf("the watch ended (%s) with %d bytes to the backend, %d to the client (ok %v); copied by the watch %d up, %d down",
			why, c.toBackend, c.toClient, c.ok, p.up.Load(), p.down.Load())
	case <-time.After(5 * time.Second):
		return fmt.Sprintf("the watch still runs; copied by the watch %d up, %d down", p.up.Load(), p.down.Load())
	}
}

// The backend's end of stream ends the session once the client has what preceded it, as
// the copy loops end it: a PostgreSQL backend closes its socket only as it exits, so
// nothing the client sends after can be read, and a client that keeps its side open (an
// idle pooled connection) does not keep the session. (This is why sendBothWays' server
// reads the client's end before it ends its own.)
func TestKernelForwarderBackendEndEndsSession(t *testing.T) {
	k := kernelOrSkip(t)
	p := newProxied(t, k)
	msg := []byte("E\x00\x00\x00\x0bFATAL\x00\x00")
	if _, err := p.server.Write(msg); err != nil {
		t.Fatal(err)
	}
	if err := p.server.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	p.client.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.ReadAll(p.client)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("client got %q before the end (%v), want %q", got, err, msg)
	}
	select {
	case c := <-p.counts:
		if !c.ok || c.toBackend != 0 || c.toClient != int64(len(msg)) {
			t.Fatalf("byte counts %d/%d (%v), want 0/%d", c.toBackend, c.toClient, c.ok, len(msg))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the session was still open 20 s after its backend's end reached the client")
	}
}

// A client that half-closes and then goes away with a reset ends its session at once, as a
// copy loop's failed write would: the backend is not left sending into a socket that is
// gone until the drain gives up.
func TestKernelForwarderClientResetAfterHalfClose(t *testing.T) {
	k := kernelOrSkip(t)
	p := newProxied(t, k)
	if err := p.client.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	p.server.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(p.server); err != nil {
		t.Fatalf("the client's end did not reach the server: %v", err)
	}
	p.client.SetLinger(0)
	p.client.Close() // a reset
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := p.server.Write(buf); err != nil {
				return
			}
		}
	}()
	select {
	case <-p.counts:
	case <-time.After(10 * time.Second):
		t.Fatal("the session was still open 10 s after its client reset")
	}
}

// A message the backend sends just before its connection is reset (a backend ending with
// a FATAL error while the client's next query sits unread in its socket: the kernel
// answers that close with a reset) reaches the client before the session ends, as a copy
// loop reads the message before the reset and writes it on.
func TestKernelForwarderLastMessageBeforeReset(t *testing.T) {
	k := kernelOrSkip(t)
	msg := []byte("E\x00\x00\x00\x0bFATAL\x00\x00")
	for i := 0; i < 200; i++ {
		p := newProxied(t, k)
		if _, err := p.server.Write(msg); err != nil {
			t.Fatal(err)
		}
		p.server.SetLinger(0)
		p.server.Close() // a reset right after the message
		p.client.SetReadDeadline(time.Now().Add(20 * time.Second))
		got := make([]byte, 0, len(msg))
		buf := make([]byte, 64)
		var err error
		for len(got) < len(msg) && err == nil {
			var n int
			n, err = p.client.Read(buf)
			got = append(got, buf[:n]...)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("round %d: client got %q before the end (%v), want %q", i, got, err, msg)
		}
	}
}
