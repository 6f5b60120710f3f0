package listener

import (
	"bytes"
	"crypto/rand"
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
// and the listener's copy loops parked on both, as forward runs them.
type proxied struct {
	client, server *net.TCPConn
	ks             *kernelSession
	up, down       atomic.Int64
	upDone         chan error
	downDone       chan error
}

func newProxied(t *testing.T, k *kernelForwarder) *proxied {
	t.Helper()
	client, in := tcpPair(t)
	out, server := tcpPair(t)
	p := &proxied{client: client, server: server, upDone: make(chan error, 1), downDone: make(chan error, 1)}
	ks, err := k.start(in, out, &p.up, &p.down)
	if err != nil {
		t.Fatal(err)
	}
	ks.mark()
	p.ks = ks
	go func() {
		_, err := copyConn(out, in, &p.up)
		ks.drained(true, err == nil, kernelDrainStall)
		out.CloseWrite()
		p.upDone <- err
	}()
	go func() {
		_, err := copyConn(in, out, &p.down)
		ks.drained(false, err == nil, kernelDrainStall)
		in.CloseWrite()
		p.downDone <- err
	}()
	t.Cleanup(func() {
		client.Close()
		server.Close()
		in.Close()
		out.Close()
		ks.end()
	})
	return p
}

// Bytes cross both ways through the kernel, none through the copy loops, and each side's
// end of stream reaches the other after all its data.
func TestKernelForwarderMovesBothWays(t *testing.T) {
	k := kernelOrSkip(t)
	p := newProxied(t, k)
	up := make([]byte, 3<<20)
	down := make([]byte, 5<<20)
	rand.Read(up)
	rand.Read(down)
	go func() {
		p.client.Write(up)
		p.client.CloseWrite()
	}()
	go func() {
		p.server.Write(down)
		p.server.CloseWrite()
	}()
	gotUp, err := io.ReadAll(p.server)
	if err != nil || !bytes.Equal(gotUp, up) {
		t.Fatalf("server got %d of %d bytes (equal %v), %v", len(gotUp), len(up), bytes.Equal(gotUp, up), err)
	}
	gotDown, err := io.ReadAll(p.client)
	if err != nil || !bytes.Equal(gotDown, down) {
		t.Fatalf("client got %d of %d bytes (equal %v), %v", len(gotDown), len(down), bytes.Equal(gotDown, down), err)
	}
	if err := <-p.upDone; err != nil {
		t.Fatal(err)
	}
	if err := <-p.downDone; err != nil {
		t.Fatal(err)
	}
	if p.up.Load() != 0 || p.down.Load() != 0 {
		t.Fatalf("the copy loops moved %d and %d bytes: the kernel did not forward", p.up.Load(), p.down.Load())
	}
	toBackend, toClient, ok := p.ks.bytes(true)
	if !ok || toBackend != int64(len(up)) || toClient != int64(len(down)) {
		t.Fatalf("byte counts %d/%d (%v), want %d/%d", toBackend, toClient, ok, len(up), len(down))
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
