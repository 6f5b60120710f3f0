package tpcc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Condition is one consistency condition of clause 3.3.2: a query counting the rows (of
// warehouses, districts, orders, lines or customers) that break it.
type Condition struct {
	Clause string
	Name   string
	SQL    string
}

// Conditions are the consistency conditions check runs: 3.3.2.1 to 3.3.2.10 and 3.3.2.12
// (3.3.2.11 holds only on the initial database, before any Delivery).
var Conditions = []Condition{
	{"3.3.2.1", "W_YTD = sum(D_YTD)", `SELECT count(*) FROM warehouse
		LEFT JOIN (SELECT d_w_id, sum(d_ytd) s FROM district GROUP BY d_w_id) d ON d_w_id = w_id
		WHERE w_ytd IS DISTINCT FROM d.s`},
	{"3.3.2.2", "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", `SELECT count(*) FROM district
		LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) m FROM orders GROUP BY 1, 2) o ON o_w_id = d_w_id AND o_d_id = d_id
		LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) m FROM new_order GROUP BY 1, 2) n ON no_w_id = d_w_id AND no_d_id = d_id
		WHERE d_next_o_id - 1 IS DISTINCT FROM o.m OR (n.m IS NOT NULL AND n.m <> o.m)`},
	{"3.3.2.3", "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER)", `SELECT count(*) FROM
		(SELECT max(no_o_id) - min(no_o_id) + 1 - count(*) diff FROM new_order GROUP BY no_w_id, no_d_id) n WHERE diff <> 0`},
	{"3.3.2.4", "sum(O_OL_CNT) = count(ORDER-LINE)", `SELECT count(*) FROM
		(SELECT o_w_id, o_d_id, sum(o_ol_cnt) s FROM orders GROUP BY 1, 2) o
		FULL JOIN (SELECT ol_w_id, ol_d_id, count(*) c FROM order_line GROUP BY 1, 2) l ON ol_w_id = o_w_id AND ol_d_id = o_d_id
		WHERE o.s IS DISTINCT FROM l.c`},
	{"3.3.2.5", "O_CARRIER_ID is null iff a NEW-ORDER row exists", `SELECT count(*) FROM orders
		LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
		WHERE (o_carrier_id IS NULL) <> (no_o_id IS NOT NULL)`},
	{"3.3.2.6", "O_OL_CNT = count(ORDER-LINE) per order", `SELECT count(*) FROM orders
		FULL JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) c FROM order_line GROUP BY 1, 2, 3) l
		ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
		WHERE o_ol_cnt IS DISTINCT FROM l.c`},
	{"3.3.2.7", "OL_DELIVERY_D is null iff O_CARRIER_ID is null", `SELECT count(*) FROM order_line
		JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id
		WHERE (ol_delivery_d IS NULL) <> (o_carrier_id IS NULL)`},
	{"3.3.2.8", "W_YTD = sum(H_AMOUNT)", `SELECT count(*) FROM warehouse
		LEFT JOIN (SELECT h_w_id, sum(h_amount) s FROM history GROUP BY h_w_id) h ON h_w_id = w_id
		WHERE w_ytd IS DISTINCT FROM h.s`},
	{"3.3.2.9", "D_YTD = sum(H_AMOUNT)", `SELECT count(*) FROM district
		LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) s FROM history GROUP BY 1, 2) h ON h_w_id = d_w_id AND h_d_id = d_id
		WHERE d_ytd IS DISTINCT FROM h.s`},
	{"3.3.2.10", "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)", `SELECT count(*) FROM customer
		LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, sum(ol_amount) s FROM orders
			JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			WHERE ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3) ol ON o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id
		LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) s FROM history GROUP BY 1, 2, 3) h
			ON h_c_w_id = c_w_id AND h_c_d_id = c_d_id AND h_c_id = c_id
		WHERE c_balance <> coalesce(ol.s, 0) - coalesce(h.s, 0)`},
	{"3.3.2.12", "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)", `SELECT count(*) FROM customer
		LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, sum(ol_amount) s FROM orders
			JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			WHERE ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3) ol ON o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id
		WHERE c_balance + c_ytd_payment <> coalesce(ol.s, 0)`},
}

// CheckResult is the outcome of one condition.
type CheckResult struct {
	Condition
	// Violations counts the rows that break the condition; 0 means it holds.
	Violations int64
	Took       time.Duration
}

// Check runs every condition in one repeatable-read transaction (one snapshot) on a ready
// database; it fails with bad input on a database that is not built or half-built.
func Check(ctx context.Context, conn *pgx.Conn) ([]CheckResult, error) {
	if _, err := RequireReady(ctx, conn); err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SET LOCAL search_path = "+Schema+"; SET LOCAL work_mem = '64MB'"); err != nil {
		return nil, err
	}
	var out []CheckResult
	for _, c := range Conditions {
		t := time.Now()
		r := CheckResult{Condition: c}
		if err := tx.QueryRow(ctx, c.SQL).Scan(&r.Violations); err != nil {
			return out, fmt.Errorf("condition %s: %w", c.Clause, err)
		}
		r.Took = time.Since(t)
		out = append(out, r)
	}
	return out, nil
}

// Counters are the server's own counts that cross-check a run's client-side NOPM and TPM,
// as HammerDB computes them: the sum of the districts' next order ids (one per committed
// New-Order) and the database's commits plus rollbacks from pg_stat_database.
type Counters struct {
	At        time.Time
	NewOrders int64
	Xacts     int64
}

// ReadCounters reads the server's counters on the primary.
func ReadCounters(ctx context.Context, conn *pgx.Conn) (Counters, error) {
	c := Counters{At: time.Now()}
	err := conn.QueryRow(ctx, `SELECT (SELECT sum(d_next_o_id) FROM tpcc.district)::int8,
		(SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database())::int8`).
		Scan(&c.NewOrders, &c.Xacts)
	return c, err
}
