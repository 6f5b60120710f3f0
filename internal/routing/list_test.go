package routing

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want [][]string
		str  string
	}{
		{"('standby1')", [][]string{{"standby1"}}, "('standby1')"},
		{"(('standby1','standby2'),'primary')", [][]string{{"standby1", "standby2"}, {"primary"}}, "(('standby1','standby2'),'primary')"},
		{" ( ( N'a' , 'b' ) ,\n'c' ) ", [][]string{{"a", "b"}, {"c"}}, "(('a','b'),'c')"},
		{"'a','b'", [][]string{{"a"}, {"b"}}, "('a','b')"},
		{"'a'", [][]string{{"a"}}, "('a')"},
		{"('it''s')", [][]string{{"it's"}}, "('it''s')"},
		{"(('solo'))", [][]string{{"solo"}}, "('solo')"},
		{"('SRV154','SRV153')", [][]string{{"SRV154"}, {"SRV153"}}, "('SRV154','SRV153')"},
		{"('ñodo','x')", [][]string{{"ñodo"}, {"x"}}, "('ñodo','x')"},
	}
	for _, c := range cases {
		l, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(l.Entries, c.want) {
			t.Errorf("Parse(%q) = %v, want %v", c.in, l.Entries, c.want)
		}
		if l.String() != c.str {
			t.Errorf("Parse(%q).String() = %q, want %q", c.in, l.String(), c.str)
		}
		again, err := Parse(l.String())
		if err != nil || !reflect.DeepEqual(again.Entries, l.Entries) {
			t.Errorf("round trip of %q: %v, %v", c.in, again.Entries, err)
		}
	}
}

func TestParseErrorsNamePosition(t *testing.T) {
	cases := []struct {
		in  string
		pos int
		msg string
	}{
		{"", 1, "empty"},
		{"   ", 4, "empty"},
		{"(", 2, "end of the list"},
		{"()", 2, "empty entry"},
		{"('a'", 5, "missing closing parenthesis"},
		{"('a',)", 6, "empty entry"},
		{"('a' 'b')", 6, "expected ',' or ')'"},
		{"(standby1)", 2, "quoted node name"},
		{"(('a',('b')),'c')", 7, "one level"},
		{"(('a','b')", 1 + len("(('a','b')"), "missing closing parenthesis"},
		{"(('a','b'", 2, "not closed"},
		{"('a','b') x", 11, "after the closing parenthesis"},
		{"('a','a')", 6, `"a" is already listed at character 2`},
		{"(('a','b'),'b')", 12, "already listed"},
		{"('')", 2, "empty node name"},
		{"('abc", 2, "no closing quote"},
		{"(())", 3, "empty load-balanced set"},
		{"('a',N)", 6, "quoted node name"},
		{"('ñ' x)", 6, "expected ',' or ')'"},
		{"('" + strings.Repeat("x", 129) + "')", 2, "longer than 128"},
	}
	for _, c := range cases {
		_, err := Parse(c.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q): err = %v, want a *SyntaxError", c.in, err)
			continue
		}
		if se.Pos != c.pos || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("Parse(%q): at %d %q, want at %d containing %q", c.in, se.Pos, se.Msg, c.pos, c.msg)
		}
		if !strings.Contains(err.Error(), "at character") {
			t.Errorf("Parse(%q): message %q does not name the position", c.in, err)
		}
	}
}

func TestCheckUnknownNode(t *testing.T) {
	l, err := Parse("(('standby1','standby9'),'primary')")
	if err != nil {
		t.Fatal(err)
	}
	err = l.Check([]string{"primary", "standby1", "standby2"})
	var ue *UnknownNodeError
	if !errors.As(err, &ue) || ue.Name != "standby9" || !strings.Contains(err.Error(), "standby2") {
		t.Fatalf("Check: %v", err)
	}
	if err := l.Check([]string{"primary", "standby1", "standby9"}); err != nil {
		t.Fatalf("Check of known names: %v", err)
	}
}

func TestParseFor(t *testing.T) {
	known := []string{"primary", "standby1"}
	var se *SyntaxError
	var ue *UnknownNodeError
	if _, err := ParseFor("(('standby1'", known); !errors.As(err, &se) {
		t.Errorf("a bad list: %v; want a syntax error", err)
	}
	if _, err := ParseFor("('standby2','primary')", known); !errors.As(err, &ue) || ue.Name != "standby2" {
		t.Errorf("an unknown node: %v", err)
	}
	if l, err := ParseFor("('standby1','primary')", known); err != nil || l.String() != "('standby1','primary')" {
		t.Errorf("a good list: %v %v", l, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"(('standby1','standby2'),'primary')", "'a'", "(N'x''y')", "((", "('a',('b'))", "('ñ')"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 1 || se.Pos > len([]rune(s))+1 {
				t.Fatalf("Parse(%q): bad error %#v", s, err)
			}
			return
		}
		if len(l.Entries) == 0 {
			t.Fatalf("Parse(%q): no entries and no error", s)
		}
		again, err := Parse(l.String())
		if err != nil || !reflect.DeepEqual(again.Entries, l.Entries) {
			t.Fatalf("round trip of %q via %q: %v %v", s, l.String(), again.Entries, err)
		}
	})
}
