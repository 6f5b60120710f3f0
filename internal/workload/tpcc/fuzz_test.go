package tpcc

import (
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// FuzzFixedNumeric checks that every Fixed the loader and the transactions can send
// encodes to NUMERIC bytes that decode to the same value.
func FuzzFixedNumeric(f *testing.F) {
	for _, s := range []struct {
		v     int64
		scale int16
	}{{0, 2}, {-1000, 2}, {30000000, 2}, {1, 4}, {9999, 4}, {10000, 0}, {-9223372036854775807, 2}, {123456789, 4}} {
		f.Add(s.v, s.scale)
	}
	m := pgtype.NewMap()
	f.Fuzz(func(t *testing.T, v int64, scale int16) {
		if scale != 0 && scale != 2 && scale != 4 {
			scale = (scale & 1) * 2
		}
		if v == -1<<63 {
			v++
		}
		fx := Fixed{V: v, Scale: scale}
		var got pgtype.Numeric
		if err := m.Scan(pgtype.NumericOID, pgtype.BinaryFormatCode, fx.appendNumeric(nil), &got); err != nil {
			t.Fatalf("%+v: decode: %v", fx, err)
		}
		want := new(big.Rat).SetFrac(big.NewInt(v), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
		gotRat := new(big.Rat).SetInt(got.Int)
		e := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(got.Exp))), nil)
		if got.Exp < 0 {
			gotRat.Quo(gotRat, new(big.Rat).SetInt(e))
		} else {
			gotRat.Mul(gotRat, new(big.Rat).SetInt(e))
		}
		if gotRat.Cmp(want) != 0 {
			t.Fatalf("%+v decodes as %s", fx, gotRat.FloatString(6))
		}
	})
}

// FuzzRawColumns feeds the wire decoders of the transactions' results (integers, float8 and
// timestamps, binary and text) arbitrary bytes: they return a value or an error, never
// panic, and a binary value of the right length decodes as pgx decodes it.
func FuzzRawColumns(f *testing.F) {
	f.Add([]byte{0, 0, 0, 42}, true)
	f.Add([]byte{0x80, 0, 0, 0, 0, 0, 0, 1}, true)
	f.Add([]byte("12345"), false)
	f.Add([]byte("2026-11-24 04:00:00.123456"), false)
	f.Add([]byte{}, true)
	m := pgtype.NewMap()
	f.Fuzz(func(t *testing.T, v []byte, binary bool) {
		format := int16(pgtype.TextFormatCode)
		if binary {
			format = pgtype.BinaryFormatCode
		}
		fds := []pgconn.FieldDescription{{Name: "x", Format: format}}
		r := rawRow{vals: [][]byte{v}, formats: fds}
		n := r.int(0)
		if binary && r.err == nil && len(v) == 8 {
			var want int64
			if err := m.Scan(pgtype.Int8OID, format, v, &want); err != nil || want != n {
				t.Fatalf("int8 %x: %d, pgx %d (%v)", v, n, want, err)
			}
		}
		r = rawRow{vals: [][]byte{v}, formats: fds}
		x := r.float(0)
		if binary && r.err == nil {
			var want float64
			if err := m.Scan(pgtype.Float8OID, format, v, &want); err != nil || (want != x && want == want) {
				t.Fatalf("float8 %x: %v, pgx %v (%v)", v, x, want, err)
			}
		}
		r = rawRow{vals: [][]byte{v}, formats: fds}
		ts := r.time(0)
		if binary && r.err == nil && len(v) == 8 {
			var want time.Time
			if err := m.Scan(pgtype.TimestampOID, format, v, &want); err == nil && !want.Equal(ts) && want.Year() > 1 && want.Year() < 9999 {
				t.Fatalf("timestamp %x: %v, pgx %v", v, ts, want)
			}
		}
	})
}
