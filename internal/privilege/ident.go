package privilege

import (
	"regexp"

	"github.com/jackc/pgx/v5"
)

// Ident quotes name as an SQL identifier, for a statement a person runs (a GRANT): bare
// when PostgreSQL's quote_ident leaves it bare (lowercase letters, digits and underscores,
// and no keyword that the grammar reserves in some place), else quoted by pgx's
// Identifier.Sanitize, so that a login named user, Group or app-ro is named "user",
// "Group" and "app-ro". A name the server read for the statement (Login's NameIdent) is
// quoted by the server itself.
func Ident(name string) string {
	if plainIdent.MatchString(name) && !quotedKeywords[name] {
		return name
	}
	return pgx.Identifier{name}.Sanitize()
}

var plainIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// quotedKeywords are the keywords quote_ident quotes: every one but the unreserved
// (pg_get_keywords() with catcode other than U), as of PostgreSQL 18, which holds 15's.
var quotedKeywords = map[string]bool{}

func init() {
	for _, k := range []string{
		"all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric",
		"authorization", "between", "bigint", "binary", "bit", "boolean", "both", "case", "cast",
		"char", "character", "check", "coalesce", "collate", "collation", "column", "concurrently",
		"constraint", "create", "cross", "current_catalog", "current_date", "current_role",
		"current_schema", "current_time", "current_timestamp", "current_user", "dec", "decimal",
		"default", "deferrable", "desc", "distinct", "do", "else", "end", "except", "exists",
		"extract", "false", "fetch", "float", "for", "foreign", "freeze", "from", "full", "grant",
		"greatest", "group", "grouping", "having", "ilike", "in", "initially", "inner", "inout",
		"int", "integer", "intersect", "interval", "into", "is", "isnull", "join", "json",
		"json_array", "json_arrayagg", "json_exists", "json_object", "json_objectagg",
		"json_query", "json_scalar", "json_serialize", "json_table", "json_value", "lateral",
		"leading", "least", "left", "like", "limit", "localtime", "localtimestamp", "merge_action",
		"national", "natural", "nchar", "none", "normalize", "not", "notnull", "null", "nullif",
		"numeric", "offset", "on", "only", "or", "order", "out", "outer", "overlaps", "overlay",
		"placing", "position", "precision", "primary", "real", "references", "returning", "right",
		"row", "select", "session_user", "setof", "similar", "smallint", "some", "substring",
		"symmetric", "system_user", "table", "tablesample", "then", "time", "timestamp", "to",
		"trailing", "treat", "trim", "true", "union", "unique", "user", "using", "values",
		"varchar", "variadic", "verbose", "when", "where", "window", "with", "xmlattributes",
		"xmlconcat", "xmlelement", "xmlexists", "xmlforest", "xmlnamespaces", "xmlparse", "xmlpi",
		"xmlroot", "xmlserialize", "xmltable",
	} {
		quotedKeywords[k] = true
	}
}
