package privilege

import (
	"strings"
)

// sqlName is a name a statement uses, as its text spells it: schema is "" when the name is
// not qualified. Bare words are folded to lower case, as the server folds them.
type sqlName struct{ schema, name string }

// sqlNames are the names of a statement that may need a privilege: the relations it reads
// or writes (named after FROM, JOIN, INTO, UPDATE, TABLE, USING, ONLY, or after a comma in
// a FROM list), the functions it calls (a name before "(", but a reserved word: IN, VALUES), the schemas that qualify either,
// and the string literals (nextval('s') names its sequence in one). Verb is the statement's
// first word and target the relation it inserts into, updates or deletes from ("" for
// others); reads says it has a WHERE (an update or delete reads its target then), returns
// a RETURNING (which reads it too). It reads the text only, for the names to ask the catalogue about: comments,
// literals, quoted identifiers and dollar quotes are skipped or read whole, and a name it
// takes for a relation that is none is found in no catalogue and asks nothing.
type sqlNames struct {
	verb           string
	target         sqlName
	reads, returns bool
	relations      []sqlName
	functions      []sqlName
	schemas        []string
	literals       []string
}

// relationAfter are the words after which a statement names a relation.
var relationAfter = map[string]bool{"from": true, "join": true, "into": true, "update": true, "table": true, "using": true, "only": true}

// listEnd are the words that end a FROM (or USING) list: a comma after them lists no
// relation.
var listEnd = map[string]bool{"where": true, "group": true, "order": true, "having": true, "limit": true, "offset": true,
	"on": true, "set": true, "values": true, "returning": true, "select": true, "window": true, "union": true,
	"except": true, "intersect": true, "fetch": true, "for": true}

// sqlTokens splits a statement into words (bare ones folded to lower case), quoted
// identifiers (kept as written, marked by a leading '"'), string literals (marked by a
// leading '\”) and single punctuation characters; comments and white space are dropped.
func sqlTokens(q string) []string {
	var out []string
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				return out
			}
			i += j + 1
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			i = skipBlockComment(q, i)
		case c == '\'' || c == '"':
			s, n := quoted(q[i:], c)
			out = append(out, string(c)+s)
			i += n
		case c == '$' && i+1 < len(q) && (q[i+1] == '$' || isWordStart(q[i+1])):
			i += skipDollarQuote(q[i:])
		case isWordStart(c):
			j := i + 1
			for j < len(q) && (isWordStart(q[j]) || q[j] >= '0' && q[j] <= '9' || q[j] == '$') {
				j++
			}
			out = append(out, strings.ToLower(q[i:j]))
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			out = append(out, string(c))
			i++
		}
	}
	return out
}

func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

// quoted reads a literal or quoted identifier that starts q (its quote doubled inside) and
// returns its text and how many bytes it took; an unclosed one takes the rest.
func quoted(q string, quote byte) (string, int) {
	var b strings.Builder
	for i := 1; i < len(q); i++ {
		if q[i] != quote {
			b.WriteByte(q[i])
			continue
		}
		if i+1 < len(q) && q[i+1] == quote {
			b.WriteByte(quote)
			i++
			continue
		}
		return b.String(), i + 1
	}
	return b.String(), len(q)
}

// skipBlockComment returns where the comment that starts at q[i] ends (they nest).
func skipBlockComment(q string, i int) int {
	depth := 0
	for i < len(q) {
		switch {
		case strings.HasPrefix(q[i:], "/*"):
			depth++
			i += 2
		case strings.HasPrefix(q[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return i
}

// skipDollarQuote returns how many bytes the dollar-quoted string that starts q takes ($1,
// a parameter, takes 1: its digits are skipped as punctuation is).
func skipDollarQuote(q string) int {
	end := strings.IndexByte(q[1:], '$')
	if end < 0 {
		return len(q)
	}
	tag := q[:end+2]
	if strings.ContainsAny(tag[1:len(tag)-1], " \t\n\r()'\"") {
		return 1
	}
	rest := strings.Index(q[len(tag):], tag)
	if rest < 0 {
		return len(q)
	}
	return len(tag) + rest + len(tag)
}

// parseNames reads the names of statement q (sqlNames).
func parseNames(q string) sqlNames {
	toks := sqlTokens(q)
	var n sqlNames
	last := "" // the last keyword that names relations after it, or ""
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t[0] == '\'' {
			n.literals = append(n.literals, t[1:])
			continue
		}
		if n.verb == "" && t[0] != '"' && isWordStart(t[0]) {
			n.verb = t
		}
		n.reads = n.reads || t == "where"
		n.returns = n.returns || t == "returning"
		if !isWordStart(t[0]) && t[0] != '"' {
			if t != "," {
				last = ""
			}
			continue
		}
		name, next := qualifiedName(toks, i)
		isRelation := relationAfter[prevWord(toks, i)] || prevWord(toks, i) == "," && (last == "from" || last == "using")
		switch {
		case isRelation:
			n.relations = append(n.relations, name)
			if n.target.name == "" && (n.verb == "insert" || n.verb == "update" || n.verb == "delete") {
				n.target = name
			}
		case next < len(toks) && toks[next] == "(" && (t[0] == '"' || name.schema != "" || !quotedKeywords[t]):
			n.functions = append(n.functions, name)
		}
		if name.schema != "" && (isRelation || next < len(toks) && toks[next] == "(") {
			n.schemas = append(n.schemas, name.schema)
		}
		if relationAfter[t] {
			last = t
		} else if listEnd[t] {
			last = ""
		}
		i = next - 1
	}
	return n
}

// qualifiedName reads the name at toks[i] (a word or a quoted identifier, maybe qualified:
// schema.name, or db.schema.name) and returns it and the index after it.
func qualifiedName(toks []string, i int) (sqlName, int) {
	parts := []string{strings.TrimPrefix(toks[i], `"`)}
	j := i + 1
	for j+1 < len(toks) && toks[j] == "." && (toks[j+1][0] == '"' || isWordStart(toks[j+1][0])) {
		parts = append(parts, strings.TrimPrefix(toks[j+1], `"`))
		j += 2
	}
	if len(parts) == 1 {
		return sqlName{name: parts[0]}, j
	}
	return sqlName{schema: parts[len(parts)-2], name: parts[len(parts)-1]}, j
}

// prevWord is the token before toks[i], or "".
func prevWord(toks []string, i int) string {
	if i == 0 {
		return ""
	}
	return toks[i-1]
}
