package tpcc

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// Tables are the nine tables of clause 1.3, in load order.
var Tables = []string{"item", "warehouse", "district", "stock", "customer", "history", "orders", "new_order", "order_line"}

// Table streams: each table of each warehouse draws from its own Rand stream, so that the
// data does not depend on which loader loads what, nor in which order.
const (
	streamItem = iota + 1
	streamWarehouse
	streamDistrict
	streamStock
	streamCustomer
	streamHistory
	streamOrders
	streamOrderLine
	streamOLCnt
	streamPermutation
	streamConstants
)

func stream(w, table int) uint64 { return uint64(w)<<8 | uint64(table) }

// source is a pgx.CopyFromSource that makes its rows as COPY asks for them. fill writes row i
// into row, using buf for its strings; the buffers are reused, which is safe because COPY
// encodes each row before asking for the next.
type source struct {
	n, i int
	row  []any
	buf  []byte
	fill func(s *source, i int)
}

func newSource(n, cols int, fill func(s *source, i int)) *source {
	return &source{n: n, row: make([]any, cols), buf: make([]byte, 0, 4096), fill: fill}
}

func (s *source) Next() bool {
	if s.i >= s.n {
		return false
	}
	s.buf = s.buf[:0]
	s.fill(s, s.i)
	s.i++
	return true
}

func (s *source) Values() ([]any, error) { return s.row, nil }
func (s *source) Err() error             { return nil }

// str appends with f and returns what it appended.
func (s *source) str(f func([]byte) []byte) []byte {
	start := len(s.buf)
	s.buf = f(s.buf)
	return s.buf[start:len(s.buf):len(s.buf)]
}

// Generator makes the rows of the initial database for one seed, load constants and load
// time (C_SINCE, O_ENTRY_D, H_DATE and OL_DELIVERY_D take the load's time).
type Generator struct {
	Seed uint64
	C    Constants
	Now  time.Time
}

// tableData is one COPY: table, columns and the rows' source.
type tableData struct {
	table string
	cols  []string
	src   pgx.CopyFromSource
	rows  int // exact, or estimated for order_line
}

var (
	itemCols      = []string{"i_id", "i_im_id", "i_name", "i_price", "i_data"}
	warehouseCols = []string{"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"}
	districtCols  = []string{"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip", "d_tax", "d_ytd", "d_next_o_id"}
	stockCols     = []string{"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05",
		"s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"}
	customerCols = []string{"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2", "c_city",
		"c_state", "c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance", "c_ytd_payment",
		"c_payment_cnt", "c_delivery_cnt", "c_data"}
	historyCols   = []string{"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"}
	ordersCols    = []string{"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"}
	newOrderCols  = []string{"no_o_id", "no_d_id", "no_w_id"}
	orderLineCols = []string{"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d",
		"ol_quantity", "ol_amount", "ol_dist_info"}
)

// items returns the ITEM table (clause 4.3.3.1).
func (gen *Generator) items() tableData {
	g := NewRand(gen.Seed, stream(0, streamItem))
	return tableData{"item", itemCols, newSource(Items, len(itemCols), func(s *source, i int) {
		s.row[0] = int32(i + 1)
		s.row[1] = int32(g.Int(1, 10000))
		s.row[2] = s.str(func(b []byte) []byte { return g.AString(b, 14, 24) })
		s.row[3] = Cents(g.Cents(100, 10000), 2)
		s.row[4] = s.str(func(b []byte) []byte { return g.Data(b, 26, 50) })
	}), Items}
}

// address fills street 1 and 2, city, state and zip at row[at:at+5].
func address(s *source, g *Rand, at int) {
	s.row[at] = s.str(func(b []byte) []byte { return g.AString(b, 10, 20) })
	s.row[at+1] = s.str(func(b []byte) []byte { return g.AString(b, 10, 20) })
	s.row[at+2] = s.str(func(b []byte) []byte { return g.AString(b, 10, 20) })
	s.row[at+3] = s.str(func(b []byte) []byte { return g.LString(b, 2) })
	s.row[at+4] = s.str(g.Zip)
}

// warehouseTables returns the tables of warehouse w in load order.
func (gen *Generator) warehouseTables(w int) []tableData {
	return []tableData{gen.warehouse(w), gen.districts(w), gen.stock(w), gen.customers(w), gen.history(w),
		gen.orders(w), gen.newOrders(w), gen.orderLines(w)}
}

func (gen *Generator) warehouse(w int) tableData {
	g := NewRand(gen.Seed, stream(w, streamWarehouse))
	return tableData{"warehouse", warehouseCols, newSource(1, len(warehouseCols), func(s *source, _ int) {
		s.row[0] = int32(w)
		s.row[1] = s.str(func(b []byte) []byte { return g.AString(b, 6, 10) })
		address(s, g, 2)
		s.row[7] = Cents(g.Cents(0, 2000), 4)
		s.row[8] = Cents(30000000, 2)
	}), 1}
}

func (gen *Generator) districts(w int) tableData {
	g := NewRand(gen.Seed, stream(w, streamDistrict))
	return tableData{"district", districtCols, newSource(DistrictsPerWH, len(districtCols), func(s *source, i int) {
		s.row[0] = int16(i + 1)
		s.row[1] = int32(w)
		s.row[2] = s.str(func(b []byte) []byte { return g.AString(b, 6, 10) })
		address(s, g, 3)
		s.row[8] = Cents(g.Cents(0, 2000), 4)
		s.row[9] = Cents(3000000, 2)
		s.row[10] = int32(OrdersPerDistrict + 1)
	}), DistrictsPerWH}
}

func (gen *Generator) stock(w int) tableData {
	g := NewRand(gen.Seed, stream(w, streamStock))
	return tableData{"stock", stockCols, newSource(Items, len(stockCols), func(s *source, i int) {
		s.row[0] = int32(i + 1)
		s.row[1] = int32(w)
		s.row[2] = int16(g.Int(10, 100))
		for d := 0; d < 10; d++ {
			s.row[3+d] = s.str(func(b []byte) []byte { return g.AString(b, 24, 24) })
		}
		s.row[13] = int32(0)
		s.row[14] = int16(0)
		s.row[15] = int16(0)
		s.row[16] = s.str(func(b []byte) []byte { return g.Data(b, 26, 50) })
	}), Items}
}

var (
	middleOE = []byte("OE")
	creditGC = []byte("GC")
	creditBC = []byte("BC")
)

func (gen *Generator) customers(w int) tableData {
	g := NewRand(gen.Seed, stream(w, streamCustomer))
	n := DistrictsPerWH * CustomersPerDistrict
	return tableData{"customer", customerCols, newSource(n, len(customerCols), func(s *source, i int) {
		c := i%CustomersPerDistrict + 1
		s.row[0] = int32(c)
		s.row[1] = int16(i/CustomersPerDistrict + 1)
		s.row[2] = int32(w)
		s.row[3] = s.str(func(b []byte) []byte { return g.AString(b, 8, 16) })
		s.row[4] = middleOE
		last := c - 1
		if c > NamedCustomers {
			last = g.NURand(aCLast, gen.C.CLast, 0, 999)
		}
		s.row[5] = s.str(func(b []byte) []byte { return LastName(b, last) })
		address(s, g, 6)
		s.row[11] = s.str(func(b []byte) []byte { return g.NString(b, 16, 16) })
		s.row[12] = gen.Now
		if g.Percent(10) {
			s.row[13] = creditBC
		} else {
			s.row[13] = creditGC
		}
		s.row[14] = Cents(5000000, 2)
		s.row[15] = Cents(g.Cents(0, 5000), 4)
		s.row[16] = Cents(-1000, 2)
		s.row[17] = Cents(1000, 2)
		s.row[18] = int32(1)
		s.row[19] = int32(0)
		s.row[20] = s.str(func(b []byte) []byte { return g.AString(b, 300, 500) })
	}), n}
}

func (gen *Generator) history(w int) tableData {
	g := NewRand(gen.Seed, stream(w, streamHistory))
	n := DistrictsPerWH * CustomersPerDistrict
	return tableData{"history", historyCols, newSource(n, len(historyCols), func(s *source, i int) {
		d := int16(i/CustomersPerDistrict + 1)
		s.row[0] = int32(i%CustomersPerDistrict + 1)
		s.row[1] = d
		s.row[2] = int32(w)
		s.row[3] = d
		s.row[4] = int32(w)
		s.row[5] = gen.Now
		s.row[6] = Cents(1000, 2)
		s.row[7] = s.str(func(b []byte) []byte { return g.AString(b, 12, 24) })
	}), n}
}

// orderShape replays, for one warehouse, the per-order random choices that ORDERS and
// ORDER-LINE share: the line count of every order and the customer of every order (a random
// permutation of the customers in each district).
type orderShape struct {
	olcnt *Rand
	perm  *Rand
	cust  []int
}

func (gen *Generator) newOrderShape(w int) *orderShape {
	return &orderShape{olcnt: NewRand(gen.Seed, stream(w, streamOLCnt)), perm: NewRand(gen.Seed, stream(w, streamPermutation))}
}

// next returns the customer and line count of order i (0-based over the warehouse).
func (o *orderShape) next(i int) (cust, olCnt int) {
	if i%OrdersPerDistrict == 0 {
		o.cust = o.perm.Permutation(CustomersPerDistrict)
	}
	return o.cust[i%OrdersPerDistrict], o.olcnt.Int(MinOLCnt, MaxOLCnt)
}

func (gen *Generator) orders(w int) tableData {
	g := NewRand(gen.Seed, stream(w, streamOrders))
	shape := gen.newOrderShape(w)
	n := DistrictsPerWH * OrdersPerDistrict
	return tableData{"orders", ordersCols, newSource(n, len(ordersCols), func(s *source, i int) {
		o := i%OrdersPerDistrict + 1
		cust, olCnt := shape.next(i)
		s.row[0] = int32(o)
		s.row[1] = int16(i/OrdersPerDistrict + 1)
		s.row[2] = int32(w)
		s.row[3] = int32(cust)
		s.row[4] = gen.Now
		if o < FirstUndelivered {
			s.row[5] = int16(g.Int(1, 10))
		} else {
			s.row[5] = nil
		}
		s.row[6] = int16(olCnt)
		s.row[7] = int16(1)
	}), n}
}

func (gen *Generator) newOrders(w int) tableData {
	per := OrdersPerDistrict - FirstUndelivered + 1
	n := DistrictsPerWH * per
	return tableData{"new_order", newOrderCols, newSource(n, len(newOrderCols), func(s *source, i int) {
		s.row[0] = int32(FirstUndelivered + i%per)
		s.row[1] = int16(i/per + 1)
		s.row[2] = int32(w)
	}), n}
}

// orderLineSource walks the orders and their lines; its length is known only as it goes.
type orderLineSource struct {
	gen      *Generator
	g        *Rand
	shape    *orderShape
	w        int
	order    int // 0-based over the warehouse
	ol, olCn int // line number within the order, and the order's line count
	row      []any
	buf      []byte
}

func (gen *Generator) orderLines(w int) tableData {
	s := &orderLineSource{gen: gen, g: NewRand(gen.Seed, stream(w, streamOrderLine)), shape: gen.newOrderShape(w),
		w: w, order: -1, row: make([]any, len(orderLineCols)), buf: make([]byte, 0, 64)}
	return tableData{"order_line", orderLineCols, s, DistrictsPerWH * OrdersPerDistrict * (MinOLCnt + MaxOLCnt) / 2}
}

func (s *orderLineSource) Next() bool {
	if s.ol == s.olCn {
		s.order++
		if s.order == DistrictsPerWH*OrdersPerDistrict {
			return false
		}
		_, s.olCn = s.shape.next(s.order)
		s.ol = 0
	}
	s.ol++
	o := s.order%OrdersPerDistrict + 1
	g := s.g
	s.row[0] = int32(o)
	s.row[1] = int16(s.order/OrdersPerDistrict + 1)
	s.row[2] = int32(s.w)
	s.row[3] = int16(s.ol)
	s.row[4] = int32(g.Int(1, Items))
	s.row[5] = int32(s.w)
	if o < FirstUndelivered {
		s.row[6] = s.gen.Now
		s.row[8] = Cents(0, 2)
	} else {
		s.row[6] = nil
		s.row[8] = Cents(g.Cents(1, 999999), 2)
	}
	s.row[7] = int16(5)
	s.buf = g.AString(s.buf[:0], 24, 24)
	s.row[9] = s.buf
	return true
}

func (s *orderLineSource) Values() ([]any, error) { return s.row, nil }
func (s *orderLineSource) Err() error             { return nil }
