package tpcc

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// delivery runs clause 2.7.4 in the foreground, one transaction for the ten districts.
func (s *Session) delivery(ctx context.Context, c *pgx.Conn, in DeliveryInput) error {
	if s.Mode == ModeFunctions {
		var n int32
		return c.QueryRow(ctx, `SELECT tpcc.delivery($1, $2)`, in.W, in.Carrier).Scan(&n)
	}
	return inTx(ctx, c, func(tx pgx.Tx) error {
		for d := 1; d <= DistrictsPerWH; d++ {
			var oid, cid int32
			err := tx.QueryRow(ctx, `SELECT no_o_id FROM tpcc.new_order WHERE no_w_id = $1 AND no_d_id = $2
				ORDER BY no_o_id LIMIT 1 FOR UPDATE SKIP LOCKED`, in.W, d).Scan(&oid)
			if errors.Is(err, pgx.ErrNoRows) {
				continue // clause 2.7.4.2: no undelivered order in this district
			}
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM tpcc.new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3`,
				in.W, d, oid); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, `UPDATE tpcc.orders SET o_carrier_id = $4 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3
				RETURNING o_c_id`, in.W, d, oid, in.Carrier).Scan(&cid); err != nil {
				return err
			}
			var total Fixed
			var cents int64
			if err := tx.QueryRow(ctx, `WITH l AS (UPDATE tpcc.order_line SET ol_delivery_d = localtimestamp
				WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 RETURNING ol_amount)
				SELECT (coalesce(sum(ol_amount), 0) * 100)::int8 FROM l`, in.W, d, oid).Scan(&cents); err != nil {
				return err
			}
			total = Cents(cents, 2)
			if _, err := tx.Exec(ctx, `UPDATE tpcc.customer SET c_balance = c_balance + $4, c_delivery_cnt = c_delivery_cnt + 1
				WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3`, in.W, d, cid, total); err != nil {
				return err
			}
		}
		return nil
	})
}
