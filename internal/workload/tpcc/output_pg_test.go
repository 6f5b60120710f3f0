package tpcc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// TestTransactionOutputs checks, on a real server and in both modes, that New-Order returns
// the output of clause 2.4.3.3 for every line (item name, price, amount, stock quantity and
// brand-generic flag, and the order's total) as the database holds it right after the
// order, that Order-Status returns that order and its lines, that Payment returns the output
// of clause 2.5.3.3 (customer, addresses, credit, balance after, bad credit's data, date) as
// the database holds it, that Delivery delivers each district's oldest order and says how
// many, and that Stock-Level's count is the same in both modes.
func TestTransactionOutputs(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 1})
	db := clustertest.OwnDatabase(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, err := ConnConfig(topo.ConnString(topo.Primary(), db), "--primary")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(ctx, cfg, BuildOptions{Warehouses: 1, Loaders: 1, Seed: 3})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	conn, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	check, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close(ctx)

	for _, mode := range []Mode{ModeFunctions, ModeClient} {
		g := NewRand(11, uint64(len(mode)))
		s := &Session{Primary: conn, Mode: mode, T: &Terminal{G: g, C: RunConstants(g, rep.Constants), Warehouses: 1, HomeW: 1, HomeD: 2}}
		orders, brands := 0, map[byte]int{}
		for i := 0; i < 60; i++ {
			in := s.T.NewOrder()
			if i == 5 { // a repeated item takes the line-by-line path
				in.Items[1] = in.Items[0]
			}
			s.stmts = 0
			err := s.newOrder(ctx, conn, in)
			if errors.Is(err, errRolledBack) {
				if !in.Rollback || !s.NO.RolledBack {
					t.Fatalf("%s: order %d rolled back, input rollback=%v", mode, i, in.Rollback)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: new-order %d: %v", mode, i, err)
			}
			orders++
			checkNewOrder(t, ctx, check, mode, in, &s.NO, brands)
			if mode == ModeClient && s.stmts > 9+len(in.Items) {
				t.Errorf("client new-order sent %d statements", s.stmts)
			}

			// Order-Status of that customer returns that order and its lines.
			if err := s.orderStatus(ctx, conn, OrderStatusInput{W: in.W, D: in.D, C: in.C}, false); err != nil {
				t.Fatalf("%s: order-status: %v", mode, err)
			}
			os := &s.OS
			if os.CustomerID != in.C || os.OrderID != s.NO.OrderID || len(os.Lines) != len(in.Items) ||
				os.CLast != s.NO.CLast || os.Carrier != nil || !os.EntryD.Equal(s.NO.EntryD) {
				t.Fatalf("%s: order-status %+v after new-order %d of customer %d (%s, %v)", mode, *os, s.NO.OrderID, in.C, s.NO.CLast, s.NO.EntryD)
			}
			for j, l := range os.Lines {
				nl := s.NO.Lines[j]
				if l.ItemID != nl.ItemID || l.SupplyW != nl.SupplyW || l.Quantity != nl.Quantity || l.Amount != nl.Amount || l.DeliveryD != nil {
					t.Fatalf("%s: order-status line %d %+v, new-order line %+v", mode, j+1, l, nl)
				}
			}
		}
		// Payment returns clause 2.5.3.3's output: random inputs, then a customer of bad credit
		// by id and one by last name.
		var bc int
		if err := check.QueryRow(ctx, `SELECT min(c_id) FROM tpcc.customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_credit = 'BC'`).Scan(&bc); err != nil {
			t.Fatal(err)
		}
		credits := map[string]int{}
		for i := 0; i < 12; i++ {
			in := s.T.Payment()
			switch i {
			case 10:
				in.CW, in.CD, in.C, in.CLast = 1, 3, bc, ""
			case 11:
				in.C, in.CLast = 0, "BARBARBAR"
			}
			if err := s.payment(ctx, conn, in); err != nil {
				t.Fatalf("%s: payment %+v: %v", mode, in, err)
			}
			checkPayment(t, ctx, check, mode, in, &s.Pay)
			credits[string(s.Pay.CCredit)]++
		}
		if credits["BC"] == 0 || credits["GC"] == 0 {
			t.Errorf("%s: payments' credits %v: the test did not see both", mode, credits)
		}
		// Delivery delivers each district's oldest undelivered order of the warehouse and
		// returns how many.
		var oldest []int32
		if err := check.QueryRow(ctx, `SELECT array_agg(o ORDER BY d) FROM (SELECT no_d_id AS d, min(no_o_id) AS o
			FROM tpcc.new_order WHERE no_w_id = 1 GROUP BY no_d_id) x`).Scan(&oldest); err != nil {
			t.Fatal(err)
		}
		del := DeliveryInput{W: 1, Carrier: 7}
		if err := s.delivery(ctx, conn, del); err != nil {
			t.Fatalf("%s: delivery: %v", mode, err)
		}
		var delivered, left int
		if err := check.QueryRow(ctx, `SELECT count(*) FILTER (WHERE o_carrier_id = 7 AND NOT EXISTS (SELECT 1 FROM tpcc.new_order
			WHERE no_w_id = 1 AND no_d_id = o_d_id AND no_o_id = o_id)), count(*) FILTER (WHERE o_carrier_id IS NULL)
			FROM tpcc.orders WHERE o_w_id = 1 AND o_id = ($1::int[])[o_d_id]`, oldest).Scan(&delivered, &left); err != nil {
			t.Fatal(err)
		}
		if len(oldest) != DistrictsPerWH || s.Delivered != DistrictsPerWH || delivered != DistrictsPerWH || left != 0 {
			t.Fatalf("%s: delivery returned %d; of the %d districts' oldest orders %v, %d delivered with carrier 7, %d not",
				mode, s.Delivered, len(oldest), oldest, delivered, left)
		}
		if orders < 50 || brands['B'] == 0 || brands['G'] == 0 {
			t.Errorf("%s: %d orders, brand-generic flags %v: the test did not see both", mode, orders, brands)
		}
		// By name: the customer at position ceil(n/2).
		osIn := s.T.OrderStatus()
		osIn.CLast, osIn.C = "BARBARBAR", 0
		if err := s.orderStatus(ctx, conn, osIn, false); err != nil {
			t.Fatalf("%s: order-status by name: %v", mode, err)
		}
		rows, _ := check.Query(ctx, `SELECT c_id FROM tpcc.customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
			ORDER BY c_first`, osIn.W, osIn.D, osIn.CLast)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		want := 0
		if len(ids) > 0 {
			want = int(ids[(len(ids)+1)/2-1])
		}
		if err != nil || s.OS.CustomerID != want || s.OS.CLast != osIn.CLast || s.OS.OrderID == 0 || len(s.OS.Lines) == 0 {
			t.Fatalf("%s: order-status by name: %+v, want customer %d (%v)", mode, s.OS, want, err)
		}
	}

	// Stock-Level: the same count in both modes, and the count the spec's two reads give.
	for thr := 10; thr <= 20; thr += 5 {
		in := StockLevelInput{W: 1, D: 2, Threshold: thr}
		var got [2]int
		for i, mode := range []Mode{ModeFunctions, ModeClient} {
			s := &Session{Primary: conn, Mode: mode}
			if err := s.stockLevel(ctx, conn, in); err != nil {
				t.Fatalf("%s: stock-level: %v", mode, err)
			}
			got[i] = s.LowStock
		}
		var next, want int
		if err := check.QueryRow(ctx, `SELECT d_next_o_id FROM tpcc.district WHERE d_w_id = 1 AND d_id = 2`).Scan(&next); err != nil {
			t.Fatal(err)
		}
		if err := check.QueryRow(ctx, `SELECT count(DISTINCT s_i_id) FROM tpcc.order_line, tpcc.stock WHERE ol_w_id = 1 AND ol_d_id = 2
			AND ol_o_id >= $1 - 20 AND ol_o_id < $1 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < $2`, next, thr).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if got[0] != want || got[1] != want {
			t.Errorf("stock-level threshold %d: functions %d, client %d, want %d", thr, got[0], got[1], want)
		}
	}
	mustCheck(t, ctx, check, "after the transactions")
}

// checkPayment compares Payment's output with what the database holds right after it: the
// customer (by id, or of that last name), its balance and data, the addresses and the history
// row of that date.
func checkPayment(t *testing.T, ctx context.Context, db *pgx.Conn, mode Mode, in PaymentInput, p *PaymentOutput) {
	t.Helper()
	var c PaymentOutput
	var data string
	var cid int
	if err := db.QueryRow(ctx, `SELECT c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
		c_since, c_credit, c_credit_lim::float8, c_discount::float8, c_balance::float8, c_data,
		w_street_1, w_street_2, w_city, w_state, w_zip, d_street_1, d_street_2, d_city, d_state, d_zip
		FROM tpcc.customer, tpcc.warehouse, tpcc.district
		WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 AND w_id = $4 AND d_w_id = $4 AND d_id = $5`,
		in.CW, in.CD, p.CustomerID, in.W, in.D).Scan(&cid, &c.CFirst, &c.CMiddle, &c.CLast, &c.CAddr.Street1, &c.CAddr.Street2,
		&c.CAddr.City, &c.CAddr.State, &c.CAddr.Zip, &c.CPhone, &c.CSince, &c.CCredit, &c.CCreditLim, &c.CDiscount, &c.CBalance, &data,
		&c.WAddr.Street1, &c.WAddr.Street2, &c.WAddr.City, &c.WAddr.State, &c.WAddr.Zip,
		&c.DAddr.Street1, &c.DAddr.Street2, &c.DAddr.City, &c.DAddr.State, &c.DAddr.Zip); err != nil {
		t.Fatalf("%s: payment %+v: customer %d: %v", mode, in, p.CustomerID, err)
	}
	if string(c.CCredit) == "BC" {
		c.CData = []byte(data[:min(200, len(data))])
	}
	c.CustomerID, c.W, c.D, c.CW, c.CD, c.Amount, c.Date = cid, in.W, in.D, in.CW, in.CD, float64(in.Amount)/100, p.Date
	if (in.CLast == "" && p.CustomerID != in.C) || (in.CLast != "" && string(p.CLast) != in.CLast) ||
		paymentText(p) != paymentText(&c) || !p.CSince.Equal(c.CSince) {
		t.Fatalf("%s: payment %+v returned\n%s\nthe database holds\n%s", mode, in, paymentText(p), paymentText(&c))
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM tpcc.history WHERE h_c_id = $1 AND h_c_d_id = $2 AND h_c_w_id = $3
		AND h_d_id = $4 AND h_w_id = $5 AND h_date = $6 AND h_amount * 100 = $7`, p.CustomerID, in.CD, in.CW, in.D, in.W,
		p.Date, in.Amount).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%s: payment %+v: %d history rows of date %v (%v)", mode, in, n, p.Date, err)
	}
}

// paymentText shows a Payment's output, its text as text.
func paymentText(p *PaymentOutput) string {
	addr := func(a Address) string {
		return fmt.Sprintf("%q", [][]byte{a.Street1, a.Street2, a.City, a.State, a.Zip})
	}
	return fmt.Sprintf("date %v w %d %s d %d %s customer %d/%d/%d %q %q %q %s phone %q since %v credit %q lim %.2f discount %.4f balance %.2f amount %.2f data %q",
		p.Date, p.W, addr(p.WAddr), p.D, addr(p.DAddr), p.CW, p.CD, p.CustomerID, p.CFirst, p.CMiddle, p.CLast, addr(p.CAddr),
		p.CPhone, p.CSince.UTC(), p.CCredit, p.CCreditLim, p.CDiscount, p.CBalance, p.Amount, p.CData)
}

// checkNewOrder compares New-Order's output with what the database holds right after it.
func checkNewOrder(t *testing.T, ctx context.Context, db *pgx.Conn, mode Mode, in NewOrderInput, o *NewOrderOutput, brands map[byte]int) {
	t.Helper()
	var cLast, cCredit string
	var disc, wTax, dTax float64
	var entry time.Time
	var olCnt int
	if err := db.QueryRow(ctx, `SELECT c_last, c_credit, c_discount::float8, w_tax::float8, d_tax::float8, o_entry_d, o_ol_cnt
		FROM tpcc.orders, tpcc.customer, tpcc.warehouse, tpcc.district
		WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3 AND c_w_id = $1 AND c_d_id = $2 AND c_id = o_c_id AND o_c_id = $4
		AND w_id = $1 AND d_w_id = $1 AND d_id = $2`, in.W, in.D, o.OrderID, in.C).Scan(&cLast, &cCredit, &disc, &wTax, &dTax, &entry, &olCnt); err != nil {
		t.Fatalf("%s: order %d of customer %d not found: %v", mode, o.OrderID, in.C, err)
	}
	if o.CLast != cLast || o.CCredit != cCredit || o.CDiscount != disc || o.WTax != wTax || o.DTax != dTax ||
		!o.EntryD.Equal(entry) || olCnt != len(in.Items) || len(o.Lines) != olCnt {
		t.Fatalf("%s: new-order output %s %s %v %v %v %v, %d lines; database %s %s %v %v %v %v, %d lines", mode,
			o.CLast, o.CCredit, o.CDiscount, o.WTax, o.DTax, o.EntryD, len(o.Lines), cLast, cCredit, disc, wTax, dTax, entry, olCnt)
	}
	var sum int64
	for i, l := range o.Lines {
		var name, iData, sData string
		var price, amount int64
		var stock int
		if err := db.QueryRow(ctx, `SELECT i_name, (i_price * 100)::int8, i_data, s_quantity, s_data, (ol_amount * 100)::int8
			FROM tpcc.order_line, tpcc.item, tpcc.stock WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 AND ol_number = $4
			AND i_id = ol_i_id AND s_w_id = ol_supply_w_id AND s_i_id = ol_i_id`, in.W, in.D, o.OrderID, i+1).Scan(
			&name, &price, &iData, &stock, &sData, &amount); err != nil {
			t.Fatalf("%s: order %d line %d: %v", mode, o.OrderID, i+1, err)
		}
		brand := byte('G')
		if bytes.Contains([]byte(iData), []byte("ORIGINAL")) && bytes.Contains([]byte(sData), []byte("ORIGINAL")) {
			brand = 'B'
		}
		// A repeated item's stock is updated again by its later line: compare the last.
		last := true
		for _, m := range o.Lines[i+1:] {
			last = last && !(m.ItemID == l.ItemID && m.SupplyW == l.SupplyW)
		}
		if l.ItemID != in.Items[i].ID || string(l.Name) != name || l.Price != price || l.Amount != amount ||
			l.Amount != int64(l.Quantity)*price || (last && l.Stock != stock) || l.Stock < 10 || l.Stock > 100 || l.BrandGeneric != brand {
			t.Fatalf("%s: order %d line %d: output %+v (name %q); database name %q price %d amount %d stock %d brand %c",
				mode, o.OrderID, i+1, l, l.Name, name, price, amount, stock, brand)
		}
		brands[l.BrandGeneric]++
		sum += amount
	}
	want := float64(sum) / 100 * (1 - disc) * (1 + wTax + dTax)
	if math.Abs(o.Total-want) > 0.005 {
		t.Fatalf("%s: order %d total %v, want %v", mode, o.OrderID, o.Total, want)
	}
}
