package links

import (
	"bufio"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
)

// echo serves lines back on a loopback port until the test ends.
func echo(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// startLink starts a link named n1 to upstream on a free loopback port (port 0: the port is
// the listener's from the start, never one found free and bound later, which another
// process can take in between) and returns it and its address.
func startLink(t testing.TB, upstream string, shape Shape) (*Server, string) {
	t.Helper()
	s, err := Start([]Link{{Name: "n1", Listen: "127.0.0.1:0", Upstream: upstream}}, shape)
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr("n1")
	if _, port, _ := net.SplitHostPort(addr); port == "0" || port == "" {
		s.Close()
		t.Fatalf("link address %q: want the port it got", addr)
	}
	return s, addr
}

// roundTrips sends n lines through addr and returns the mean time per round trip.
func roundTrips(t testing.TB, addr string, n int) time.Duration {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	start := time.Now()
	for range n {
		if _, err := c.Write([]byte("ping\n")); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil || line != "ping\n" {
			t.Fatalf("%q %v", line, err)
		}
	}
	return time.Since(start) / time.Duration(n)
}

func TestLinkAddsItsLatencyToEveryRoundTrip(t *testing.T) {
	const latency = 3 * time.Millisecond
	s, addr := startLink(t, echo(t), Shape{Latency: latency})
	defer s.Close()
	// A delay is never shorter than asked, however busy the machine.
	if rt := roundTrips(t, addr, 20); rt < latency {
		t.Fatalf("round trip %v through a %v link", rt, latency)
	}
	s.Close()
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatal("a closed link still accepts connections")
	}
}

func TestLinkOnATakenAddressFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if s, err := Start([]Link{{Name: "n1", Listen: l.Addr().String(), Upstream: echo(t)}}, Shape{Latency: time.Millisecond}); err == nil {
		s.Close()
		t.Fatal("a link started on a taken address")
	}
}

// A link with a bandwidth carries no more than it in each direction: sending a block both
// ways through an echo takes at least the block's size over the bandwidth each way, however
// busy the machine (a loaded machine can only make it slower).
func TestLinkHoldsItsBandwidth(t *testing.T) {
	const bandwidth, size = 200_000, 100_000 // 0.5 s each way
	s, addr := startLink(t, echo(t), Shape{Bandwidth: bandwidth})
	defer s.Close()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	block := []byte(strings.Repeat(strings.Repeat("x", 99)+"\n", size/100))
	start := time.Now()
	go c.Write(block)
	got := 0
	buf := make([]byte, 64<<10)
	for got < size {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	// Each direction's toxic lets through the rate's worth per second, less the 100 ms it
	// may pass at once.
	if took, least := time.Since(start), time.Duration(float64(size)/bandwidth*float64(time.Second))-100*time.Millisecond; took < least {
		t.Fatalf("%d bytes each way in %v through a %d B/s link: want at least %v", size, took, bandwidth, least)
	}
}

func TestParseBandwidth(t *testing.T) {
	for in, want := range map[string]int64{"10M": 10 << 20, "512K/s": 512 << 10, "1.5M": 3 << 19, "1000": 1000} {
		if n, err := ParseBandwidth("--link-bandwidth", in); err != nil || n != want {
			t.Errorf("%s: %v %v", in, n, err)
		}
	}
	for _, bad := range []string{"", "0", "999", "-1M", "fast", "1M/h"} {
		if _, err := ParseBandwidth("--link-bandwidth", bad); !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "--link-bandwidth") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzParseBandwidth(f *testing.F) {
	f.Add("10M")
	f.Add("1.5K/s")
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseBandwidth("--link-bandwidth", s); err == nil && n < MinBandwidth {
			t.Fatalf("%q: %d accepted", s, n)
		}
	})
}

func TestParseLatency(t *testing.T) {
	for in, want := range map[string]time.Duration{"0.5ms": 500 * time.Microsecond, "500us": 500 * time.Microsecond, "2ms": 2 * time.Millisecond} {
		if d, err := ParseLatency(in); err != nil || d != want {
			t.Errorf("%s: %v %v", in, d, err)
		}
	}
	for _, bad := range []string{"", "0", "-1ms", "1h", "fast", "100ns"} {
		if _, err := ParseLatency(bad); !agerr.IsBadInput(err) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzParseLatency(f *testing.F) {
	f.Add("0.5ms")
	f.Add("1h")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseLatency(s)
		if err == nil && (d < time.Microsecond || d > MaxLatency) {
			t.Fatalf("%q: %v accepted", s, d)
		}
		if err != nil && !strings.Contains(err.Error(), "--link-latency") {
			t.Fatalf("%q: %v", s, err)
		}
	})
}

// BenchmarkRelay measures what a link itself costs per round trip: wall time and this
// process's CPU (the relay runs in it), direct and through a link without latency.
func BenchmarkRelay(b *testing.B) {
	up := echo(b)
	for _, via := range []string{"direct", "link"} {
		b.Run(via, func(b *testing.B) {
			addr := up
			if via == "link" {
				s, a := startLink(b, up, Shape{Latency: time.Microsecond})
				defer s.Close()
				addr = a
			}
			var r0, r1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
			b.ResetTimer()
			roundTrips(b, addr, b.N)
			b.StopTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
			cpu := time.Duration(r1.Utime.Nano()+r1.Stime.Nano()-r0.Utime.Nano()-r0.Stime.Nano()) / time.Duration(b.N)
			b.ReportMetric(float64(cpu.Microseconds()), "cpu-µs/roundtrip")
		})
	}
}
