package tpcc

import (
	"math/big"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

func TestFixedEncodesAsNumeric(t *testing.T) {
	m := pgtype.NewMap()
	values := []Fixed{{0, 2}, {1, 2}, {-1000, 2}, {30000000, 2}, {5000000, 2}, {999999, 2}, {10000, 2}, {100, 2},
		{0, 4}, {2000, 4}, {1, 4}, {5000, 4}, {123456789012, 2}, {-99999999, 4}, {7, 0}, {10000, 0}, {-120000, 0}}
	g := NewRand(1, 2)
	for i := 0; i < 2000; i++ {
		values = append(values, Fixed{int64(g.Int(-1<<30, 1<<30)) * int64(g.Int(1, 1000)), int16(g.Int(0, 2) * 2)})
	}
	for _, f := range values {
		b := f.appendNumeric(nil)
		var got pgtype.Numeric
		if err := m.Scan(pgtype.NumericOID, pgtype.BinaryFormatCode, b, &got); err != nil {
			t.Fatalf("%+v: decode: %v", f, err)
		}
		want := new(big.Rat).SetFrac(big.NewInt(f.V), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(f.Scale)), nil))
		exp := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(got.Exp))), nil)
		gotRat := new(big.Rat).SetInt(got.Int)
		if got.Exp < 0 {
			gotRat.Quo(gotRat, new(big.Rat).SetInt(exp))
		} else {
			gotRat.Mul(gotRat, new(big.Rat).SetInt(exp))
		}
		if gotRat.Cmp(want) != 0 {
			t.Fatalf("%+v encodes as %s, want %s", f, gotRat.FloatString(4), want.FloatString(4))
		}
	}
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}
