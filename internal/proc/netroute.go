package proc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"net/netip"
	"os"
)

// Route is one IPv4 route of /proc/net/route: the interface and the destination prefix.
type Route struct {
	Iface string
	Dest  netip.Prefix
}

// IPv4Routes reads /proc/net/route (the main table of the reader's network namespace).
func (f FS) IPv4Routes() ([]Route, error) {
	data, err := os.ReadFile(f.Proc("net", "route"))
	if err != nil {
		return nil, err
	}
	return ParseIPv4Routes(data)
}

// ParseIPv4Routes parses /proc/net/route: a header line, then per route the interface and
// at least eight fields, of which Destination (2nd) and Mask (8th) are the kernel's 32-bit
// words in hex, in host (little-endian) byte order. A mask that is not a prefix is an error.
func ParseIPv4Routes(data []byte) ([]Route, error) {
	var out []Route
	for i, line := range bytes.Split(data, []byte{'\n'}) {
		f := bytes.Fields(line)
		if i == 0 || len(f) == 0 {
			continue
		}
		if len(f) < 8 {
			return nil, fmt.Errorf("net/route line %d: %d fields, want at least 8", i+1, len(f))
		}
		dest, err := routeWord(f[1])
		if err != nil {
			return nil, fmt.Errorf("net/route line %d destination: %w", i+1, err)
		}
		mask, err := routeWord(f[7])
		if err != nil {
			return nil, fmt.Errorf("net/route line %d mask: %w", i+1, err)
		}
		m := binary.BigEndian.Uint32(mask[:])
		ones := bits.LeadingZeros32(^m)
		if ones < 32 && m<<ones != 0 {
			return nil, fmt.Errorf("net/route line %d: mask %s is not a prefix", i+1, f[7])
		}
		p, err := netip.AddrFrom4(dest).Prefix(ones)
		if err != nil {
			return nil, fmt.Errorf("net/route line %d: %w", i+1, err)
		}
		out = append(out, Route{Iface: string(f[0]), Dest: p})
	}
	return out, nil
}

// routeWord reads one of net/route's 8-digit hex words (host byte order, little-endian on
// every machine agbench runs on) as the 4 bytes of an address in network order.
func routeWord(w []byte) ([4]byte, error) {
	var b [4]byte
	if len(w) != 8 {
		return b, fmt.Errorf("%q is not 8 hex digits", w)
	}
	if _, err := hex.Decode(b[:], w); err != nil {
		return b, fmt.Errorf("%q: %w", w, err)
	}
	return [4]byte{b[3], b[2], b[1], b[0]}, nil
}
