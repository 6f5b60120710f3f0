package listener

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"sync/atomic"
	"testing"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t testing.TB) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ch := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		ch <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-ch
	if b == nil {
		t.Fatal("accept failed")
	}
	return a.(*net.TCPConn), b.(*net.TCPConn)
}

func TestCopyConnMovesEverything(t *testing.T) {
	// client -> (in) copyConn (out) -> sink, with 5 MB so that writes fill the socket buffers.
	client, in := tcpPair(t)
	out, sink := tcpPair(t)
	defer client.Close()
	defer sink.Close()
	data := make([]byte, 5<<20)
	_, _ = rand.Read(data)
	done := make(chan error, 1)
	var copied int64
	var moved atomic.Int64
	go func() {
		var err error
		copied, err = copyConn(out, in, &moved)
		out.CloseWrite()
		done <- err
	}()
	go func() {
		_, _ = client.Write(data)
		client.CloseWrite()
	}()
	got, err := io.ReadAll(sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("copyConn: %v", err)
	}
	if !bytes.Equal(got, data) || copied != int64(len(data)) || moved.Load() != copied {
		t.Fatalf("copied %d bytes (counted %d), received %d, equal %v", copied, moved.Load(), len(got), bytes.Equal(got, data))
	}
}

// BenchmarkCopyConnRoundTrip measures one small request and answer through two copyConn
// directions, as a query through the listener: go test -bench CopyConn -benchmem.
func BenchmarkCopyConnRoundTrip(b *testing.B) {
	client, pin := tcpPair(b)
	pout, server := tcpPair(b)
	defer client.Close()
	defer server.Close()
	var up, down atomic.Int64
	go copyConn(pout, pin, &up)
	go copyConn(pin, pout, &down)
	go func() { // echo server
		buf := make([]byte, 512)
		for {
			n, err := server.Read(buf)
			if err != nil {
				return
			}
			if _, err := server.Write(buf[:n]); err != nil {
				return
			}
		}
	}()
	msg := make([]byte, 100)
	buf := make([]byte, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := client.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(client, buf); err != nil {
			b.Fatal(err)
		}
	}
}
