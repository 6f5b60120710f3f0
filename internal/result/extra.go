package result

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The sections of Extra, keyed by their owner's name. Each section's Go type is declared
// once, in this package (extra_*.go), because its writer and its readers sit on both sides
// of the layering: a sampler or a tool writes it, analyze and report read it, and neither
// may import the other. Writers and readers go through SetExtra and the typed accessors,
// never through json.Unmarshal of their own.
const (
	// ExtraSample is a step's sampler data (SampleStep), written by internal/sample.
	ExtraSample = "sample"
	// ExtraDisk is the storage tester's run (DiskRun is the part others read) and each
	// step's own figures, written by internal/diskio.
	ExtraDisk = "disk"
	// ExtraSeed is a seeding's report (Seeding) on its step, written by internal/seed.
	ExtraSeed = "seed"
	// ExtraReadahead is the readahead experiment's run (ReadaheadRun) and each step's plan,
	// written by internal/workload/readahead.
	ExtraReadahead = "readahead"
	// ExtraStale and ExtraStaleCausal are a step's stale-read probe figures (StaleStep) in
	// eventual and in causal mode, written by internal/experiment (Step.StaleProbes).
	ExtraStale       = "stale_reads"
	ExtraStaleCausal = "stale_reads_causal"
	// ExtraStaleOwn is tpcc's own-write reads (StaleStep in mode StaleOwnWrites), written
	// by internal/workload/tpcc's sampler.
	ExtraStaleOwn = "stale_reads_own"
	// ExtraDrill is a failover drill's run (DrillRun) and each cycle's figures (DrillCycle),
	// written by internal/drill (extra_drill.go).
	ExtraDrill = "drill"
	// ExtraHosts is how a step's nodes' host figures (host.<node>.*) were read, and why
	// those absent are (HostsStep), written by the sampler of node_exporters.
	ExtraHosts = "hosts"
	// ExtraTerminals is a tpcc step's emulated terminals (TerminalsStep), extra_terminals.go.
)

// RunLevel is ExtraError.Step for a section of the run's own Extra.
const RunLevel = -1

// ExtraError is a section of Extra that could not be decoded (or encoded): it names the
// step (its Index, or RunLevel) and the section, so that a result that cannot be read says
// which part failed instead of showing it empty.
type ExtraError struct {
	Step int
	Key  string
	Err  error
}

func (e *ExtraError) Error() string {
	if e.Step == RunLevel {
		return fmt.Sprintf("extra %q: %v", e.Key, e.Err)
	}
	return fmt.Sprintf("step %d extra %q: %v", e.Step, e.Key, e.Err)
}

func (e *ExtraError) Unwrap() error { return e.Err }

// decodeExtra decodes section key of m into v. It reports false when the section is absent
// (or null); a section that does not decode is an *ExtraError.
func decodeExtra(m map[string]json.RawMessage, step int, key string, v any) (bool, error) {
	raw, ok := m[key]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, &ExtraError{Step: step, Key: key, Err: err}
	}
	return true, nil
}

// encodeExtra stores v as section key of *m, making the map when needed.
func encodeExtra(m *map[string]json.RawMessage, step int, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return &ExtraError{Step: step, Key: key, Err: err}
	}
	if *m == nil {
		*m = map[string]json.RawMessage{}
	}
	(*m)[key] = raw
	return nil
}

// ExtraOf decodes the run's section key into v: false when the run has none.
func (r *Result) ExtraOf(key string, v any) (bool, error) {
	return decodeExtra(r.Extra, RunLevel, key, v)
}

// SetExtra stores v as the run's section key, replacing what was there.
func (r *Result) SetExtra(key string, v any) error {
	return encodeExtra(&r.Extra, RunLevel, key, v)
}

// ExtraOf decodes the step's section key into v: false when the step has none.
func (s *Step) ExtraOf(key string, v any) (bool, error) {
	return decodeExtra(s.Extra, s.Index, key, v)
}

// SetExtra stores v as the step's section key, replacing what was there.
func (s *Step) SetExtra(key string, v any) error {
	return encodeExtra(&s.Extra, s.Index, key, v)
}

// extraOf decodes a section into a new T: nil when absent.
func extraOf[T any](decode func(string, any) (bool, error), key string) (*T, error) {
	var v T
	ok, err := decode(key, &v)
	if !ok || err != nil {
		return nil, err
	}
	return &v, nil
}

// CheckExtras decodes every section of the run and its steps whose type this package
// declares, and returns the errors of those that do not decode, each naming its section.
// Sections of other keys are left to their owners.
func (r *Result) CheckExtras() error {
	var errs []error
	if _, err := r.DiskRun(); err != nil {
		errs = append(errs, err)
	}
	if _, err := r.ReadaheadRun(); err != nil {
		errs = append(errs, err)
	}
	if _, err := r.DrillRun(); err != nil {
		errs = append(errs, err)
	}
	for i := range r.Steps {
		st := &r.Steps[i]
		if _, err := st.Sample(); err != nil {
			errs = append(errs, err)
		}
		if _, err := st.Seeding(); err != nil {
			errs = append(errs, err)
		}
		if _, err := st.StaleProbes(); err != nil {
			errs = append(errs, err)
		}
		if _, err := st.DrillCycle(); err != nil {
			errs = append(errs, err)
		}
		if _, err := st.Hosts(); err != nil {
			errs = append(errs, err)
		}
		if _, err := st.Terminals(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
