package table

import (
	"fmt"
	"strings"
	"testing"
)

func TestWriterAlignsLikeTabwriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b, Right)
	w.Row("threads", "IOPS", "|", "cpu%")
	fmt.Fprintf(w, "%d\t%.0f\t|\t%.1f\t\n", 16, 123456.0, 7.25)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "  threads    IOPS  |  cpu%\n" +
		"       16  123456  |   7.2\n"
	if b.String() != want {
		t.Errorf("right:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	w = NewWriter(&b, Left)
	w.Row("name", "port")
	w.Row("primary", "5432")
	_ = w.Flush()
	if want := "name     port  \nprimary  5432  \n"; b.String() != want {
		t.Errorf("left:\n%q\nwant\n%q", b.String(), want)
	}
}

func TestGridGroupsAndAlignment(t *testing.T) {
	g := Grid{
		Title:   "stress: throughput",
		Columns: []string{"threads", "ops/s", "p99", "ops/s", "p99"},
		Groups:  []Group{{"off", 2}, {"routing=on, a name too long to fit", 2}},
		Rows: [][]Cell{
			{{"1", false}, {"500", true}, {"5.5", true}, {"500", true}, {"5.7", true}},
			{{"12", false}, {"1,529", true}, {"-", false}},
		},
	}
	var b strings.Builder
	if err := g.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := "stress: throughput\n" +
		"        | off        | routing=o…\n" +
		"threads | ops/s  p99 | ops/s  p99\n" +
		"1       |   500  5.5 |   500  5.7\n" +
		"12      | 1,529  -   |\n" // a short row keeps its separators
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
