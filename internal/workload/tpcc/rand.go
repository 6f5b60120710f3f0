package tpcc

import (
	"math/rand/v2"
	"slices"
	"strconv"
)

// Rand is the workload's source of randomness: every value of the data and of the
// transactions' inputs comes from a Rand derived from --seed and a stream number, so that a
// run is reproducible. A Rand is not safe for concurrent use; each loader and VU has its own.
type Rand struct {
	r *rand.Rand
}

// NewRand returns the generator for one stream of one seed.
func NewRand(seed uint64, stream uint64) *Rand {
	return &Rand{r: rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))}
}

// Int returns a uniform integer in [lo, hi], the specification's random(x..y) (clause 2.1.4).
func (g *Rand) Int(lo, hi int) int {
	return lo + g.r.IntN(hi-lo+1)
}

// Cents returns a uniform amount in [lo, hi] hundredths, the spec's fixed-point random values.
func (g *Rand) Cents(lo, hi int) int64 { return int64(g.Int(lo, hi)) }

// NURand is the non-uniform random function of clause 2.1.6:
// (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func (g *Rand) NURand(a, c, x, y int) int {
	return (((g.Int(0, a) | g.Int(x, y)) + c) % (y - x + 1)) + x
}

// Percent reports true with probability p/100.
func (g *Rand) Percent(p int) bool { return g.r.IntN(100) < p }

// Shuffle permutes n elements with swap.
func (g *Rand) Shuffle(n int, swap func(i, j int)) { g.r.Shuffle(n, swap) }

// alnum is the alphabet of the a-strings: 64 symbols, so that six random bits pick one without
// bias. Clause 4.3.2.2 asks for a character set able to represent 128 characters; the values
// drawn from it may be any of them.
const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"

// AString appends a random a-string (clause 4.3.2.2) of random length in [lo, hi] to b.
func (g *Rand) AString(b []byte, lo, hi int) []byte {
	n := g.Int(lo, hi)
	b = slices.Grow(b, n)
	for n > 0 {
		v := g.r.Uint64() // ten symbols of six bits each
		k := min(n, 10)
		for j := 0; j < k; j++ {
			b = append(b, alnum[v&63])
			v >>= 6
		}
		n -= k
	}
	return b
}

// NString appends a random n-string (digits) of random length in [lo, hi] to b.
func (g *Rand) NString(b []byte, lo, hi int) []byte {
	n := g.Int(lo, hi)
	for i := 0; i < n; i++ {
		b = append(b, '0'+byte(g.r.IntN(10)))
	}
	return b
}

// LString appends n random upper-case letters (the state codes of clause 4.3.3.1).
func (g *Rand) LString(b []byte, n int) []byte {
	for i := 0; i < n; i++ {
		b = append(b, 'A'+byte(g.r.IntN(26)))
	}
	return b
}

// Zip appends a zip code: a random n-string of 4 digits followed by "11111" (clause 4.3.2.7).
func (g *Rand) Zip(b []byte) []byte {
	b = g.NString(b, 4, 4)
	return append(b, "11111"...)
}

// original is the marker that 10% of items and stock carry in their data (clause 4.3.3.1).
const original = "ORIGINAL"

// Data appends an a-string of [lo, hi] characters; with probability 10% the string "ORIGINAL"
// replaces characters at a random position (clause 4.3.3.1, I_DATA and S_DATA).
func (g *Rand) Data(b []byte, lo, hi int) []byte {
	start := len(b)
	b = g.AString(b, lo, hi)
	if g.Percent(10) {
		n := len(b) - start
		pos := start + g.Int(0, n-len(original))
		copy(b[pos:], original)
	}
	return b
}

// syllables are the ten syllables of customer last names (clause 4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// LastName appends the last name of number n in [0, 999]: the syllables of its three digits.
func LastName(b []byte, n int) []byte {
	b = append(b, syllables[n/100]...)
	b = append(b, syllables[n/10%10]...)
	return append(b, syllables[n%10]...)
}

// Permutation returns a random permutation of 1..n (used for the initial orders' customers).
func (g *Rand) Permutation(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i + 1
	}
	g.r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// Constants are the run-time constants C of NURand (clause 2.1.6): one for C_LAST, one for
// C_ID and one for OL_I_ID.
type Constants struct {
	CLast int `json:"c_last"`
	CID   int `json:"c_id"`
	OLIID int `json:"ol_i_id"`
}

// NewConstants draws the constants used by the load.
func NewConstants(g *Rand) Constants {
	return Constants{CLast: g.Int(0, 255), CID: g.Int(0, 1023), OLIID: g.Int(0, 8191)}
}

// RunConstants draws the constants for a run from those of the load, following clause
// 2.1.6.1: C_ID and OL_I_ID are drawn afresh; C_LAST so that the difference to the load's
// value, delta = |C_run - C_load|, lies in [65, 119] and is neither 96 nor 112.
func RunConstants(g *Rand, load Constants) Constants {
	c := Constants{CID: g.Int(0, 1023), OLIID: g.Int(0, 8191)}
	for {
		v := g.Int(0, 255)
		if ValidCLastDelta(v, load.CLast) {
			c.CLast = v
			return c
		}
	}
}

// ValidCLastDelta reports whether run and load values of C_LAST obey clause 2.1.6.1.
func ValidCLastDelta(run, load int) bool {
	d := run - load
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

func itoa(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }
