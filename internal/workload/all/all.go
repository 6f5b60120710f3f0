// Package all registers every workload of agbench by importing it for its side effect.
//
// Imports from agbench: only internal/workload/readahead, internal/workload/scan,
// internal/workload/stress, internal/workload/tpcc.
package all

import (
	_ "github.com/agbench/agbench/internal/workload/readahead" // readahead: cold-cache prefetch off vs on
	_ "github.com/agbench/agbench/internal/workload/scan"      // scan: read N rows to the client
	_ "github.com/agbench/agbench/internal/workload/stress"    // stress: SQLQueryStress
	_ "github.com/agbench/agbench/internal/workload/tpcc"      // tpcc: TPC-C-derived OLTP
)
