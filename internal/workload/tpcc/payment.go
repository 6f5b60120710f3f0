package tpcc

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// paymentQuery is Payment (clause 2.5.2.2) as one statement from the client: the warehouse's
// and the district's year-to-date, the customer (by id, or by last name at position
// ceil(n/2) of those of that name sorted by first name), the customer's balance and, for bad
// credit, data, and the history row. It returns the output of clause 2.5.3.3 (paymentColumns).
// $1 W, $2 D, $3 C_W, $4 C_D, $5 C_ID, $6 amount, $7 C_LAST (NULL: by id). paymentOwnQuery
// also returns the customer's c_payment_cnt after the update (for the own-write reads,
// Workload.OwnWrites).
var (
	paymentQuery    = strings.NewReplacer("{{RET}}", "", "{{OUT}}", "").Replace(paymentTemplate)
	paymentOwnQuery = strings.NewReplacer("{{RET}}", ", cu.c_payment_cnt", "{{OUT}}", ", c.c_payment_cnt").Replace(paymentTemplate)
)

const paymentTemplate = `WITH w AS (UPDATE tpcc.warehouse SET w_ytd = w_ytd + $6::numeric WHERE w_id = $1
		RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip),
	d AS (UPDATE tpcc.district SET d_ytd = d_ytd + $6::numeric WHERE d_w_id = $1 AND d_id = $2
		RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip),
	pick AS MATERIALIZED (SELECT CASE WHEN $7::text IS NULL THEN $5::int ELSE (SELECT c_id FROM (SELECT c_id,
		row_number() OVER (ORDER BY c_first) AS r, count(*) OVER () AS n FROM tpcc.customer
		WHERE c_w_id = $3 AND c_d_id = $4 AND c_last = $7::text) x WHERE r = (n + 1) / 2) END AS id),
	c AS (UPDATE tpcc.customer cu SET c_balance = cu.c_balance - $6::numeric, c_ytd_payment = cu.c_ytd_payment + $6::numeric,
		c_payment_cnt = cu.c_payment_cnt + 1,
		c_data = CASE WHEN cu.c_credit = 'BC' THEN left(format('%s %s %s %s %s %s | ', cu.c_id, $4::int, $3::int,
			$2::int, $1::int, $6::numeric) || cu.c_data, 500) ELSE cu.c_data END
		FROM pick WHERE cu.c_w_id = $3 AND cu.c_d_id = $4 AND cu.c_id = pick.id
		RETURNING cu.c_id, cu.c_first, cu.c_middle, cu.c_last, cu.c_street_1, cu.c_street_2, cu.c_city, cu.c_state,
			cu.c_zip, cu.c_phone, cu.c_since, cu.c_credit, cu.c_credit_lim, cu.c_discount, cu.c_balance,
			CASE WHEN cu.c_credit = 'BC' THEN left(cu.c_data, 200) ELSE '' END AS data200{{RET}}),
	h AS (INSERT INTO tpcc.history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		SELECT c.c_id, $4, $3, $2, $1, localtimestamp, $6::numeric, w.w_name || '    ' || d.d_name FROM w, d, c)
	SELECT c.c_id, c.c_first::text, c.c_middle::text, c.c_last::text, c.c_street_1::text, c.c_street_2::text,
		c.c_city::text, c.c_state::text, c.c_zip::text, c.c_phone::text, c.c_since, c.c_credit::text,
		c.c_credit_lim::float8, c.c_discount::float8, c.c_balance::float8, c.data200::text,
		w.w_street_1::text, w.w_street_2::text, w.w_city::text, w.w_state::text, w.w_zip::text,
		d.d_street_1::text, d.d_street_2::text, d.d_city::text, d.d_state::text, d.d_zip::text, localtimestamp{{OUT}}
	FROM c, w, d`

// paymentColumns is the number of columns of paymentQuery (tpcc.payment returns the same).
const paymentColumns = 27

// payment runs clause 2.5.2 and leaves the output of clause 2.5.3.3 in s.Pay.
func (s *Session) payment(ctx context.Context, c *pgx.Conn, in PaymentInput) error {
	q := paymentQuery
	if s.Mode == ModeFunctions {
		q = `SELECT * FROM tpcc.payment($1, $2, $3, $4, $5, $6, $7)`
	}
	own := s.ownWrites()
	if own {
		q = paymentOwnQuery
	}
	s.stmts++
	rows, err := c.Query(ctx, q, in.W, in.D, in.CW, in.CD, in.C, Cents(in.Amount, 2), nullString(in.CLast))
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return errNoCustomer(in.CW, in.CD, in.C, in.CLast)
	}
	r := rawRow{vals: rows.RawValues(), formats: rows.FieldDescriptions()}
	if want := paymentColumns + boolInt(own); len(r.vals) != want {
		return fmt.Errorf("payment returned %d columns, want %d", len(r.vals), want)
	}
	p := &s.Pay
	p.W, p.D, p.CW, p.CD, p.Amount = in.W, in.D, in.CW, in.CD, float64(in.Amount)/100
	p.CustomerID = int(r.int(0))
	r.bytes(&p.CFirst, 1)
	r.bytes(&p.CMiddle, 2)
	r.bytes(&p.CLast, 3)
	r.address(&p.CAddr, 4)
	r.bytes(&p.CPhone, 9)
	p.CSince = r.time(10)
	r.bytes(&p.CCredit, 11)
	p.CCreditLim, p.CDiscount, p.CBalance = r.float(12), r.float(13), r.float(14)
	r.bytes(&p.CData, 15)
	r.address(&p.WAddr, 16)
	r.address(&p.DAddr, 21)
	p.Date = r.time(26)
	if own {
		s.paid = ownPayment{w: in.CW, d: in.CD, c: p.CustomerID, count: int32(r.int(paymentColumns)), set: true}
	}
	if r.err != nil {
		return r.err
	}
	return rows.Err()
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
