package tpcc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// NewOrderLine is one line of New-Order's output (clause 2.4.3.3).
type NewOrderLine struct {
	ItemID, SupplyW, Quantity int
	Name                      []byte // I_NAME (the slice is reused by the session's next New-Order)
	Price                     int64  // I_PRICE in cents
	Amount                    int64  // OL_AMOUNT in cents: OL_QUANTITY × I_PRICE
	Stock                     int    // S_QUANTITY after this order's update
	BrandGeneric              byte   // 'B' when I_DATA and S_DATA both contain "ORIGINAL", else 'G' (clause 2.4.2.2)
}

// NewOrderOutput is what New-Order returns to the terminal (clause 2.4.3.3). A session keeps
// one and reuses it, so that the hot path does not allocate for it.
type NewOrderOutput struct {
	// W, D and C are the order's warehouse, district and customer (its inputs).
	W, D, C          int
	OrderID          int
	CLast, CCredit   string
	CDiscount        float64
	WTax, DTax       float64
	EntryD           time.Time
	Lines            []NewOrderLine
	Total            float64 // sum(OL_AMOUNT) × (1 − C_DISCOUNT) × (1 + W_TAX + D_TAX), in currency units
	RolledBack       bool    // the unused item rolled the order back: "Item number is not valid"
	names, idata     [MaxOLCnt][]byte
	dist             []string
	ids, supply, qty []int32
	amounts          []int64
}

// reset makes o ready for an order of n lines, keeping its buffers.
func (o *NewOrderOutput) reset(in NewOrderInput) {
	o.W, o.D, o.C = in.W, in.D, in.C
	o.OrderID, o.CLast, o.CCredit, o.CDiscount, o.WTax, o.DTax, o.Total, o.RolledBack = 0, "", "", 0, 0, 0, 0, false
	o.EntryD = time.Time{}
	o.Lines = o.Lines[:0]
	for i, it := range in.Items {
		o.Lines = append(o.Lines, NewOrderLine{ItemID: it.ID, SupplyW: it.SupplyW, Quantity: it.Quantity, Name: o.names[i][:0]})
	}
}

// total sets Total from the lines' amounts, the customer's discount and the taxes (clause
// 2.4.2.2), in both modes.
func (o *NewOrderOutput) total() {
	var sum int64
	for _, l := range o.Lines {
		sum += l.Amount
	}
	o.Total = float64(sum) / 100 * (1 - o.CDiscount) * (1 + o.WTax + o.DTax)
}

// Address is a street address as the tables hold it.
type Address struct {
	Street1, Street2, City, State, Zip []byte
}

// PaymentOutput is what Payment returns to the terminal (clause 2.5.3.3). A session keeps one
// and reuses it: the byte slices are overwritten by its next Payment.
type PaymentOutput struct {
	Date                   time.Time // H_DATE
	W, D                   int
	WAddr, DAddr           Address
	CustomerID, CW, CD     int
	CFirst, CMiddle, CLast []byte
	CAddr                  Address
	CPhone                 []byte
	CSince                 time.Time
	CCredit                []byte // "GC" or "BC"
	CCreditLim             float64
	CDiscount              float64
	CBalance               float64 // after the payment
	Amount                 float64 // H_AMOUNT
	CData                  []byte  // the first 200 characters of C_DATA when C_CREDIT is "BC", else empty
}

// OrderStatusLine is one line of Order-Status's output (clause 2.6.3.3).
type OrderStatusLine struct {
	ItemID, SupplyW, Quantity int
	Amount                    int64 // OL_AMOUNT in cents
	DeliveryD                 *time.Time
}

// OrderStatusOutput is what Order-Status returns (clause 2.6.3.3). OrderID is 0 when the
// customer has no order.
type OrderStatusOutput struct {
	CustomerID             int
	CFirst, CMiddle, CLast string
	CBalance               float64
	OrderID                int
	EntryD                 time.Time
	Carrier                *int // NULL until delivered
	Lines                  []OrderStatusLine
}

// Raw column decoding for the hot path: the values as the server sent them (binary for the
// types below in pgx's extended protocol; text when a connection uses the simple protocol).

func rawInt(v []byte, format int16) (int64, error) {
	if format == pgtype.BinaryFormatCode {
		switch len(v) {
		case 2:
			return int64(int16(binary.BigEndian.Uint16(v))), nil
		case 4:
			return int64(int32(binary.BigEndian.Uint32(v))), nil
		case 8:
			return int64(binary.BigEndian.Uint64(v)), nil
		}
		return 0, fmt.Errorf("an integer of %d bytes", len(v))
	}
	return strconv.ParseInt(string(v), 10, 64)
}

func rawFloat(v []byte, format int16) (float64, error) {
	if format == pgtype.BinaryFormatCode {
		if len(v) != 8 {
			return 0, fmt.Errorf("a float8 of %d bytes", len(v))
		}
		return math.Float64frombits(binary.BigEndian.Uint64(v)), nil
	}
	return strconv.ParseFloat(string(v), 64)
}

// rawRow decodes the columns of one row as sent; the first error sticks in err.
type rawRow struct {
	vals    [][]byte
	formats []pgconn.FieldDescription
	err     error
}

func (r *rawRow) int(i int) int64 {
	if r.err != nil {
		return 0
	}
	n, err := rawInt(r.vals[i], r.formats[i].Format)
	if err != nil {
		r.err = fmt.Errorf("column %s: %w", r.formats[i].Name, err)
	}
	return n
}

func (r *rawRow) float(i int) float64 {
	if r.err != nil {
		return 0
	}
	f, err := rawFloat(r.vals[i], r.formats[i].Format)
	if err != nil {
		r.err = fmt.Errorf("column %s: %w", r.formats[i].Name, err)
	}
	return f
}

// bytes copies column i into *dst, reusing its storage (NULL: empty).
func (r *rawRow) bytes(dst *[]byte, i int) {
	*dst = append((*dst)[:0], r.vals[i]...)
}

// address copies the five columns from i on (street 1 and 2, city, state, zip) into a.
func (r *rawRow) address(a *Address, i int) {
	r.bytes(&a.Street1, i)
	r.bytes(&a.Street2, i+1)
	r.bytes(&a.City, i+2)
	r.bytes(&a.State, i+3)
	r.bytes(&a.Zip, i+4)
}

// brandGeneric is clause 2.4.2.2's flag.
func brandGeneric(iData, sData []byte) byte {
	if containsOriginal(iData) && containsOriginal(sData) {
		return 'B'
	}
	return 'G'
}

var originalBytes = []byte("ORIGINAL")

func containsOriginal(b []byte) bool { return bytes.Contains(b, originalBytes) }

// pgEpochMicros is PostgreSQL's zero timestamp (2000-01-01) in Unix microseconds; binary
// timestamps count microseconds from it.
var pgEpochMicros = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

// time decodes a timestamp without time zone; NULL is the zero time.
func (r *rawRow) time(i int) time.Time {
	v := r.vals[i]
	if r.err != nil || v == nil {
		return time.Time{}
	}
	if r.formats[i].Format == pgtype.BinaryFormatCode && len(v) == 8 {
		return time.UnixMicro(pgEpochMicros + int64(binary.BigEndian.Uint64(v))).UTC()
	}
	t, err := time.Parse("2006-01-02 15:04:05.999999", string(v))
	if err != nil {
		r.err = fmt.Errorf("column %s: %w", r.formats[i].Name, err)
	}
	return t
}
