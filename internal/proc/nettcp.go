package proc

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
)

// TCPConn is one socket of /proc/<pid>/net/tcp{,6}: its two ends and the kernel's state
// (1 is ESTABLISHED).
type TCPConn struct {
	Local, Remote netip.AddrPort
	State         uint8
}

// tcpEstablished is TCP_ESTABLISHED in the kernel's TCP states (include/net/tcp_states.h).
const tcpEstablished = 1

// HasEstablished says whether the network namespace of process pid (under procRoot) holds
// an established TCP connection from local to remote: a process there is that end of it.
func HasEstablished(procRoot string, pid int, local, remote netip.AddrPort) bool {
	local, remote = unmap(local), unmap(remote)
	for _, file := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "net", file))
		if err != nil {
			continue
		}
		conns, err := ParseTCPConns(data)
		if err != nil {
			continue
		}
		for _, c := range conns {
			if c.State == tcpEstablished && unmap(c.Local) == local && unmap(c.Remote) == remote {
				return true
			}
		}
	}
	return false
}

// unmap turns an IPv4-mapped IPv6 address (a tcp6 socket's view of an IPv4 peer) into IPv4.
func unmap(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// ParseTCPConns parses /proc/net/tcp or tcp6: a header line, then per socket "sl:",
// local_address, rem_address and st, an address being the kernel's 32-bit words in hex in
// host (little-endian) byte order, ":" and the port in hex.
func ParseTCPConns(data []byte) ([]TCPConn, error) {
	var out []TCPConn
	for i, line := range bytes.Split(data, []byte{'\n'}) {
		f := bytes.Fields(line)
		if i == 0 || len(f) == 0 {
			continue
		}
		if len(f) < 4 {
			return nil, fmt.Errorf("net/tcp line %d: %d fields, want at least 4", i+1, len(f))
		}
		local, err := tcpAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("net/tcp line %d local address: %w", i+1, err)
		}
		remote, err := tcpAddr(f[2])
		if err != nil {
			return nil, fmt.Errorf("net/tcp line %d remote address: %w", i+1, err)
		}
		st, err := strconv.ParseUint(string(f[3]), 16, 8)
		if err != nil {
			return nil, fmt.Errorf("net/tcp line %d state %q: %w", i+1, f[3], err)
		}
		out = append(out, TCPConn{Local: local, Remote: remote, State: uint8(st)})
	}
	return out, nil
}

// tcpAddr reads "ADDR:PORT" of net/tcp (8 hex digits) or net/tcp6 (32).
func tcpAddr(w []byte) (netip.AddrPort, error) {
	a, p, ok := bytes.Cut(w, []byte{':'})
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%q has no port", w)
	}
	port, err := strconv.ParseUint(string(p), 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q port: %w", w, err)
	}
	var ip netip.Addr
	switch len(a) {
	case 8:
		b, err := routeWord(a)
		if err != nil {
			return netip.AddrPort{}, err
		}
		ip = netip.AddrFrom4(b)
	case 32:
		var b [16]byte
		for k := 0; k < 4; k++ {
			word, err := routeWord(a[8*k : 8*k+8])
			if err != nil {
				return netip.AddrPort{}, err
			}
			copy(b[4*k:], word[:])
		}
		ip = netip.AddrFrom16(b)
	default:
		return netip.AddrPort{}, fmt.Errorf("%q is not 8 or 32 hex digits", a)
	}
	return netip.AddrPortFrom(ip, uint16(port)), nil
}
