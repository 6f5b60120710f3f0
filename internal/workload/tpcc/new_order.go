package tpcc

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// newOrder runs clause 2.4.2 and leaves the output of clause 2.4.3.3 in s.NO. An unused
// item rolls the order back (errRolledBack).
func (s *Session) newOrder(ctx context.Context, c *pgx.Conn, in NewOrderInput) error {
	o := &s.NO
	o.reset(in)
	o.ids, o.supply, o.qty = o.ids[:0], o.supply[:0], o.qty[:0]
	for _, it := range in.Items {
		o.ids, o.supply, o.qty = append(o.ids, int32(it.ID)), append(o.supply, int32(it.SupplyW)), append(o.qty, int32(it.Quantity))
	}
	var err error
	if s.Mode == ModeFunctions {
		err = s.newOrderFunction(ctx, c, in)
	} else {
		err = s.newOrderClient(ctx, c, in)
	}
	if SQLState(err) == StateItemInvalid || err == errRolledBack {
		o.RolledBack = true
		return errRolledBack
	}
	return err
}

// newOrderFunction is one call of tpcc.neword, which returns a row per line; the total is
// computed here, as in client mode.
func (s *Session) newOrderFunction(ctx context.Context, c *pgx.Conn, in NewOrderInput) error {
	o := &s.NO
	s.stmts++
	rows, err := c.Query(ctx, `SELECT * FROM tpcc.neword($1, $2, $3, $4, $5, $6, $7)`,
		in.W, in.D, in.C, boolInt(in.AllLocal), o.ids, o.supply, o.qty)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		r := rawRow{vals: rows.RawValues(), formats: rows.FieldDescriptions()}
		if n == 0 {
			// order_id, cust_last, cust_credit, cust_discount, wh_tax, dist_tax, entry_d
			o.OrderID = int(r.int(0))
			o.CLast, o.CCredit = string(r.vals[1]), string(r.vals[2])
			o.CDiscount, o.WTax, o.DTax = r.float(3), r.float(4), r.float(5)
			o.EntryD = r.time(6)
		}
		// line, item_name, item_price, line_amount, stock_qty, brand
		i := int(r.int(7)) - 1
		if r.err == nil && (i < 0 || i >= len(o.Lines)) {
			r.err = fmt.Errorf("neword returned line %d of an order of %d", i+1, len(o.Lines))
		}
		if r.err != nil {
			return r.err
		}
		l := &o.Lines[i]
		l.Name = append(l.Name[:0], r.vals[8]...)
		l.Price, l.Amount, l.Stock = r.int(9), r.int(10), int(r.int(11))
		if len(r.vals[12]) == 1 {
			l.BrandGeneric = r.vals[12][0]
		}
		if r.err != nil {
			return r.err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != len(o.Lines) {
		return fmt.Errorf("neword returned %d lines for an order of %d", n, len(o.Lines))
	}
	o.total()
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The statements of New-Order in client mode (clause 2.4.2.2), sent in two pipelined
// batches: the reads and the stock updates, then (unless an item is unused) the inserts and
// the commit.
const (
	noCustomerWarehouse = `SELECT c_discount::float8, c_last::text, c_credit::text, w_tax::float8
		FROM tpcc.customer, tpcc.warehouse WHERE w_id = $1 AND c_w_id = $1 AND c_d_id = $2 AND c_id = $3`
	noDistrict = `UPDATE tpcc.district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2
		RETURNING d_next_o_id - 1, d_tax::float8, localtimestamp`
	noItems = `SELECT i_id, (i_price * 100)::int8, i_name, i_data FROM tpcc.item WHERE i_id = ANY($1::int[])`
	// noStockDist picks S_DIST_xx of the order's district ($5).
	noStockDist = `CASE $5::int WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END`
	// noStockSet updates the stock of all lines in one statement (no item repeats).
	noStockSet = `UPDATE tpcc.stock SET
		s_quantity = CASE WHEN s_quantity - u.qty >= 10 THEN s_quantity - u.qty ELSE s_quantity - u.qty + 91 END,
		s_ytd = s_ytd + u.qty, s_order_cnt = s_order_cnt + 1,
		s_remote_cnt = s_remote_cnt + CASE WHEN u.w <> $4::int THEN 1 ELSE 0 END
		FROM unnest($1::int[], $2::int[], $3::int[]) WITH ORDINALITY AS u(w, i, qty, n)
		WHERE s_w_id = u.w AND s_i_id = u.i
		RETURNING u.n, s_quantity, s_data, ` + noStockDist
	// noStockLine updates one line's stock (an order that repeats an item: clause 2.4.2.2's
	// rule applies to each line in turn).
	noStockLine = `UPDATE tpcc.stock SET
		s_quantity = CASE WHEN s_quantity - $3::int >= 10 THEN s_quantity - $3::int ELSE s_quantity - $3::int + 91 END,
		s_ytd = s_ytd + $3::int, s_order_cnt = s_order_cnt + 1,
		s_remote_cnt = s_remote_cnt + CASE WHEN $1::int <> $4::int THEN 1 ELSE 0 END
		WHERE s_w_id = $1 AND s_i_id = $2
		RETURNING $6::int8, s_quantity, s_data, ` + noStockDist
	noOrder = `INSERT INTO tpcc.orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES ($1, $2, $3, $4, localtimestamp, NULL, $5, $6)`
	noNewOrder = `INSERT INTO tpcc.new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)`
	noLines    = `INSERT INTO tpcc.order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
		ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
		SELECT $1, $2, $3, u.n, u.i, u.w, NULL, u.q, u.a * 0.01, u.d
		FROM unnest($4::int[], $5::int[], $6::int[], $7::int8[], $8::text[]) WITH ORDINALITY AS u(i, w, q, a, d, n)`
)

// newOrderClient is New-Order as statements from the client in two round trips.
func (s *Session) newOrderClient(ctx context.Context, c *pgx.Conn, in NewOrderInput) error {
	o := &s.NO
	b := s.newBatch()
	b.Queue("BEGIN")
	b.Queue(noCustomerWarehouse, in.W, in.D, in.C)
	b.Queue(noDistrict, in.W, in.D)
	b.Queue(noItems, o.ids)
	distinct := true
	for i := 1; i < len(in.Items); i++ {
		if in.Items[i].ID == in.Items[i-1].ID && in.Items[i].SupplyW == in.Items[i-1].SupplyW {
			distinct = false
		}
	}
	if distinct {
		b.Queue(noStockSet, o.supply, o.ids, o.qty, in.W, in.D)
	} else {
		for i, it := range in.Items {
			b.Queue(noStockLine, it.SupplyW, it.ID, it.Quantity, in.W, in.D, i+1)
		}
	}
	br := s.send(ctx, c, b)
	err := s.newOrderReads(br, in, distinct)
	if err = s.finish(ctx, c, br, err); err != nil {
		return err
	}
	// Clause 2.4.2.3: an unused item rolls the whole order back.
	for i := range o.Lines {
		if o.Lines[i].Price == 0 {
			s.stmts++
			_, err := c.Exec(ctx, "ROLLBACK")
			if err != nil {
				return err
			}
			return errRolledBack
		}
	}
	o.amounts = o.amounts[:0]
	for i := range o.Lines {
		l := &o.Lines[i]
		l.Amount = int64(l.Quantity) * l.Price
		o.amounts = append(o.amounts, l.Amount)
	}
	o.total()
	b = s.newBatch()
	b.Queue(noOrder, o.OrderID, in.D, in.W, in.C, len(in.Items), boolInt(in.AllLocal))
	b.Queue(noNewOrder, o.OrderID, in.D, in.W)
	b.Queue(noLines, o.OrderID, in.D, in.W, o.ids, o.supply, o.qty, o.amounts, o.dist)
	b.Queue("COMMIT")
	br = s.send(ctx, c, b)
	return s.finish(ctx, c, br, nil)
}

// newOrderReads reads the first batch's results into s.NO.
func (s *Session) newOrderReads(br pgx.BatchResults, in NewOrderInput, distinct bool) error {
	o := &s.NO
	if _, err := br.Exec(); err != nil {
		return err
	}
	if err := br.QueryRow().Scan(&o.CDiscount, &o.CLast, &o.CCredit, &o.WTax); err != nil {
		return err
	}
	if err := br.QueryRow().Scan(&o.OrderID, &o.DTax, &o.EntryD); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	for rows.Next() {
		r := rawRow{vals: rows.RawValues(), formats: rows.FieldDescriptions()}
		id, price := r.int(0), r.int(1)
		if r.err != nil {
			rows.Close()
			return r.err
		}
		for i := range o.Lines {
			if l := &o.Lines[i]; l.ItemID == int(id) {
				l.Price, l.Name = price, append(l.Name[:0], r.vals[2]...)
				o.idata[i] = append(o.idata[i][:0], r.vals[3]...)
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if cap(o.dist) < len(o.Lines) {
		o.dist = make([]string, len(o.Lines), MaxOLCnt)
	}
	o.dist = o.dist[:len(o.Lines)]
	stockRows := func() error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r := rawRow{vals: rows.RawValues(), formats: rows.FieldDescriptions()}
			i, qty := int(r.int(0))-1, r.int(1)
			if r.err == nil && (i < 0 || i >= len(o.Lines)) {
				r.err = fmt.Errorf("stock update returned line %d of an order of %d", i+1, len(o.Lines))
			}
			if r.err != nil {
				return r.err
			}
			l := &o.Lines[i]
			l.Stock = int(qty)
			l.BrandGeneric = brandGeneric(o.idata[i], r.vals[2])
			if d := r.vals[3]; o.dist[i] != string(d) {
				o.dist[i] = string(d)
			}
		}
		return rows.Err()
	}
	n := 1
	if !distinct {
		n = len(in.Items)
	}
	for ; n > 0; n-- {
		if err := stockRows(); err != nil {
			return err
		}
	}
	return nil
}
