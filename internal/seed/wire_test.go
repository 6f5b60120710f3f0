package seed

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"testing"
)

// TestWireMeterCountsBothWays relays to an echo-and-reply server on 127.0.0.1:0.
func TestWireMeterCountsBothWays(t *testing.T) {
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	payload := make([]byte, 3*wireChunk+12345)
	rand.Read(payload)
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req := make([]byte, 5)
				if _, err := io.ReadFull(c, req); err != nil {
					return
				}
				c.Write(payload)
			}()
		}
	}()
	w, err := newWireMeter(srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", w.Port()))
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("hello"))
		got, err := io.ReadAll(c)
		c.Close()
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("relayed %d bytes (want %d), %v", len(got), len(payload), err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	base, other, up := w.Bytes()
	if base != int64(len(payload)) || other != int64(len(payload)) || up != 10 {
		t.Fatalf("counted %d + %d down, %d up; want %d each, 10", base, other, up, len(payload))
	}
	if err := w.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}
