package tpcc

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed functions.sql
var functionsTemplate string

// functionsSQL holds the five transactions as PL/pgSQL functions; build installs them. The
// statements that client mode sends whole (Payment, Order-Status, Delivery, Stock-Level) are
// written once, here in Go, and put into the functions' bodies.
var functionsSQL = strings.NewReplacer("{{ORDER_STATUS}}", orderStatusQuery("p_w_id", "p_d_id", "v_c_id", ""),
	"{{PAYMENT}}", paymentQuery, "{{DELIVERY}}", deliveryQuery, "{{STOCK_LEVEL}}", stockLevelQuery).Replace(functionsTemplate)

// orderStatusQuery is Order-Status's read (clause 2.6.2.2) for the customer already chosen:
// the customer's name and balance, the most recent order and its lines, one row per line;
// extra is more columns of the customer (cu) after those.
func orderStatusQuery(w, d, c, extra string) string {
	return fmt.Sprintf(`SELECT cu.c_id, cu.c_first::text, cu.c_middle::text, cu.c_last::text, cu.c_balance::float8,
		o.o_id, o.o_entry_d, o.o_carrier_id::int, ol.ol_i_id, ol.ol_supply_w_id, ol.ol_quantity::int,
		(ol.ol_amount * 100)::int8, ol.ol_delivery_d%[4]s
	FROM tpcc.customer cu
	LEFT JOIN LATERAL (SELECT o.o_id, o.o_entry_d, o.o_carrier_id FROM tpcc.orders o
		WHERE o.o_w_id = %[1]s AND o.o_d_id = %[2]s AND o.o_c_id = %[3]s ORDER BY o.o_id DESC LIMIT 1) o ON true
	LEFT JOIN tpcc.order_line ol ON ol.ol_w_id = %[1]s AND ol.ol_d_id = %[2]s AND ol.ol_o_id = o.o_id
	WHERE cu.c_w_id = %[1]s AND cu.c_d_id = %[2]s AND cu.c_id = %[3]s
	ORDER BY ol.ol_number`, w, d, c, extra)
}
