package tpcc

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// orderStatus runs clause 2.6.2 (read-only).
func (s *Session) orderStatus(ctx context.Context, c *pgx.Conn, in OrderStatusInput) error {
	if s.Mode == ModeFunctions {
		var cid, oid, lines *int32
		var bal, amount *float64
		return c.QueryRow(ctx, `SELECT c_id, c_balance::float8, o_id, lines, amount::float8 FROM tpcc.ostat($1, $2, $3, $4)`,
			in.W, in.D, in.C, nullString(in.CLast)).Scan(&cid, &bal, &oid, &lines, &amount)
	}
	return inReadTx(ctx, c, func(tx pgx.Tx) error {
		cid, err := customerID(ctx, tx, in.W, in.D, in.C, in.CLast)
		if err != nil {
			return err
		}
		var bal float64
		var first, middle, last string
		if err := tx.QueryRow(ctx, `SELECT c_balance::float8, c_first, c_middle, c_last FROM tpcc.customer
			WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3`, in.W, in.D, cid).Scan(&bal, &first, &middle, &last); err != nil {
			return err
		}
		var oid int32
		var carrier *int16
		err = tx.QueryRow(ctx, `SELECT o_id, o_carrier_id FROM tpcc.orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3
			ORDER BY o_id DESC LIMIT 1`, in.W, in.D, cid).Scan(&oid, &carrier)
		if err == pgx.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount::float8, ol_delivery_d
			FROM tpcc.order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3`, in.W, in.D, oid)
		if err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	})
}

// inReadTx runs f in a read-only transaction (allowed on a hot standby).
func inReadTx(ctx context.Context, c *pgx.Conn, f func(pgx.Tx) error) error {
	tx, err := c.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}
