package readahead

import (
	"fmt"

	"github.com/agbench/agbench/internal/result"
)

// Table names follow the article: TestTable is clustered on ID; TestTable2 is a copy of it
// clustered on IDvarchar, so that rows with neighbouring IDs lie on pages far apart.
const (
	Table1 = result.ReadaheadTable1
	Table2 = result.ReadaheadTable2
)

// Query is one of the article's queries as PostgreSQL runs it, with the planner settings
// that force the plan the article forced (OPTION (LOOP JOIN, MAXDOP 1)) and the plan node
// that must run for the measurement to mean what its name says.
type Query struct {
	// Name is the short name used in flags and results: range, full, join-nl, join-bitmap.
	Name string
	// Title is what the table prints.
	Title string
	// SQL is the query text with the bound already in it.
	SQL string
	// Settings are the session's planner settings (enable_*) for this query.
	Settings map[string]string
	// Node is the plan node that must run ("Index Scan", "Seq Scan", "Nested Loop", "Bitmap Heap Scan").
	Node string
	// Sequential is true when the query reads the heap in order (read-ahead), false when it
	// reads pages at random (prefetch of the article's random kind).
	Sequential bool
}

// QueryNames are the queries in the order they run.
var QueryNames = []string{"range", "full", "join-nl", "join-bitmap"}

// Queries returns the article's queries. rangeIDs is the range scan's bound (the article's
// "WHERE ID < 300000"); joinIDs is the join's (the article's "AND ID < 1000").
//
// PostgreSQL has no clustered index, so the range scan is an Index Scan of the primary key
// over a heap loaded in id order (the article's clustered index seek). The article's random
// prefetch is a nested loop whose inner side reads TestTable2 at random; PostgreSQL does not
// prefetch for index scans, so the same join is also run as a Bitmap Heap Scan of TestTable2
// (the IDs' strings gathered into an array first), the one random access path that
// prefetches (effective_io_concurrency).
func Queries(rangeIDs, joinIDs int64) []Query {
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	return []Query{
		{
			Name: "range", Title: fmt.Sprintf("range scan id < %d", rangeIDs), Node: "Index Scan", Sequential: true,
			SQL:      fmt.Sprintf("SELECT * FROM %s WHERE id < %d", Table1, rangeIDs),
			Settings: with("enable_seqscan", "off", "enable_bitmapscan", "off", "enable_indexonlyscan", "off"),
		},
		{
			Name: "full", Title: "full scan", Node: "Seq Scan", Sequential: true,
			SQL:      fmt.Sprintf("SELECT * FROM %s", Table1),
			Settings: with(),
		},
		{
			Name: "join-nl", Title: fmt.Sprintf("join id < %d, nested loop", joinIDs), Node: "Nested Loop",
			SQL: fmt.Sprintf("SELECT t1.*, t2.randomvalue FROM %s t1 JOIN %s t2 ON t2.idvarchar = t1.idvarchar WHERE t1.id < %d",
				Table1, Table2, joinIDs),
			Settings: with("enable_hashjoin", "off", "enable_mergejoin", "off", "enable_bitmapscan", "off",
				"enable_seqscan", "off", "enable_indexonlyscan", "off", "enable_memoize", "off"),
		},
		{
			Name: "join-bitmap", Title: fmt.Sprintf("join id < %d, bitmap heap scan", joinIDs), Node: "Bitmap Heap Scan",
			SQL: fmt.Sprintf("SELECT t2.* FROM %s t2 WHERE t2.idvarchar = ANY (ARRAY(SELECT t1.idvarchar FROM %s t1 WHERE t1.id < %d))",
				Table2, Table1, joinIDs),
			Settings: with("enable_seqscan", "off", "enable_indexscan", "off", "enable_indexonlyscan", "off"),
		},
	}
}

// sessionSettings are set in every measuring session: one process per query, as the
// article's MAXDOP 1, no JIT compile time in the elapsed time, IO timing on.
var sessionSettings = map[string]string{
	"max_parallel_workers_per_gather": "0",
	"jit":                             "off",
	"track_io_timing":                 "on",
}
