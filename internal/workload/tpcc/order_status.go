package tpcc

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// orderStatusByName is Order-Status's read for a customer chosen by last name: the one at
// position ceil(n/2) of those of that name sorted by first name (clause 2.6.2.2), picked
// in the same statement.
// orderStatusOwn, by id, also reads the customer's c_payment_cnt (Workload.OwnWrites).
var (
	orderStatusByID   = orderStatusQuery("$1", "$2", "$3", "")
	orderStatusOwn    = orderStatusQuery("$1", "$2", "$3", ", cu.c_payment_cnt")
	orderStatusByName = `WITH pick AS MATERIALIZED (SELECT c_id AS id FROM (SELECT c_id, row_number() OVER (ORDER BY c_first) AS r,
		count(*) OVER () AS n FROM tpcc.customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3) x WHERE r = (n + 1) / 2) ` +
		orderStatusQuery("$1", "$2", "(SELECT id FROM pick)", "")
)

// orderStatus runs clause 2.6.2 (read-only) and leaves the output of clause 2.6.3.3 in
// s.OS. Client mode sends one statement (its own transaction, allowed on a hot standby).
// With own, the customer is by id and its c_payment_cnt is left in s.seenCount.
func (s *Session) orderStatus(ctx context.Context, c *pgx.Conn, in OrderStatusInput, own bool) error {
	var rows pgx.Rows
	var err error
	s.stmts++
	switch {
	case s.Mode == ModeFunctions:
		rows, err = c.Query(ctx, `SELECT * FROM tpcc.ostat($1, $2, $3, $4)`, in.W, in.D, in.C, nullString(in.CLast))
	case own:
		rows, err = c.Query(ctx, orderStatusOwn, in.W, in.D, in.C)
	case in.CLast != "":
		rows, err = c.Query(ctx, orderStatusByName, in.W, in.D, in.CLast)
	default:
		rows, err = c.Query(ctx, orderStatusByID, in.W, in.D, in.C)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	o := &s.OS
	*o = OrderStatusOutput{Lines: o.Lines[:0]}
	n := 0
	for rows.Next() {
		r := rawRow{vals: rows.RawValues(), formats: rows.FieldDescriptions()}
		if n == 0 {
			// c_id, c_first, c_middle, c_last, c_balance, o_id, o_entry_d, o_carrier_id
			o.CustomerID = int(r.int(0))
			o.CFirst, o.CMiddle, o.CLast = string(r.vals[1]), string(r.vals[2]), string(r.vals[3])
			o.CBalance = r.float(4)
			if r.vals[5] != nil {
				o.OrderID = int(r.int(5))
				o.EntryD = r.time(6)
			}
			if r.vals[7] != nil {
				carrier := int(r.int(7))
				o.Carrier = &carrier
			}
			if own {
				s.seenCount = int32(r.int(13))
			}
		}
		n++
		if r.vals[8] == nil { // no order, or an order without lines
			continue
		}
		// ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
		l := OrderStatusLine{ItemID: int(r.int(8)), SupplyW: int(r.int(9)), Quantity: int(r.int(10)), Amount: r.int(11)}
		if r.vals[12] != nil {
			t := r.time(12)
			l.DeliveryD = &t
		}
		if r.err != nil {
			return r.err
		}
		o.Lines = append(o.Lines, l)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		return errNoCustomer(in.W, in.D, in.C, in.CLast)
	}
	return nil
}
