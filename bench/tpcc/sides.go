package main

// side is one of the runs a round holds: a binary (or go-tpc) in one mode, on its database.
type side struct {
	name    string
	bin     string
	db      string
	mode    string // functions or client; "" for go-tpc
	sampled bool   // agbench's samplers on (--sample)
	gotpc   bool
}

// Side names.
const (
	beforeFunc  = "before functions"
	beforeCli   = "before client"
	newFunc     = "new functions"
	newCli      = "new client"
	newFuncSamp = "new functions +samplers"
	goTPC       = "go-tpc"
)

// Databases, one per binary: each is built by the binary that runs on it.
const (
	beforeDB = "tpcc_before"
	newDB    = "tpcc_new"
	gotpcDB  = "gotpc"
)

// sides lists the runs of every round.
func sides(b *bench, withGoTPC, samplers bool) []side {
	s := []side{
		{name: beforeFunc, bin: b.beforeBin, db: beforeDB, mode: "functions"},
		{name: newFunc, bin: b.bin, db: newDB, mode: "functions"},
		{name: beforeCli, bin: b.beforeBin, db: beforeDB, mode: "client"},
		{name: newCli, bin: b.bin, db: newDB, mode: "client"},
	}
	if samplers {
		s = append(s, side{name: newFuncSamp, bin: b.bin, db: newDB, mode: "functions", sampled: true})
	}
	if withGoTPC {
		s = append(s, side{name: goTPC, bin: b.gotpc, db: gotpcDB, gotpc: true})
	}
	return s
}
