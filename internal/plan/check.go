package plan

import (
	"strings"

	"github.com/agbench/agbench/internal/agerr"
)

// Catalog is what a plan is checked against: the commands of agbench and their flags.
type Catalog interface {
	// Command reports whether words name a command that runs (not a group of commands).
	Command(words []string) bool
	// HasFlag reports whether the command has the flag.
	HasFlag(words []string, flag string) bool
	// CheckFlag parses value as the flag's value and returns what is wrong, or nil.
	CheckFlag(words []string, flag, value string) error
}

// Check checks every experiment against the catalog: the command exists, each flag is one
// of its flags and each value parses, and none sets what the plan itself sets (the target
// and results folder are given by the plan; a flag given anyway wins). Every problem is
// reported with its line and column, at once, as bad input.
func (p *Plan) Check(c Catalog) error {
	var errs []error
	bad := func(pos Pos, format string, a ...any) {
		errs = append(errs, agerr.BadInput(&Error{File: p.File, Pos: pos, Msg: sprintf(format, a...)}))
	}
	for i, e := range p.Experiments {
		if !c.Command(e.Command) {
			bad(e.Pos, "experiments[%d]: %q is not an agbench command that runs (see agbench --help)", i+1, strings.Join(e.Command, " "))
			continue
		}
		for _, f := range e.Flags {
			if !c.HasFlag(e.Command, f.Name) {
				bad(f.Pos, "experiments[%d] (%s): %s has no flag --%s (see agbench %s --help)", i+1, e.Label(), strings.Join(e.Command, " "), f.Name, strings.Join(e.Command, " "))
				continue
			}
			vals := []string{strings.Join(f.Values, ",")}
			if f.List && repeatable(f.Name) {
				vals = f.Values
			}
			for _, v := range vals {
				if err := c.CheckFlag(e.Command, f.Name, v); err != nil {
					bad(f.Pos, "experiments[%d] (%s): --%s %q: %v", i+1, e.Label(), f.Name, v, err)
				}
			}
		}
	}
	return agerr.Join(errs...)
}
