package tpcc

import (
	"encoding/binary"
	"math/big"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Fixed is a fixed-point number, V * 10^-Scale: the money and rates of the schema. It encodes
// straight to NUMERIC's binary form, without pgx's general big.Int path, which otherwise
// dominates the loader's CPU.
type Fixed struct {
	V     int64
	Scale int16 // 0, 2 or 4
}

// Cents returns v * 10^-scale as a Fixed.
func Cents(v int64, scale int16) Fixed { return Fixed{V: v, Scale: scale} }

// NumericValue lets pgx encode a Fixed on connections without the fast codec.
func (f Fixed) NumericValue() (pgtype.Numeric, error) {
	return pgtype.Numeric{Int: big.NewInt(f.V), Exp: -int32(f.Scale), Valid: true}, nil
}

var pow10 = [...]int64{1, 10, 100, 1000, 10000}

// appendNumeric appends f in NUMERIC's binary wire format: ndigits, weight, sign and dscale,
// then base-10000 digits, without leading or trailing zero digits.
func (f Fixed) appendNumeric(buf []byte) []byte {
	abs := f.V
	sign := uint16(0)
	if abs < 0 {
		abs, sign = -abs, 0x4000
	}
	scale := int(f.Scale)
	whole, frac := abs/pow10[scale], abs%pow10[scale]
	var digits [8]int16
	n := 0
	var intDigits [6]int16
	ni := 0
	for w := whole; w > 0; w /= 10000 {
		intDigits[ni] = int16(w % 10000)
		ni++
	}
	for i := ni - 1; i >= 0; i-- {
		digits[n] = intDigits[i]
		n++
	}
	weight := ni - 1
	if scale > 0 {
		digits[n] = int16(frac * pow10[4-scale])
		n++
	}
	// Strip leading zero digits (whole == 0 leaves weight -1 and the fraction first).
	start := 0
	for start < n && digits[start] == 0 {
		start++
		weight--
	}
	for n > start && digits[n-1] == 0 {
		n--
	}
	if start == n {
		weight = 0
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(n-start))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(scale))
	for _, d := range digits[start:n] {
		buf = binary.BigEndian.AppendUint16(buf, uint16(d))
	}
	return buf
}

// fixedCodec is pgx's NumericCodec with a fast binary encoder for Fixed.
type fixedCodec struct{ pgtype.NumericCodec }

type encodeFixed struct{}

func (encodeFixed) Encode(value any, buf []byte) ([]byte, error) {
	return value.(Fixed).appendNumeric(buf), nil
}

func (c fixedCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(Fixed); ok && format == pgtype.BinaryFormatCode {
		return encodeFixed{}
	}
	return c.NumericCodec.PlanEncode(m, oid, format, value)
}

// RegisterTypes installs the fast NUMERIC encoder on a connection (use in AfterConnect).
func RegisterTypes(conn *pgx.Conn) {
	conn.TypeMap().RegisterType(&pgtype.Type{Name: "numeric", OID: pgtype.NumericOID, Codec: fixedCodec{}})
}
