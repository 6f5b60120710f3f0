package diskio

import (
	"encoding/binary"
	"hash/crc32"

	"golang.org/x/sys/unix"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// alignedBuffer maps n bytes of anonymous memory: page-aligned, as O_DIRECT needs, and
// outside the Go heap, so the kernel may hold its address while an IO is in flight.
func alignedBuffer(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_POPULATE)
}

func freeBuffer(b []byte) {
	if b != nil {
		unix.Munmap(b)
	}
}

// rand is xorshift64*: fast, seedable, and plenty for offsets and incompressible data.
type rand struct{ s uint64 }

func newRand(seed uint64) rand {
	// splitmix64 spreads nearby seeds (one per worker) apart.
	seed += 0x9e3779b97f4a7c15
	z := seed
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	if z == 0 {
		z = 1
	}
	return rand{z}
}

func (r *rand) next() uint64 {
	r.s ^= r.s >> 12
	r.s ^= r.s << 25
	r.s ^= r.s >> 27
	return r.s * 2685821657736338717
}

// below returns a number in [0, n) (n > 0).
func (r *rand) below(n uint64) uint64 {
	if n&(n-1) == 0 {
		return r.next() & (n - 1)
	}
	return r.next() % n
}

func fillRandom(b []byte, r *rand) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.next())
	}
	for ; i < len(b); i++ {
		b[i] = byte(r.next())
	}
}
