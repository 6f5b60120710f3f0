package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/sample"
)

// startSamplers makes the samplers that run beside every measured window: the OS (CPU,
// the devices behind the cluster's data folders, PSI) and, unless the servers restart
// between steps, every node's database statistics. A sampler that cannot start is a
// warning, never a failure. The returned function closes them.
func (p *loadPlan) startSamplers(ctx context.Context, withPG bool) ([]runner.Sampler, func(), []string) {
	var smps []runner.Sampler
	var warns []string
	closers := []func(){}
	var paths []string
	if p.tgt.Topo != nil {
		for _, n := range p.tgt.Topo.Nodes {
			paths = append(paths, n.DataDir)
		}
	}
	if os, err := sample.NewOSStep(sample.OSConfig{Paths: paths}, 0); err != nil {
		warns = append(warns, fmt.Sprintf("OS sampler: %v", err))
	} else {
		smps = append(smps, os)
	}
	if withPG {
		var nodes []sample.PGNode
		if p.tgt.Topo != nil {
			for i := range p.tgt.Topo.Nodes {
				n := &p.tgt.Topo.Nodes[i]
				nodes = append(nodes, sample.PGNode{Name: n.Name, ConnString: p.tgt.Topo.ConnString(n, p.f.spec.Database)})
			}
		} else {
			for i, cs := range append([]string{p.tgt.Primary}, p.tgt.Standbys...) {
				name := "primary"
				if i > 0 {
					name = fmt.Sprintf("standby%d", i)
				}
				if cs != "" {
					nodes = append(nodes, sample.PGNode{Name: name, ConnString: cs})
				}
			}
		}
		if pg, err := sample.NewPG(ctx, nodes, sample.PGOptions{}); err != nil {
			warns = append(warns, fmt.Sprintf("database sampler: %v", err))
		} else {
			smps = append(smps, pg)
			closers = append(closers, func() { pg.Close(context.Background()) })
		}
	}
	return smps, func() {
		for _, c := range closers {
			c()
		}
	}, warns
}

// printAnalysis ends a workload's output with internal/analyze's text: per variant the knee
// line, the saturation sentence and the validity verdicts, then the comparison of variants
// ("no difference measured" where their spreads overlap).
func printAnalysis(w io.Writer, run *analyze.Run) {
	if run != nil {
		_ = run.WriteText(w)
	}
}
