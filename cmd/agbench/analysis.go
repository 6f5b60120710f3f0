package main

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/sample"
)

// analysisFlags are the flags every workload command shares for its closing analysis.
type analysisFlags struct {
	slo       string
	noSamples bool
}

func (f *analysisFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.slo, "slo", "", "latency objective(s) for the SLO point, e.g. p99<5ms or p50<1ms,p99<20ms")
	fs.BoolVar(&f.noSamples, "no-samplers", false, "do not sample the OS and the database beside the load")
}

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

// samplerSet is the samplers a workload runs beside every measured window.
type samplerSet struct {
	Samplers []runner.Sampler
	pg       *sample.PG
	// Warnings say which samplers could not start; the run goes on without them.
	Warnings []string
}

// Close closes the samplers' connections.
func (s *samplerSet) Close() {
	if s.pg != nil {
		_ = s.pg.Close(context.Background())
	}
}

// startSamplers makes the database sampler on every node and the OS sampler for the
// devices behind paths and behind the data directories of nodes on this machine.
func startSamplers(ctx context.Context, nodes []sample.PGNode, paths []string) *samplerSet {
	s := &samplerSet{}
	if len(nodes) > 0 {
		pg, err := sample.NewPG(ctx, nodes, sample.PGOptions{})
		if err != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("database sampler: %v", err))
		} else {
			s.pg = pg
			s.Samplers = append(s.Samplers, pg)
			for i, info := range pg.Nodes() {
				if info.DataDirectory != "" && isLocal(nodes[i].ConnString) {
					paths = append(paths, info.DataDirectory)
				}
			}
		}
	}
	osr, err := sample.NewOSStep(sample.OSConfig{Paths: paths}, 0)
	if err != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("OS sampler: %v", err))
	} else {
		s.Samplers = append(s.Samplers, osr)
	}
	return s
}

// isLocal says whether a connection string reaches a server on this machine (loopback or
// a Unix socket), whose data directory's device can be watched here.
func isLocal(conn string) bool {
	cfg, err := pgconn.ParseConfig(conn)
	if err != nil {
		return false
	}
	if strings.HasPrefix(cfg.Host, "/") || cfg.Host == "localhost" {
		return true
	}
	ip := net.ParseIP(cfg.Host)
	return ip != nil && ip.IsLoopback()
}

// finishAnalysis analyses the run, stores the analysis in the result (call it before the
// result is written) and returns it for printing at the end of the output.
func finishAnalysis(res *result.Result, o analyze.Options) *analyze.Run {
	run, err := analyze.Attach(res, o)
	if err != nil {
		res.Warnings = append(res.Warnings, err.Error())
		return nil
	}
	return run
}

// pgNodesOf lists the nodes to sample: a cluster's nodes by name, or the primary and
// standbys given by connection strings, named as in the result's topology.
func pgNodesOf(topo *cluster.Topology, primary *pgx.ConnConfig, standbys []*pgx.ConnConfig) []sample.PGNode {
	var out []sample.PGNode
	if topo != nil {
		for i := range topo.Nodes {
			out = append(out, sample.PGNode{Name: topo.Nodes[i].Name, ConnString: topo.ConnString(&topo.Nodes[i], "")})
		}
		return out
	}
	if primary != nil {
		out = append(out, sample.PGNode{Name: "primary", ConnString: primary.ConnString()})
	}
	for i, s := range standbys {
		out = append(out, sample.PGNode{Name: fmt.Sprintf("standby%d", i+1), ConnString: s.ConnString()})
	}
	return out
}
