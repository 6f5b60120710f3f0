package diskio

import (
	"testing"
	"time"
)

func TestHeaderRoundTrip(t *testing.T) {
	b := make([]byte, HeaderSize)
	encodeHeader(b, 1<<30, time.Unix(1, 0))
	if !validHeader(b) {
		t.Fatal("own header not recognised")
	}
	b[len(headerMagic)+3] ^= 1 // a flipped bit in the size
	if validHeader(b) {
		t.Fatal("damaged header accepted")
	}
	if validHeader(b[:100]) {
		t.Fatal("short header accepted")
	}
}

// Any first block of a file that agbench did not write must not pass for a test file.
func FuzzValidHeader(f *testing.F) {
	own := make([]byte, HeaderSize)
	encodeHeader(own, 4096, time.Unix(0, 0))
	f.Add(own)
	f.Add([]byte("agbench disk test file v1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if validHeader(b) && len(b) < HeaderSize {
			t.Fatal("accepted a short header")
		}
	})
}
