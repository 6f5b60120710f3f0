package experiment

import (
	"github.com/agbench/agbench/internal/drill"
	"github.com/agbench/agbench/internal/privilege"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// What each command needs of its logins (internal/privilege checks it before anything is
// made); docs/privileges.md says the same for people.

// tpccReads are the tables a TPC-C run reads: every one of them (the consistency checks
// after the run read history too).
var tpccReads = []string{"warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock", "tpcc_meta"}

// tpccWrites are what the five transactions write (clause 2): New-Order inserts orders,
// new_order and order_line and updates district and stock; Payment updates warehouse,
// district and customer and inserts history; Delivery deletes new_order (its SELECT ... FOR
// UPDATE needs UPDATE there too) and updates orders, order_line and customer.
var tpccWrites = map[string][]string{
	"warehouse": {"UPDATE"}, "district": {"UPDATE"}, "customer": {"UPDATE"}, "stock": {"UPDATE"},
	"history": {"INSERT"}, "orders": {"INSERT", "UPDATE"}, "order_line": {"INSERT", "UPDATE"},
	"new_order": {"INSERT", "UPDATE", "DELETE"},
}

// TPCCBuildNeeds is what tpcc build needs on the primary: CREATE on the database (it makes
// schema tpcc) and, when a half-built schema is there, its ownership (it drops it first).
func TPCCBuildNeeds() privilege.Needs {
	return privilege.Needs{Command: "tpcc build", Primary: []privilege.Need{
		privilege.CreateSchema(tpcc.Schema), privilege.OwnSchema(tpcc.Schema)}}
}

// TPCCRunNeeds is what a tpcc run needs: on the primary, USAGE on schema tpcc, the tables'
// privileges of its transactions and, in functions mode, EXECUTE on the functions; on the
// standbys that take its read-intent sessions, USAGE and SELECT (and EXECUTE).
func TPCCRunNeeds(functions, readIntent bool) privilege.Needs {
	reads := map[string][]string{}
	all := map[string][]string{}
	for _, t := range tpccReads {
		reads[t] = []string{"SELECT"}
		all[t] = append([]string{"SELECT"}, tpccWrites[t]...)
	}
	n := privilege.Needs{Command: "tpcc run", Primary: []privilege.Need{
		privilege.UseSchema(tpcc.Schema),
		privilege.OnTables(tpcc.Schema, "to run the transactions", all),
	}}
	if readIntent {
		n.Standby = []privilege.Need{privilege.UseSchema(tpcc.Schema),
			privilege.OnTables(tpcc.Schema, "to run Order-Status and Stock-Level", reads)}
	}
	if functions {
		n.Primary = append(n.Primary, privilege.ExecuteFunctions(tpcc.Schema))
		n.Standby = append(n.Standby, privilege.ExecuteFunctions(tpcc.Schema))
		if !readIntent {
			n.Standby = nil
		}
	}
	return n
}

// TPCCCheckNeeds is what tpcc check needs on the primary: USAGE on schema tpcc and SELECT on
// its tables (the consistency conditions read them all).
func TPCCCheckNeeds() privilege.Needs {
	reads := map[string][]string{}
	for _, t := range tpccReads {
		reads[t] = []string{"SELECT"}
	}
	return privilege.Needs{Command: "tpcc check", Primary: []privilege.Need{privilege.UseSchema(tpcc.Schema),
		privilege.OnTables(tpcc.Schema, "to check the consistency conditions", reads)}}
}

// TPCCDropNeeds is what tpcc drop needs on the primary: schema tpcc's ownership.
func TPCCDropNeeds() privilege.Needs {
	n := privilege.OwnSchema(tpcc.Schema)
	n.Why = "to drop it"
	return privilege.Needs{Command: "tpcc drop", Primary: []privilege.Need{n}}
}

// drillNeeds is what an observe drill needs on the primary: its ledger table, dropped when
// it is there and made again.
func drillNeeds() []privilege.Need {
	return []privilege.Need{privilege.CreateTable(drill.LedgerTable), privilege.OwnTable(drill.LedgerTable)}
}

// staleProbeNeeds is what the stale-read probe's writer needs on the primary: CREATE on the
// schema (its CREATE TABLE IF NOT EXISTS asks for it even when the table is there) and, on a
// table another login made, what it does with it (empties it, writes and reads it).
func staleProbeNeeds() []privilege.Need {
	return []privilege.Need{privilege.CreateTable(StaleProbeTable),
		privilege.OnTable(StaleProbeTable, "to empty, write and read it", "SELECT", "INSERT", "TRUNCATE")}
}
