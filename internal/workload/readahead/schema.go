package readahead

import "fmt"

// relationNames are the experiment's tables and indexes, whose files are evicted for a cold run.
var relationNames = []string{Table1, Table1 + "_pkey", Table2, Table2 + "_idvarchar"}

// schemaSQL builds the article's tables in PostgreSQL terms (read-ahead-reads.txt, "Build
// Test Data"): TestTable with an identity-like id loaded in order and a primary key on it
// (the heap is in id order: the clustered index's table), IDvarchar its id as text, the
// article's constant name and age; TestTable2 a copy written in IDvarchar order with a
// unique index on IDvarchar (the article's clustered index on IDvarchar). Autovacuum is off
// for both so that it reads nothing during a measurement; they are vacuumed and analyzed
// once, and a checkpoint writes them out.
func schemaSQL(rows, seed int64, tsClause string) []string {
	with := " WITH (autovacuum_enabled = off)" + tsClause
	return []string{
		fmt.Sprintf("SELECT setseed(%f)", seedFraction(seed)),
		`CREATE TABLE ` + Table1 + ` (
			id          integer NOT NULL,
			idvarchar   varchar(50) NOT NULL,
			intcolumn   integer,
			name        varchar(50) NOT NULL,
			age         integer NOT NULL,
			randomvalue bigint NOT NULL
		)` + with,
		fmt.Sprintf(`INSERT INTO %s
			SELECT g, g::text, g %% 2048, 'Some Random Data..', g %% 10 + 25, floor(random() * g)::bigint
			FROM generate_series(1, %d) g`, Table1, rows),
		fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s_pkey PRIMARY KEY (id)", Table1, Table1) + indexTS(tsClause),
		fmt.Sprintf("CREATE TABLE %s (LIKE %s)", Table2, Table1) + with,
		fmt.Sprintf("INSERT INTO %s SELECT * FROM %s ORDER BY idvarchar", Table2, Table1),
		fmt.Sprintf("CREATE UNIQUE INDEX %s_idvarchar ON %s (idvarchar)", Table2, Table2) + tsClause,
		fmt.Sprintf("VACUUM (ANALYZE) %s, %s", Table1, Table2),
		"CHECKPOINT",
	}
}

func indexTS(tsClause string) string {
	if tsClause == "" {
		return ""
	}
	return " USING INDEX" + tsClause
}

// seedFraction maps a seed to setseed's range [-1, 1].
func seedFraction(seed int64) float64 {
	return float64(seed%1_000_000) / 1_000_000
}
