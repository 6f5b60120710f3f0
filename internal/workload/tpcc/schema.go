package tpcc

// Schema is the PostgreSQL schema (namespace) that holds the workload's tables, functions
// and metadata, so that drop is one statement and nothing else in the database is touched.
const Schema = "tpcc"

// SchemaVersion is the version of the layout below, recorded in tpcc_meta; a database built
// by another version (or by another tool) is refused rather than used. Version 2: neword and
// ostat return the output of clauses 2.4.3.3 and 2.6.3.3; 3: neword returns its lines without
// the order's total, delivery is one statement, payment returns the output of clause 2.5.3.3.
const SchemaVersion = 3

// tableDDL creates the nine tables of clause 1.3 without keys; keys and indexes come after
// the load, which is much faster than maintaining them row by row.
var tableDDL = []string{
	`CREATE TABLE item (i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price numeric(5,2), i_data varchar(50))`,
	`CREATE TABLE warehouse (w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
		w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4,4), w_ytd numeric(12,2))`,
	`CREATE TABLE district (d_id smallint NOT NULL, d_w_id int NOT NULL, d_name varchar(10), d_street_1 varchar(20),
		d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax numeric(4,4),
		d_ytd numeric(12,2), d_next_o_id int)`,
	`CREATE TABLE stock (s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity smallint, s_dist_01 char(24),
		s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24),
		s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd int,
		s_order_cnt smallint, s_remote_cnt smallint, s_data varchar(50))`,
	`CREATE TABLE customer (c_id int NOT NULL, c_d_id smallint NOT NULL, c_w_id int NOT NULL, c_first varchar(16),
		c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20),
		c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp, c_credit char(2),
		c_credit_lim numeric(12,2), c_discount numeric(4,4), c_balance numeric(12,2), c_ytd_payment numeric(12,2),
		c_payment_cnt int, c_delivery_cnt int, c_data varchar(500))`,
	`CREATE TABLE history (h_c_id int, h_c_d_id smallint, h_c_w_id int, h_d_id smallint, h_w_id int,
		h_date timestamp, h_amount numeric(6,2), h_data varchar(24))`,
	`CREATE TABLE orders (o_id int NOT NULL, o_d_id smallint NOT NULL, o_w_id int NOT NULL, o_c_id int,
		o_entry_d timestamp, o_carrier_id smallint, o_ol_cnt smallint, o_all_local smallint)`,
	`CREATE TABLE new_order (no_o_id int NOT NULL, no_d_id smallint NOT NULL, no_w_id int NOT NULL)`,
	`CREATE TABLE order_line (ol_o_id int NOT NULL, ol_d_id smallint NOT NULL, ol_w_id int NOT NULL,
		ol_number smallint NOT NULL, ol_i_id int, ol_supply_w_id int, ol_delivery_d timestamp,
		ol_quantity smallint, ol_amount numeric(6,2), ol_dist_info char(24))`,
}

// fillfactor leaves room on the pages of the tables that transactions update, so that the
// updates stay heap-only (HOT) instead of touching every index. Delivery sets the delivery
// date of every line of an order at once, and the lines of the orders delivered together
// share pages: at the default fillfactor a third of those updates were not HOT, each a new
// index entry (66% HOT after a few runs; 97% at 80).
var fillfactor = map[string]int{"warehouse": 50, "district": 50, "customer": 90, "stock": 90, "orders": 90, "order_line": 80}

// afterLoad makes, table by table, the primary keys of clause 1.3 and the two secondary
// indexes the transactions need: customers by last name (Payment and Order-Status by name,
// clauses 2.5.2.2 and 2.6.2.2) and orders by customer (Order-Status's most recent order);
// then ANALYZE. Each table's statements run in order on one connection, the tables in
// parallel, largest first, so that no phase waits for the slowest table of another.
var afterLoad = [][]string{
	{`ALTER TABLE order_line ADD CONSTRAINT order_line_pkey PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)`, `ANALYZE order_line`},
	{`ALTER TABLE stock ADD CONSTRAINT stock_pkey PRIMARY KEY (s_w_id, s_i_id)`, `ANALYZE stock`},
	{`ALTER TABLE customer ADD CONSTRAINT customer_pkey PRIMARY KEY (c_w_id, c_d_id, c_id)`,
		`CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first)`, `ANALYZE customer`},
	{`ALTER TABLE orders ADD CONSTRAINT orders_pkey PRIMARY KEY (o_w_id, o_d_id, o_id)`,
		`CREATE UNIQUE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)`, `ANALYZE orders`},
	{`ANALYZE history`},
	{`ALTER TABLE new_order ADD CONSTRAINT new_order_pkey PRIMARY KEY (no_w_id, no_d_id, no_o_id)`, `ANALYZE new_order`},
	{`ALTER TABLE item ADD CONSTRAINT item_pkey PRIMARY KEY (i_id)`, `ANALYZE item`},
	{`ALTER TABLE district ADD CONSTRAINT district_pkey PRIMARY KEY (d_w_id, d_id)`, `ANALYZE district`},
	{`ALTER TABLE warehouse ADD CONSTRAINT warehouse_pkey PRIMARY KEY (w_id)`, `ANALYZE warehouse`},
}

// metaDDL is the workload's own record of the build: its state ("building" until everything
// is in place, then "ready"), the seed, the warehouses and the load's NURand constants, which
// a run needs for the C-delta rule of clause 2.1.6.1.
const metaDDL = `CREATE TABLE tpcc_meta (
	version int NOT NULL, state text NOT NULL, warehouses int NOT NULL, seed bigint NOT NULL,
	c_last int NOT NULL, c_id int NOT NULL, ol_i_id int NOT NULL,
	started timestamptz NOT NULL DEFAULT now(), finished timestamptz)`

// Build states recorded in tpcc_meta.
const (
	StateBuilding = "building"
	StateReady    = "ready"
)
