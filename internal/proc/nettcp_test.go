package proc

import (
	"net/netip"
	"testing"
)

func TestParseTCPConns(t *testing.T) {
	data := []byte("  sl  local_address rem_address   st tx_queue\n" +
		"   0: 020DD50A:1538 010DD50A:D2F0 01 00000000:00000000 00:00000000\n" +
		"   1: 0000000000000000FFFF0000020DD50A:1538 0000000000000000FFFF0000010DD50A:9C40 0A 0\n")
	got, err := ParseTCPConns(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []TCPConn{
		{netip.MustParseAddrPort("10.213.13.2:5432"), netip.MustParseAddrPort("10.213.13.1:54000"), 1},
		{netip.MustParseAddrPort("[::ffff:10.213.13.2]:5432"), netip.MustParseAddrPort("[::ffff:10.213.13.1]:40000"), 10},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if _, err := ParseTCPConns([]byte("h\n 0: 0100007F 0100007F:1 01\n")); err == nil {
		t.Error("an address without a port parsed")
	}
}
