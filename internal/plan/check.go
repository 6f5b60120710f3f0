package plan

import (
	"fmt"
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
		if msg := p.targetMismatch(c, e); msg != "" {
			bad(e.Pos, "experiments[%d] (%s): %s", i+1, e.Label(), msg)
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

// targetMismatch says why an experiment's command cannot run on the plan's target: a
// command that takes a target but not this kind would otherwise run somewhere else (its
// default cluster, a private server) without a word. "" when it fits or sets its own.
func (p *Plan) targetMismatch(c Catalog, e Experiment) string {
	for _, f := range e.Flags {
		for _, t := range TargetFlags {
			if f.Name == t {
				return ""
			}
		}
	}
	cmd := strings.Join(e.Command, " ")
	hasCluster, hasPrimary := c.HasFlag(e.Command, "cluster"), c.HasFlag(e.Command, "primary")
	switch {
	case !hasCluster && !hasPrimary:
		return "" // no target: disk, report ...
	case p.Target.Cluster != nil && !hasCluster:
		return fmt.Sprintf("%s takes no --cluster, and this plan's target is cluster %s", cmd, p.Target.Cluster.Name)
	case p.Target.Connect != nil && !hasPrimary:
		return fmt.Sprintf("%s runs on an agbench cluster only (it has no --primary); this plan's target is connection strings: give it a cluster: target", cmd)
	}
	return ""
}
