package tpcc

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// newOrder runs clause 2.4.2. An unused item rolls the order back (errRolledBack).
func (s *Session) newOrder(ctx context.Context, c *pgx.Conn, in NewOrderInput) error {
	if s.Mode == ModeFunctions {
		ids, supply, qty := make([]int32, len(in.Items)), make([]int32, len(in.Items)), make([]int32, len(in.Items))
		for i, it := range in.Items {
			ids[i], supply[i], qty[i] = int32(it.ID), int32(it.SupplyW), int32(it.Quantity)
		}
		var oid int32
		var tot float64
		err := c.QueryRow(ctx, `SELECT o_id, total::float8 FROM tpcc.neword($1, $2, $3, $4, $5, $6, $7)`,
			in.W, in.D, in.C, boolInt(in.AllLocal), ids, supply, qty).Scan(&oid, &tot)
		if SQLState(err) == StateItemInvalid {
			return errRolledBack
		}
		return err
	}
	return inTx(ctx, c, func(tx pgx.Tx) error { return newOrderClient(ctx, tx, in) })
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// newOrderClient is New-Order as statements from the client, one round trip each.
func newOrderClient(ctx context.Context, tx pgx.Tx, in NewOrderInput) error {
	var wTax, dTax, disc float64
	var oid int32
	var cLast, cCredit string
	if err := tx.QueryRow(ctx, `SELECT w_tax::float8 FROM tpcc.warehouse WHERE w_id = $1`, in.W).Scan(&wTax); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, `UPDATE tpcc.district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2
		RETURNING d_next_o_id - 1, d_tax::float8`, in.W, in.D).Scan(&oid, &dTax); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, `SELECT c_discount::float8, c_last, c_credit FROM tpcc.customer
		WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3`, in.W, in.D, in.C).Scan(&disc, &cLast, &cCredit); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO tpcc.orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES ($1, $2, $3, $4, localtimestamp, NULL, $5, $6)`, oid, in.D, in.W, in.C, len(in.Items), boolInt(in.AllLocal)); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO tpcc.new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)`, oid, in.D, in.W); err != nil {
		return err
	}
	for i, it := range in.Items {
		var price int64
		var name, data string
		err := tx.QueryRow(ctx, `SELECT (i_price * 100)::int8, i_name, i_data FROM tpcc.item WHERE i_id = $1`, it.ID).Scan(&price, &name, &data)
		if errors.Is(err, pgx.ErrNoRows) {
			return errRolledBack
		}
		if err != nil {
			return err
		}
		var sData, sDist string
		if err := tx.QueryRow(ctx, `UPDATE tpcc.stock SET
			s_quantity = CASE WHEN s_quantity - $3 >= 10 THEN s_quantity - $3 ELSE s_quantity - $3 + 91 END,
			s_ytd = s_ytd + $3, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $4
			WHERE s_w_id = $1 AND s_i_id = $2
			RETURNING s_data, CASE $5::int WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
			WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
			WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END`,
			it.SupplyW, it.ID, it.Quantity, boolInt(it.SupplyW != in.W), in.D).Scan(&sData, &sDist); err != nil {
			return err
		}
		amount := Cents(int64(it.Quantity)*price, 2)
		if _, err := tx.Exec(ctx, `INSERT INTO tpcc.order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id,
			ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
			VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9)`,
			oid, in.D, in.W, i+1, it.ID, it.SupplyW, it.Quantity, amount, sDist); err != nil {
			return err
		}
	}
	return nil
}
