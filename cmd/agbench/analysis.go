package main

import (
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
)

// analysisFlags are the flags every measuring command shares for its samplers and its
// closing analysis: --sample / --sample=false and --slo.
type analysisFlags struct {
	slo    string
	sample bool
	// noSamplers is tpcc run's old spelling of --sample=false, kept as a hidden alias.
	noSamplers bool
}

func (f *analysisFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.slo, "slo", "", "latency objective(s) for the SLO point, e.g. p99<5ms or p50<1ms,p99<20ms")
	fs.BoolVar(&f.sample, "sample", true, "sample the OS and the servers beside every step (--sample=false: none; the analysis then judges what needs no sampler)")
	fs.BoolVar(&f.noSamplers, "no-samplers", false, "old spelling of --sample=false")
	_ = fs.MarkHidden("no-samplers")
}

// sampling says whether the samplers run.
func (f *analysisFlags) sampling() bool { return f.sample && !f.noSamplers }

// slos parses --slo; bad input names the flag and the position.
func (f *analysisFlags) slos() ([]analyze.SLO, error) {
	if f.slo == "" {
		return nil, nil
	}
	s, err := analyze.ParseSLOs(f.slo)
	if err != nil {
		return nil, agerr.BadInputf("--slo %q: %v", f.slo, err)
	}
	return s, nil
}
