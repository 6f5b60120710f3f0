package routing

import (
	"fmt"
	"strings"
)

// List is a parsed routing list. Each entry is a set of node names: one name is a plain
// entry, more than one a load-balanced set.
type List struct {
	Entries [][]string
}

// SyntaxError is a routing list that does not parse. Pos is the 1-based character
// position of the fault in Input.
type SyntaxError struct {
	Input string
	Pos   int
	Msg   string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("routing list %q: at character %d: %s", e.Input, e.Pos, e.Msg)
}

// maxNameLen bounds a node name, as SQL Server bounds a replica name (sysname).
const maxNameLen = 128

// Parse reads a routing list in SQL Server's syntax: a parenthesised, comma-separated
// list of quoted node names ('name' or N'name', with ” for a quote inside), where an
// entry may itself be a parenthesised list of names (a load-balanced set; one level
// only). The outer parentheses may be left out: 'a','b' is ('a','b'). Whitespace between
// tokens is ignored. A name may appear only once in the whole list.
func Parse(s string) (List, error) {
	p := &parser{in: s}
	l, err := p.list()
	if err != nil {
		return List{}, err
	}
	return l, nil
}

type parser struct {
	in  string
	pos int // byte offset of the next unread character
}

func (p *parser) fail(pos int, format string, a ...any) error {
	return &SyntaxError{Input: p.in, Pos: runePos(p.in, pos), Msg: fmt.Sprintf(format, a...)}
}

// runePos turns a byte offset into a 1-based character position.
func runePos(s string, off int) int {
	if off > len(s) {
		off = len(s)
	}
	return len([]rune(s[:off])) + 1
}

func (p *parser) skipSpace() {
	for p.pos < len(p.in) && strings.IndexByte(" \t\r\n", p.in[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *parser) peek() byte {
	p.skipSpace()
	if p.pos >= len(p.in) {
		return 0
	}
	return p.in[p.pos]
}

func (p *parser) list() (List, error) {
	var l List
	seen := map[string]int{}
	outer := p.peek() == '('
	if p.pos >= len(p.in) {
		return l, p.fail(p.pos, "the list is empty; give at least one quoted node name, e.g. ('standby1')")
	}
	// '(' might open the outer list or, without outer parentheses, a first set: (('a')) vs ('a','b').
	// SQL Server always writes the outer parentheses; a bare "('a','b')" is read as the outer list.
	if outer {
		p.pos++
	}
	for {
		entry, err := p.entry(outer, seen)
		if err != nil {
			return l, err
		}
		l.Entries = append(l.Entries, entry)
		c := p.peek()
		switch {
		case c == ',':
			p.pos++
			continue
		case c == ')' && outer:
			p.pos++
			if p.peek() != 0 {
				return l, p.fail(p.pos, "unexpected %q after the closing parenthesis of the list", p.in[p.pos])
			}
			return l, nil
		case c == 0 && outer:
			return l, p.fail(p.pos, "missing closing parenthesis of the list")
		case c == 0:
			return l, nil
		default:
			return l, p.fail(p.pos, "expected ',' or ')' between entries, found %q", c)
		}
	}
}

// entry reads one name or one load-balanced set.
func (p *parser) entry(nestedOK bool, seen map[string]int) ([]string, error) {
	switch c := p.peek(); {
	case c == '(' && nestedOK:
		open := p.pos
		p.pos++
		if p.peek() == ')' {
			return nil, p.fail(p.pos, "empty load-balanced set ()")
		}
		var set []string
		for {
			if p.peek() == '(' {
				return nil, p.fail(p.pos, "load-balanced sets nest only one level deep")
			}
			name, err := p.name(seen)
			if err != nil {
				return nil, err
			}
			set = append(set, name)
			switch c := p.peek(); c {
			case ',':
				p.pos++
			case ')':
				p.pos++
				return set, nil
			case 0:
				return nil, p.fail(open, "load-balanced set opened here is not closed")
			default:
				return nil, p.fail(p.pos, "expected ',' or ')' in a load-balanced set, found %q", c)
			}
		}
	case c == '(':
		return nil, p.fail(p.pos, "load-balanced sets need the outer parentheses of the list, e.g. (('a','b'),'c')")
	default:
		name, err := p.name(seen)
		if err != nil {
			return nil, err
		}
		return []string{name}, nil
	}
}

// name reads one quoted node name: 'name' or N'name', ” standing for a quote.
func (p *parser) name(seen map[string]int) (string, error) {
	c := p.peek()
	start := p.pos
	if c == 'N' || c == 'n' {
		if p.pos+1 < len(p.in) && p.in[p.pos+1] == '\'' {
			p.pos++
			c = '\''
		}
	}
	switch c {
	case '\'':
	case 0:
		return "", p.fail(p.pos, "unexpected end of the list; expected a quoted node name")
	case ')', ',':
		return "", p.fail(p.pos, "expected a quoted node name, found %q (empty entry)", c)
	default:
		return "", p.fail(p.pos, "expected a quoted node name such as 'standby1', found %q", c)
	}
	p.pos++
	var b strings.Builder
	for {
		if p.pos >= len(p.in) {
			return "", p.fail(start, "node name opened here has no closing quote")
		}
		ch := p.in[p.pos]
		p.pos++
		if ch == '\'' {
			if p.pos < len(p.in) && p.in[p.pos] == '\'' {
				b.WriteByte('\'')
				p.pos++
				continue
			}
			break
		}
		b.WriteByte(ch)
	}
	n := b.String()
	switch {
	case strings.TrimSpace(n) == "":
		return "", p.fail(start, "empty node name")
	case len(n) > maxNameLen:
		return "", p.fail(start, "node name longer than %d bytes", maxNameLen)
	case strings.ContainsAny(n, "\x00"):
		return "", p.fail(start, "node name contains a NUL byte")
	}
	if prev, dup := seen[n]; dup {
		return "", p.fail(start, "node %q is already listed at character %d", n, prev)
	}
	seen[n] = runePos(p.in, start)
	return n, nil
}

// String renders the list in canonical form: (('a','b'),'c').
func (l List) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, e := range l.Entries {
		if i > 0 {
			b.WriteByte(',')
		}
		if len(e) > 1 {
			b.WriteByte('(')
		}
		for j, n := range e {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quote(n))
		}
		if len(e) > 1 {
			b.WriteByte(')')
		}
	}
	b.WriteByte(')')
	return b.String()
}

func quote(n string) string { return "'" + strings.ReplaceAll(n, "'", "''") + "'" }

// Names lists every node named in the list, in order.
func (l List) Names() []string {
	var names []string
	for _, e := range l.Entries {
		names = append(names, e...)
	}
	return names
}

// Contains reports whether the list names the node.
func (l List) Contains(name string) bool {
	for _, e := range l.Entries {
		for _, n := range e {
			if n == name {
				return true
			}
		}
	}
	return false
}

// UnknownNodeError is a list naming a node that the cluster does not have.
type UnknownNodeError struct {
	List  string
	Name  string
	Known []string
}

func (e *UnknownNodeError) Error() string {
	return fmt.Sprintf("routing list %s names %s, which is not a node (nodes: %s)", e.List, quote(e.Name), strings.Join(e.Known, ", "))
}

// Check verifies that every name in the list is one of the known nodes.
func (l List) Check(known []string) error {
	k := map[string]bool{}
	for _, n := range known {
		k[n] = true
	}
	for _, n := range l.Names() {
		if !k[n] {
			return &UnknownNodeError{List: l.String(), Name: n, Known: known}
		}
	}
	return nil
}

// ParseFor parses a list and checks it against the nodes it may name.
func ParseFor(s string, known []string) (List, error) {
	l, err := Parse(s)
	if err == nil {
		err = l.Check(known)
	}
	return l, err
}
