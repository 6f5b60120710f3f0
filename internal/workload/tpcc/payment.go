package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// paymentQuery is Payment (clause 2.5.2.2) as one statement from the client: the warehouse's
// and the district's year-to-date, the customer (by id, or by last name at position
// ceil(n/2) of those of that name sorted by first name), the customer's balance and, for bad
// credit, data, and the history row. $1 W, $2 D, $3 C_W, $4 C_D, $5 C_ID, $6 amount, $7 C_LAST
// (NULL: by id). paymentOwnQuery also returns the customer's c_payment_cnt after the update
// (for the own-write reads, Workload.OwnWrites).
var (
	paymentQuery    = strings.NewReplacer("{{RET}}", "", "{{OUT}}", "").Replace(paymentTemplate)
	paymentOwnQuery = strings.NewReplacer("{{RET}}", ", cu.c_payment_cnt", "{{OUT}}", ", c_payment_cnt").Replace(paymentTemplate)
)

const paymentTemplate = `WITH w AS (UPDATE tpcc.warehouse SET w_ytd = w_ytd + $6::numeric WHERE w_id = $1 RETURNING w_name),
	d AS (UPDATE tpcc.district SET d_ytd = d_ytd + $6::numeric WHERE d_w_id = $1 AND d_id = $2 RETURNING d_name),
	pick AS MATERIALIZED (SELECT CASE WHEN $7::text IS NULL THEN $5::int ELSE (SELECT c_id FROM (SELECT c_id,
		row_number() OVER (ORDER BY c_first) AS r, count(*) OVER () AS n FROM tpcc.customer
		WHERE c_w_id = $3 AND c_d_id = $4 AND c_last = $7::text) x WHERE r = (n + 1) / 2) END AS id),
	c AS (UPDATE tpcc.customer cu SET c_balance = cu.c_balance - $6::numeric, c_ytd_payment = cu.c_ytd_payment + $6::numeric,
		c_payment_cnt = cu.c_payment_cnt + 1,
		c_data = CASE WHEN cu.c_credit = 'BC' THEN left(format('%s %s %s %s %s %s | ', cu.c_id, $4::int, $3::int,
			$2::int, $1::int, $6::numeric) || cu.c_data, 500) ELSE cu.c_data END
		FROM pick WHERE cu.c_w_id = $3 AND cu.c_d_id = $4 AND cu.c_id = pick.id
		RETURNING cu.c_id, cu.c_balance, cu.c_credit{{RET}}),
	h AS (INSERT INTO tpcc.history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		SELECT c.c_id, $4, $3, $2, $1, localtimestamp, $6::numeric, w.w_name || '    ' || d.d_name FROM w, d, c)
	SELECT c_id, c_balance::float8, c_credit::text{{OUT}} FROM c`

// payment runs clause 2.5.2.
func (s *Session) payment(ctx context.Context, c *pgx.Conn, in PaymentInput) error {
	amount := Cents(in.Amount, 2)
	q := paymentQuery
	if s.Mode == ModeFunctions {
		q = `SELECT * FROM tpcc.payment($1, $2, $3, $4, $5, $6, $7)`
	}
	var cid, cnt int32
	var credit string
	var bal float64
	dest := []any{&cid, &bal, &credit}
	own := s.ownWrites()
	if own {
		q, dest = paymentOwnQuery, append(dest, &cnt)
	}
	err := s.queryRow(ctx, c, q, in.W, in.D, in.CW, in.CD, in.C, amount, nullString(in.CLast)).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return errNoCustomer(in.CW, in.CD, in.C, in.CLast)
	}
	if err == nil && own {
		s.paid = ownPayment{w: in.CW, d: in.CD, c: int(cid), count: cnt, set: true}
	}
	return err
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func errNoCustomer(w, d, id int, last string) error {
	if last != "" {
		return fmt.Errorf("no customer named %s in warehouse %d district %d", last, w, d)
	}
	return fmt.Errorf("no customer %d in warehouse %d district %d", id, w, d)
}
