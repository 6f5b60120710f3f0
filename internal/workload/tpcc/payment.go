package tpcc

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// payment runs clause 2.5.2.
func (s *Session) payment(ctx context.Context, c *pgx.Conn, in PaymentInput) error {
	amount := Cents(in.Amount, 2)
	if s.Mode == ModeFunctions {
		var cid int32
		var credit string
		var bal float64
		return c.QueryRow(ctx, `SELECT c_id, c_balance::float8, c_credit FROM tpcc.payment($1, $2, $3, $4, $5, $6, $7)`,
			in.W, in.D, in.CW, in.CD, in.C, nullString(in.CLast), amount).Scan(&cid, &bal, &credit)
	}
	return inTx(ctx, c, func(tx pgx.Tx) error {
		var wName, dName string
		if err := tx.QueryRow(ctx, `UPDATE tpcc.warehouse SET w_ytd = w_ytd + $2 WHERE w_id = $1 RETURNING w_name`,
			in.W, amount).Scan(&wName); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `UPDATE tpcc.district SET d_ytd = d_ytd + $3 WHERE d_w_id = $1 AND d_id = $2 RETURNING d_name`,
			in.W, in.D, amount).Scan(&dName); err != nil {
			return err
		}
		cid, err := customerID(ctx, tx, in.CW, in.CD, in.C, in.CLast)
		if err != nil {
			return err
		}
		var credit string
		if err := tx.QueryRow(ctx, `UPDATE tpcc.customer SET c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4,
			c_payment_cnt = c_payment_cnt + 1,
			c_data = CASE WHEN c_credit = 'BC' THEN left($5 || c_data, 500) ELSE c_data END
			WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 RETURNING c_credit`,
			in.CW, in.CD, cid, amount, fmt.Sprintf("%d %d %d %d %d %d.%02d | ", cid, in.CD, in.CW, in.D, in.W,
				in.Amount/100, in.Amount%100)).Scan(&credit); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO tpcc.history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
			VALUES ($1, $2, $3, $4, $5, localtimestamp, $6, $7)`, cid, in.CD, in.CW, in.D, in.W, amount, wName+"    "+dName)
		return err
	})
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// customerID returns id, or when last is set the customer at position ceil(n/2) of those of
// that last name sorted by first name (clauses 2.5.2.2 and 2.6.2.2).
func customerID(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, w, d, id int, last string) (int, error) {
	if last == "" {
		return id, nil
	}
	rows, err := q.Query(ctx, `SELECT c_id FROM tpcc.customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
		ORDER BY c_first`, w, d, last)
	if err != nil {
		return 0, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in warehouse %d district %d", last, w, d)
	}
	return int(ids[(len(ids)+1)/2-1]), nil
}
