// Package merge owns making one result of the results of a run's segments (agbench
// --segment i/N on N load generators): operation counts, rows, bytes and errors summed,
// latency HDR histograms merged exactly (never their percentiles), per-second throughput
// aligned by time and summed, sessions and error classes combined. The servers' own figures
// (samplers' series, buffer and server-side counters), which every segment read from the
// same servers, are the lowest segment's. A merge that lacks a segment, or holds one that
// failed, is incomplete and says which.
//
// It reads and writes nothing: the command layer loads the segments' files and writes the
// merged result. It must not import the runner, workloads, experiments or the report.
//
// Imports from agbench: only internal/agerr, internal/result, internal/segment.
package merge

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/segment"
)

// Input is one segment's result and where it was read from.
type Input struct {
	Path   string
	Result *result.Result
}

// Merge makes one result of the segments' results. Inputs that are not segments of one run
// (another command, other settings, another number of segments or run name), a segment
// given twice or one out of range are bad input naming what is wrong; the merged result is
// incomplete when a segment is missing or did not complete.
func Merge(in []Input) (*result.Result, error) {
	if len(in) == 0 {
		return nil, agerr.BadInputf("merge: no segment's result given")
	}
	segs, err := check(in)
	if err != nil {
		return nil, err
	}
	base := segs[0].Result
	out := &result.Result{Schema: result.SchemaVersion, Meta: base.Meta, Extra: base.Extra}
	out.Meta.Args = segment.SettingArgs(base.Meta.Args)
	out.Meta.Segment = nil
	merged := &result.Merged{Of: base.Meta.Segment.Of}
	var whyNot []string
	for _, s := range segs {
		r := s.Result
		out.Meta.Started = earliest(out.Meta.Started, r.Meta.Started)
		if r.Meta.Ended.After(out.Meta.Ended) {
			out.Meta.Ended = r.Meta.Ended
		}
		merged.Segments = append(merged.Segments, result.MergedSegment{Index: r.Meta.Segment.Index, Host: r.Meta.Host.Hostname,
			Path: s.Path, Complete: r.Complete, IncompleteReason: r.IncompleteReason, Starts: r.Meta.Segment.Starts})
		if !r.Complete {
			whyNot = append(whyNot, fmt.Sprintf("segment %d did not complete: %s", r.Meta.Segment.Index, r.IncompleteReason))
		}
		for _, w := range r.Warnings {
			out.Warnings = append(out.Warnings, fmt.Sprintf("segment %d: %s", r.Meta.Segment.Index, w))
		}
	}
	merged.Missing = missing(segs, merged.Of)
	if len(merged.Missing) > 0 {
		whyNot = append([]string{fmt.Sprintf("segment(s) %s of %d missing", ints(merged.Missing), merged.Of)}, whyNot...)
	}
	out.Meta.Merged = merged
	if out.Steps, err = mergeSteps(segs, merged.Of); err != nil {
		return nil, err
	}
	out.Complete = len(whyNot) == 0
	out.IncompleteReason = strings.Join(whyNot, "; ")
	return out, nil
}

// check refuses inputs that are not distinct segments of one run and returns them by index.
func check(in []Input) ([]Input, error) {
	var errs []error
	byIndex := map[int]Input{}
	var first *Input
	for i := range in {
		s := &in[i]
		r := s.Result
		if r == nil || r.Meta.Segment == nil {
			errs = append(errs, agerr.BadInputf("%s: not a segment's result (no meta.segment: run with --segment I/N)", s.Path))
			continue
		}
		sg := r.Meta.Segment
		if _, err := segment.New(sg.Index, sg.Of); err != nil {
			errs = append(errs, agerr.BadInputf("%s: segment %d/%d: %v", s.Path, sg.Index, sg.Of, err))
			continue
		}
		if prev, dup := byIndex[sg.Index]; dup {
			errs = append(errs, agerr.BadInputf("segment %d given twice: %s and %s", sg.Index, prev.Path, s.Path))
			continue
		}
		if first == nil {
			first = s
		} else if d := differs(first.Result, r); d != "" {
			errs = append(errs, agerr.BadInputf("%s and %s are not segments of one run: %s", first.Path, s.Path, d))
			continue
		}
		byIndex[sg.Index] = *s
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]Input, 0, len(byIndex))
	for _, s := range byIndex {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Result.Meta.Segment.Index < out[j].Result.Meta.Segment.Index })
	return out, nil
}

// differs names the first thing two segments' results differ in that the segments of one
// run share ("" when none): the command, the number of segments, the seed, a setting, the
// command line, and last the run's name, which is made from the command line unless
// --segment-run gives it, so that segments of other settings are told by the setting.
func differs(a, b *result.Result) string {
	am, bm := a.Meta, b.Meta
	switch {
	case am.Command != bm.Command:
		return fmt.Sprintf("command %q and %q", am.Command, bm.Command)
	case am.Segment.Of != bm.Segment.Of:
		return fmt.Sprintf("%d and %d segments", am.Segment.Of, bm.Segment.Of)
	case am.Seed != bm.Seed:
		return fmt.Sprintf("seed %d and %d", am.Seed, bm.Seed)
	}
	if d := settingDiffers(am.Config, bm.Config); d != "" {
		return d
	}
	if x, y := segment.SettingArgs(am.Args), segment.SettingArgs(bm.Args); !slices.Equal(x, y) {
		return fmt.Sprintf("command line %q and %q", strings.Join(x, " "), strings.Join(y, " "))
	}
	if am.Segment.Run != bm.Segment.Run {
		return fmt.Sprintf("run %q and %q (--segment-run)", am.Segment.Run, bm.Segment.Run)
	}
	return ""
}

// settingDiffers names the first setting of the configurations that differs, by name ("").
func settingDiffers(ac, bc map[string]any) string {
	keys := map[string]bool{}
	for k := range ac {
		keys[k] = true
	}
	for k := range bc {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !reflect.DeepEqual(ac[k], bc[k]) {
			return fmt.Sprintf("setting %s %v and %v", k, ac[k], bc[k])
		}
	}
	return ""
}

// missing lists the segments of of that are not among segs.
func missing(segs []Input, of int) []int {
	var out []int
	for i := 0; i < of; i++ {
		if !slices.ContainsFunc(segs, func(s Input) bool { return s.Result.Meta.Segment.Index == i }) {
			out = append(out, i)
		}
	}
	return out
}

func ints(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
