package drill

import (
	"context"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// Sampler measures beside each cycle, in the runner's Sampler shape: Start at the cycle's
// start (a step holding only its window's start), Stop into the cycle's step once it ends.
type Sampler interface {
	Start(ctx context.Context, st *result.Step) error
	Stop(ctx context.Context, st *result.Step) error
}

// sampleCycle starts the samplers at a cycle's start and returns what stops them into its
// step. A sampler that fails to start or stop is a warning of the step, never the drill's
// end.
func sampleCycle(ctx context.Context, samplers []Sampler, start time.Time) func(context.Context, *result.Step) {
	open := &result.Step{Window: result.Window{Start: start}}
	var started []Sampler
	var warnings []string
	for _, s := range samplers {
		if err := s.Start(ctx, open); err != nil {
			warnings = append(warnings, "sampler not started: "+err.Error())
			continue
		}
		started = append(started, s)
	}
	return func(ctx context.Context, st *result.Step) {
		for _, s := range started {
			if err := s.Stop(ctx, st); err != nil {
				warnings = append(warnings, "sampler: "+err.Error())
			}
		}
		st.Warnings = append(st.Warnings, warnings...)
	}
}
