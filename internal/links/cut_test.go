package links

import (
	"bufio"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// A relay on a free port forwards; cut, it drops every byte and keeps the connection open;
// healed, the connection that lived through the cut is closed and a new one forwards again.
func TestRelayCutAndHeal(t *testing.T) {
	r, err := StartRelays([]Link{{Name: "n1", Listen: "127.0.0.1:0", Upstream: echo(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	addr := r.Addr("n1")
	if _, port, _ := net.SplitHostPort(addr); port == "0" || port == "" {
		t.Fatalf("relay address %q: want the port it got", addr)
	}
	roundTrips(t, addr, 3)

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := r.Cut("n1"); err != nil || !r.IsCut("n1") {
		t.Fatalf("cut: %v, cut %v", err, r.IsCut("n1"))
	}
	if err := r.Cut("n1"); err != nil {
		t.Fatalf("a second cut: %v", err)
	}
	if _, err := c.Write([]byte("lost\n")); err != nil {
		t.Fatalf("write through a cut relay: %v; want it accepted and dropped", err)
	}
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if line, err := bufio.NewReader(c).ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read through a cut relay: %q, %v; want silence", line, err)
	}

	if err := r.Heal("n1"); err != nil || r.IsCut("n1") {
		t.Fatalf("heal: %v, cut %v", err, r.IsCut("n1"))
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Read(make([]byte, 16)); err == nil {
		t.Fatal("the connection that lived through the cut still reads after the heal; want it closed")
	}
	roundTrips(t, addr, 3)
	if err := r.Heal("n1"); err != nil {
		t.Fatalf("heal of a relay not cut: %v", err)
	}
	if err := r.Cut("nope"); err == nil {
		t.Fatal("cut of no relay succeeded")
	}
}
