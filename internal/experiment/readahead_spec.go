package experiment

import (
	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/workload/readahead"
)

// ReadaheadSettings are a read-ahead run's settings as a command line gives them.
type ReadaheadSettings struct {
	// Cluster names an agbench cluster to run on; PGBin the binaries of a private server
	// instead ("" for the installed PostgreSQL).
	Cluster, PGBin string
	// Results is the folder of result folders; Out is its old spelling, which wins when given.
	Results, Out string
	Config       readahead.Config
}

// Spec checks the settings, every problem at once and without reading the cluster, and
// makes the experiment (its Topo is the caller's to load from Cluster); it fills the query
// bounds not given and settles Results.
func (s *ReadaheadSettings) Spec() (*Readahead, error) {
	cfg := &s.Config
	if cfg.RangeIDs == 0 {
		cfg.RangeIDs = min(readahead.DefaultRangeIDs, max(cfg.Rows, 1))
	}
	if cfg.JoinIDs == 0 {
		cfg.JoinIDs = min(readahead.DefaultJoinIDs, max(cfg.Rows, 1))
	}
	errs := []error{cfg.Validate()}
	if s.Cluster != "" && s.PGBin != "" {
		errs = append(errs, errClusterAndPGBin())
	}
	if s.Cluster != "" {
		errs = append(errs, cluster.CheckName(s.Cluster))
	}
	if s.Out != "" {
		s.Results = s.Out
	}
	if s.Results == "" {
		errs = append(errs, agerr.BadInputf("--results: want a folder"))
	}
	if err := agerr.Join(errs...); err != nil {
		return nil, err
	}
	return &Readahead{PGBin: s.PGBin, Config: s.Config}, nil
}
