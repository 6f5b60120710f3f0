package tpcc

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// stockLevel runs clause 2.8.2 (read-only).
func (s *Session) stockLevel(ctx context.Context, c *pgx.Conn, in StockLevelInput) error {
	var n int32
	if s.Mode == ModeFunctions {
		return c.QueryRow(ctx, `SELECT tpcc.slev($1, $2, $3)`, in.W, in.D, in.Threshold).Scan(&n)
	}
	return inReadTx(ctx, c, func(tx pgx.Tx) error {
		var next int32
		if err := tx.QueryRow(ctx, `SELECT d_next_o_id FROM tpcc.district WHERE d_w_id = $1 AND d_id = $2`,
			in.W, in.D).Scan(&next); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(DISTINCT s_i_id) FROM tpcc.order_line JOIN tpcc.stock ON s_w_id = $1 AND s_i_id = ol_i_id
			WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id >= $3 - 20 AND ol_o_id < $3 AND s_quantity < $4`,
			in.W, in.D, next, in.Threshold).Scan(&n)
	})
}
