package tpcc

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"testing"
	"time"
)

// fingerprint hashes every value of the tables in order.
func fingerprint(t *testing.T, tables []tableData) (string, map[string]int) {
	t.Helper()
	h := fnv.New64a()
	counts := map[string]int{}
	var b [8]byte
	for _, td := range tables {
		h.Write([]byte(td.table))
		for td.src.Next() {
			row, _ := td.src.Values()
			if len(row) != len(td.cols) {
				t.Fatalf("%s: row of %d values for %d columns", td.table, len(row), len(td.cols))
			}
			counts[td.table]++
			for _, v := range row {
				switch v := v.(type) {
				case nil:
					h.Write([]byte{0})
				case int32:
					binary.LittleEndian.PutUint64(b[:], uint64(v))
					h.Write(b[:])
				case int16:
					binary.LittleEndian.PutUint64(b[:], uint64(v))
					h.Write(b[:])
				case []byte:
					h.Write(v)
					h.Write([]byte{0})
				case Fixed:
					fmt.Fprintf(h, "%d/%d", v.V, v.Scale)
				case time.Time:
					binary.LittleEndian.PutUint64(b[:], uint64(v.UnixNano()))
					h.Write(b[:])
				default:
					t.Fatalf("%s: value of type %T", td.table, v)
				}
			}
		}
	}
	return fmt.Sprintf("%016x", h.Sum64()), counts
}

// TestFingerprint pins the generated data of the items and of warehouse 2 for a fixed seed:
// a change to any generator shows here, and must be deliberate (update the value).
func TestFingerprint(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a whole warehouse")
	}
	now := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	gen := &Generator{Seed: 42, C: NewConstants(NewRand(42, stream(0, streamConstants))), Now: now}
	got, counts := fingerprint(t, append([]tableData{gen.items()}, gen.warehouseTables(2)...))
	const want = "7f5a438194cd9067"
	if got != want {
		t.Errorf("fingerprint of seed 42 = %s, want %s", got, want)
	}
	wantCounts := map[string]int{"item": 100000, "warehouse": 1, "district": 10, "stock": 100000, "customer": 30000,
		"history": 30000, "orders": 30000, "new_order": 9000}
	for table, n := range wantCounts {
		if counts[table] != n {
			t.Errorf("%s: %d rows, want %d", table, counts[table], n)
		}
	}
	if n := counts["order_line"]; n < 30000*MinOLCnt || n > 30000*MaxOLCnt || n < 290000 || n > 310000 {
		t.Errorf("order_line: %d rows, want about 300000", n)
	}
	// Same seed, same data; another seed, other data.
	again, _ := fingerprint(t, gen.warehouseTables(3))
	gen2 := *gen
	again2, _ := fingerprint(t, gen2.warehouseTables(3))
	gen2.Seed = 43
	other, _ := fingerprint(t, gen2.warehouseTables(3))
	if again != again2 || again == other {
		t.Errorf("not deterministic from the seed: %s %s %s", again, again2, other)
	}
}

func TestInitialOrders(t *testing.T) {
	gen := &Generator{Seed: 7, Now: time.Unix(0, 0)}
	o := gen.orders(1)
	seen := map[int32]bool{}
	var olSum int
	for i := 0; o.src.Next(); i++ {
		row, _ := o.src.Values()
		oid, cust, carrier := row[0].(int32), row[3].(int32), row[5]
		if i < OrdersPerDistrict {
			if seen[cust] {
				t.Fatalf("customer %d has two initial orders in district 1", cust)
			}
			seen[cust] = true
		}
		if (oid < FirstUndelivered) != (carrier != nil) {
			t.Fatalf("order %d: carrier %v", oid, carrier)
		}
		olSum += int(row[6].(int16))
	}
	var lines int
	ol := gen.orderLines(1)
	for ol.src.Next() {
		lines++
	}
	if lines != olSum {
		t.Fatalf("order lines %d, sum of O_OL_CNT %d", lines, olSum)
	}
}
