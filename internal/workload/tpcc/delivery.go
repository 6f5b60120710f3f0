package tpcc

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// deliveryOldest finds a district's oldest undelivered order (clause 2.7.4.2); SKIP LOCKED
// lets two deliveries of one warehouse take different orders.
const deliveryOldest = `SELECT no_o_id FROM tpcc.new_order WHERE no_w_id = $1 AND no_d_id = $2
	ORDER BY no_o_id LIMIT 1 FOR UPDATE SKIP LOCKED`

// deliveryQuery delivers one order: the new-order row deleted, the carrier set, the lines'
// delivery date set, and the customer's balance raised by their amounts (clause 2.7.4.2).
func deliveryQuery(w, d, o, carrier string) string {
	return fmt.Sprintf(`WITH n AS (DELETE FROM tpcc.new_order WHERE no_w_id = %[1]s AND no_d_id = %[2]s AND no_o_id = %[3]s),
	o AS (UPDATE tpcc.orders SET o_carrier_id = %[4]s WHERE o_w_id = %[1]s AND o_d_id = %[2]s AND o_id = %[3]s RETURNING o_c_id),
	l AS (UPDATE tpcc.order_line SET ol_delivery_d = localtimestamp
		WHERE ol_w_id = %[1]s AND ol_d_id = %[2]s AND ol_o_id = %[3]s RETURNING ol_amount)
	UPDATE tpcc.customer SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM l),
		c_delivery_cnt = c_delivery_cnt + 1
	FROM o WHERE c_w_id = %[1]s AND c_d_id = %[2]s AND c_id = o.o_c_id`, w, d, o, carrier)
}

var deliveryOrder = deliveryQuery("$1", "$2", "$3", "$4")

// delivery runs clause 2.7.4 in the foreground, one transaction for the ten districts. Client
// mode takes two round trips: the ten oldest orders, then the ten deliveries and the commit.
func (s *Session) delivery(ctx context.Context, c *pgx.Conn, in DeliveryInput) error {
	if s.Mode == ModeFunctions {
		var n int32
		return s.queryRow(ctx, c, `SELECT tpcc.delivery($1, $2)`, in.W, in.Carrier).Scan(&n)
	}
	var oids [DistrictsPerWH]int32
	b := s.newBatch()
	b.Queue("BEGIN")
	for d := 1; d <= DistrictsPerWH; d++ {
		b.Queue(deliveryOldest, in.W, d)
	}
	br := s.send(ctx, c, b)
	err := func() error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		for d := range oids {
			err := br.QueryRow().Scan(&oids[d])
			if errors.Is(err, pgx.ErrNoRows) {
				continue // clause 2.7.4.2: no undelivered order in this district
			}
			if err != nil {
				return err
			}
		}
		return nil
	}()
	if err := s.finish(ctx, c, br, err); err != nil {
		return err
	}
	b = s.newBatch()
	for d, oid := range oids {
		if oid != 0 {
			b.Queue(deliveryOrder, in.W, d+1, oid, in.Carrier)
		}
	}
	b.Queue("COMMIT")
	br = s.send(ctx, c, b)
	err = func() error {
		for range b.Len() {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	}()
	return s.finish(ctx, c, br, err)
}
