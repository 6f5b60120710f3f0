package tpcc

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// stockLevelQuery is clause 2.8.2.2 in one statement: the district's next order id, then
// the distinct items of its last 20 orders whose stock is below the threshold.
const stockLevelQuery = `WITH d AS (SELECT d_next_o_id AS nx FROM tpcc.district WHERE d_w_id = $1 AND d_id = $2)
	SELECT count(DISTINCT s_i_id)::int FROM d, tpcc.order_line JOIN tpcc.stock ON s_w_id = $1 AND s_i_id = ol_i_id
	WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id >= d.nx - 20 AND ol_o_id < d.nx AND s_quantity < $3`

// stockLevel runs clause 2.8.2 (read-only) and leaves its output (clause 2.8.3.3, the
// number of items low in stock) in s.LowStock.
func (s *Session) stockLevel(ctx context.Context, c *pgx.Conn, in StockLevelInput) error {
	q := stockLevelQuery
	if s.Mode == ModeFunctions {
		q = `SELECT tpcc.slev($1, $2, $3)`
	}
	return s.queryRow(ctx, c, q, in.W, in.D, in.Threshold).Scan(&s.LowStock)
}
