-- agbench tpcc: the five TPC-C transactions as server-side functions (one call, one
-- transaction), as HammerDB runs them on PostgreSQL. Installed into schema tpcc by build.
-- Clause numbers refer to the TPC-C specification 5.11.

-- New-Order (clause 2.4.2). The client sorts the items by (supply warehouse, item) so that
-- concurrent orders lock stock rows in one order. An unused item id makes the order roll
-- back (clause 2.4.2.3): SQLSTATE AGB01. The lines are processed set-wise, one statement for
-- the stock updates and one for the order lines, when no item repeats within the order (the
-- usual case); an order that repeats an item takes the line-by-line path, because the stock
-- rule of clause 2.4.2.2 applies to each line in turn.
-- It returns the output of clause 2.4.3.3, one row per order line (in no particular order:
-- each row carries its line number): the order's id, the customer's last name, credit and
-- discount, the taxes and the entry date repeated on every row, then the line's number, I_NAME,
-- I_PRICE and OL_AMOUNT (in cents), S_QUANTITY after the update and the brand-generic flag: 'B'
-- when both I_DATA and S_DATA contain "ORIGINAL", else 'G'. The order's total (clause 2.4.2.2)
-- is computed by the driver from these, as in client mode: a window sum and a sort here cost
-- the server 7% of the function's CPU (measured on this machine).
CREATE FUNCTION tpcc.neword(p_w_id int, p_d_id int, p_c_id int, p_all_local int,
    p_i_ids int[], p_supply_w_ids int[], p_quantities int[])
RETURNS TABLE (order_id int, cust_last text, cust_credit text, cust_discount float8, wh_tax float8,
    dist_tax float8, entry_d timestamp, line int, item_name text, item_price int8,
    line_amount int8, stock_qty int, brand text)
LANGUAGE plpgsql AS $$
DECLARE
    v_o_id int; v_w_tax numeric; v_d_tax numeric; v_c_discount numeric; v_c_last text; v_c_credit text;
    v_entry timestamp := localtimestamp; v_i_price numeric; v_i_name text; v_i_data text; v_s_data text;
    v_s_dist text; v_s_qty int; v_cnt int := array_length(p_i_ids, 1); v_lines int; v_distinct bool := true;
    a_name text[]; a_price numeric[]; a_qty int[]; a_brand text[];
BEGIN
    -- The district's next order id and tax, with the warehouse's tax and the customer's
    -- discount, last name and credit read in the same statement.
    UPDATE tpcc.district SET d_next_o_id = d_next_o_id + 1 FROM tpcc.warehouse w, tpcc.customer cu
        WHERE d_w_id = p_w_id AND d_id = p_d_id AND w.w_id = p_w_id
          AND cu.c_w_id = p_w_id AND cu.c_d_id = p_d_id AND cu.c_id = p_c_id
        RETURNING d_next_o_id - 1, d_tax, w.w_tax, cu.c_discount, cu.c_last, cu.c_credit
        INTO v_o_id, v_d_tax, v_w_tax, v_c_discount, v_c_last, v_c_credit;
    FOR i IN 2..v_cnt LOOP
        IF p_i_ids[i] = p_i_ids[i-1] AND p_supply_w_ids[i] = p_supply_w_ids[i-1] THEN
            v_distinct := false;
        END IF;
    END LOOP;
    -- The order and its new-order row are inserted by the statement of the lines (one
    -- statement fewer to start and end: starting the statements' executors took 14% of the
    -- backends' CPU in functions mode, measured with perf on this machine).
    IF v_distinct THEN
        RETURN QUERY
        WITH o AS (INSERT INTO tpcc.orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
            VALUES (v_o_id, p_d_id, p_w_id, p_c_id, v_entry, NULL, v_cnt, p_all_local)),
        n AS (INSERT INTO tpcc.new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id)),
        u AS (SELECT * FROM unnest(p_i_ids, p_supply_w_ids, p_quantities) WITH ORDINALITY AS u(i_id, w_id, qty, n)),
        s AS (UPDATE tpcc.stock SET
                s_quantity = CASE WHEN s_quantity - u.qty >= 10 THEN s_quantity - u.qty ELSE s_quantity - u.qty + 91 END,
                s_ytd = s_ytd + u.qty, s_order_cnt = s_order_cnt + 1,
                s_remote_cnt = s_remote_cnt + CASE WHEN u.w_id <> p_w_id THEN 1 ELSE 0 END
            FROM u WHERE s_w_id = u.w_id AND s_i_id = u.i_id
            RETURNING u.n, u.i_id, u.w_id, u.qty, s_quantity, s_data, CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02
                WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist),
        si AS (SELECT s.*, i.i_name, i.i_price, i.i_data FROM s JOIN tpcc.item i ON i.i_id = s.i_id),
        l AS (INSERT INTO tpcc.order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
            SELECT v_o_id, p_d_id, p_w_id, si.n, si.i_id, si.w_id, NULL, si.qty, si.qty * si.i_price, si.dist FROM si)
        SELECT v_o_id, v_c_last, v_c_credit, v_c_discount::float8, v_w_tax::float8, v_d_tax::float8, v_entry, si.n::int, si.i_name::text, (si.i_price * 100)::int8, (si.qty * si.i_price * 100)::int8, si.s_quantity::int,
            CASE WHEN si.i_data LIKE '%ORIGINAL%' AND si.s_data LIKE '%ORIGINAL%' THEN 'B' ELSE 'G' END
        FROM si;
        GET DIAGNOSTICS v_lines = ROW_COUNT;
        IF v_lines < v_cnt THEN
            RAISE EXCEPTION 'item number % is not valid', p_i_ids[v_cnt] USING ERRCODE = 'AGB01';
        END IF;
    ELSE
        WITH o AS (INSERT INTO tpcc.orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
            VALUES (v_o_id, p_d_id, p_w_id, p_c_id, v_entry, NULL, v_cnt, p_all_local))
        INSERT INTO tpcc.new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
        FOR i IN 1..v_cnt LOOP
            SELECT i_price, i_name, i_data INTO v_i_price, v_i_name, v_i_data FROM tpcc.item WHERE i_id = p_i_ids[i];
            IF NOT FOUND THEN
                RAISE EXCEPTION 'item number % is not valid', p_i_ids[i] USING ERRCODE = 'AGB01';
            END IF;
            UPDATE tpcc.stock SET
                s_quantity = CASE WHEN s_quantity - p_quantities[i] >= 10 THEN s_quantity - p_quantities[i]
                                  ELSE s_quantity - p_quantities[i] + 91 END,
                s_ytd = s_ytd + p_quantities[i], s_order_cnt = s_order_cnt + 1,
                s_remote_cnt = s_remote_cnt + CASE WHEN p_supply_w_ids[i] <> p_w_id THEN 1 ELSE 0 END
            WHERE s_w_id = p_supply_w_ids[i] AND s_i_id = p_i_ids[i]
            RETURNING s_quantity, s_data, CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
                WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END INTO v_s_qty, v_s_data, v_s_dist;
            INSERT INTO tpcc.order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
            VALUES (v_o_id, p_d_id, p_w_id, i, p_i_ids[i], p_supply_w_ids[i], NULL, p_quantities[i],
                p_quantities[i] * v_i_price, v_s_dist);
            a_name[i] := v_i_name; a_price[i] := v_i_price; a_qty[i] := v_s_qty;
            a_brand[i] := CASE WHEN v_i_data LIKE '%ORIGINAL%' AND v_s_data LIKE '%ORIGINAL%' THEN 'B' ELSE 'G' END;
        END LOOP;
        RETURN QUERY
        SELECT v_o_id, v_c_last, v_c_credit, v_c_discount::float8, v_w_tax::float8, v_d_tax::float8, v_entry, u.n::int, u.nm, (u.p * 100)::int8, (u.q * u.p * 100)::int8, u.sq, u.b
        FROM unnest(a_name, a_price, p_quantities, a_qty, a_brand) WITH ORDINALITY AS u(nm, p, q, sq, b, n);
    END IF;
END $$;

-- Payment (clause 2.5.2): the statement client mode sends (paymentQuery), in a function:
-- by customer id, or by last name taking the customer at position ceil(n/2) of those of that
-- name sorted by first name (clause 2.5.2.2). It returns the output of clause 2.5.3.3: the
-- customer, its address, phone, since, credit, credit limit, discount, balance after the
-- payment and (bad credit only) the first 200 characters of its data, the warehouse's and the
-- district's addresses and the payment's date.
CREATE FUNCTION tpcc.payment(p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int, p_c_id int,
    p_h_amount numeric, p_c_last text)
RETURNS TABLE (cust_id int, cust_first text, cust_middle text, cust_last text, cust_street_1 text, cust_street_2 text,
    cust_city text, cust_state text, cust_zip text, cust_phone text, cust_since timestamp, cust_credit text,
    cust_credit_lim float8, cust_discount float8, cust_balance float8, cust_data text, wh_street_1 text, wh_street_2 text,
    wh_city text, wh_state text, wh_zip text, dist_street_1 text, dist_street_2 text, dist_city text, dist_state text,
    dist_zip text, pay_date timestamp)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY {{PAYMENT}};
END $$;

-- Order-Status (clause 2.6.2): the customer's most recent order and its lines, as clause
-- 2.6.3.3 shows them: one row per order line (one row with NULL order columns when the
-- customer has no order), the customer's and the order's columns repeated on each row.
CREATE FUNCTION tpcc.ostat(p_w_id int, p_d_id int, p_c_id int, p_c_last text)
RETURNS TABLE (cust_id int, cust_first text, cust_middle text, cust_last text, cust_balance float8,
    order_id int, entry_d timestamp, carrier int, item int, supply_w int, quantity int, amount int8, delivery_d timestamp)
LANGUAGE plpgsql AS $$
DECLARE
    v_c_id int := p_c_id; v_ids int[];
BEGIN
    IF p_c_last IS NOT NULL THEN
        SELECT array_agg(cu.c_id ORDER BY cu.c_first) INTO v_ids FROM tpcc.customer cu
            WHERE cu.c_w_id = p_w_id AND cu.c_d_id = p_d_id AND cu.c_last = p_c_last;
        v_c_id := v_ids[(array_length(v_ids, 1) + 1) / 2];
    END IF;
    RETURN QUERY {{ORDER_STATUS}};
END $$;

-- Delivery (clause 2.7.4), run in the foreground: the ten districts' oldest undelivered
-- orders delivered by the statement client mode sends (deliveryQuery); it returns the number
-- of districts delivered.
CREATE FUNCTION tpcc.delivery(p_w_id int, p_carrier_id int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_done int;
BEGIN
    {{DELIVERY}} INTO v_done;
    RETURN v_done;
END $$;

-- Stock-Level (clause 2.8.2): the statement client mode sends (stockLevelQuery): distinct
-- items of the district's last 20 orders whose stock is below the threshold.
CREATE FUNCTION tpcc.slev(p_w_id int, p_d_id int, p_threshold int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_low int;
BEGIN
    {{STOCK_LEVEL}} INTO v_low;
    RETURN v_low;
END $$;
