package tpcc

import (
	"math/big"
	"testing"

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
