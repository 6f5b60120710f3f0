package seed

import (
	"fmt"
	"strings"

	"github.com/agbench/agbench/internal/agerr"
)

// Variant is one compared way of seeding.
type Variant struct {
	Method   string
	Compress Compression
}

// Label names the variant as the table heads it: direct/none, backup-restore/zstd:3.
func (v Variant) Label() string { return v.Method + "/" + v.Compress.String() }

// Labels are the variants' labels, in order.
func Labels(vs []Variant) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Label()
	}
	return out
}

// ParseCompare reads --compare specs (method=direct,backup-restore and compress=none,lz4,zstd)
// into variants: every method with every compression, methods outermost. A key not given
// keeps the base's value. Every bad value is reported.
func ParseCompare(specs []string, base Variant) ([]Variant, error) {
	methods := []string{base.Method}
	comps := []Compression{base.Compress}
	var errs []error
	seen := map[string]bool{}
	for _, spec := range specs {
		k, vals, ok := strings.Cut(spec, "=")
		k = strings.TrimSpace(k)
		if !ok || vals == "" {
			errs = append(errs, agerr.BadInputf("--compare %q: want key=a,b (keys: method, compress)", spec))
			continue
		}
		if seen[k] {
			errs = append(errs, agerr.BadInputf("--compare %s: given twice", k))
			continue
		}
		seen[k] = true
		switch k {
		case "method":
			methods = nil
			for _, m := range strings.Split(vals, ",") {
				m = strings.TrimSpace(m)
				if m != MethodDirect && m != MethodBackupRestore {
					errs = append(errs, agerr.BadInputf("--compare method=%s: %q is not %s or %s", vals, m, MethodDirect, MethodBackupRestore))
					continue
				}
				methods = append(methods, m)
			}
		case "compress":
			comps = nil
			for _, c := range strings.Split(vals, ",") {
				cc, err := ParseCompression(c)
				if err != nil {
					errs = append(errs, agerr.BadInputf("--compare compress=%s: %v", vals, err))
					continue
				}
				comps = append(comps, cc)
			}
		default:
			errs = append(errs, agerr.BadInputf("--compare %q: unknown key %q (keys: method, compress)", spec, k))
		}
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	var out []Variant
	dup := map[string]bool{}
	for _, m := range methods {
		for _, c := range comps {
			v := Variant{Method: m, Compress: c}
			if dup[v.Label()] {
				return nil, agerr.BadInputf("--compare: variant %s appears twice", v.Label())
			}
			dup[v.Label()] = true
			out = append(out, v)
		}
	}
	return out, nil
}

// Run is one seeding of a comparison. A comparison sweeps nothing, so every run is at
// point 0 and variants differ by Variant (the report puts them side by side).
type Run struct {
	Point   int
	Index   int // the variant's index
	Repeat  int
	Variant Variant
}

// Plan orders the runs of a comparison: round after round, every variant once per round, so
// that a drifting machine (caches warming, a neighbour's load) does not favour one variant.
func Plan(variants []Variant, repeats int) []Run {
	var runs []Run
	for r := 0; r < repeats; r++ {
		for i, v := range variants {
			runs = append(runs, Run{Index: i, Repeat: r, Variant: v})
		}
	}
	return runs
}

// String describes the plan for a log line.
func (r Run) String() string { return fmt.Sprintf("%s (repeat %d)", r.Variant.Label(), r.Repeat+1) }
