package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/freeport"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload/readahead"
)

// privateServerTries bounds the attempts to find a free port for a private server.
const privateServerTries = 5

// Readahead is the read-ahead article's experiment: its queries, each on a cold cache with
// prefetching off and on, interleaved, Config.Repeat times, on an agbench cluster's primary
// (Topo) or on a private throwaway server made from PGBin and destroyed after.
//
// It keeps its own loop rather than the runner's: each measurement is one query on a cache
// emptied just before (a server restart or evicted files), read from EXPLAIN (ANALYZE,
// BUFFERS) and the device, so there is no load of virtual users and no measured window of
// many operations; internal/workload/readahead schedules and measures the runs.
type Readahead struct {
	// Cluster names the agbench cluster to run on (its primary is restarted between runs),
	// loaded by Run from the run's home into Topo (or Topo is given); neither makes a
	// private server of the binaries in PGBin ("" for the installed PostgreSQL).
	Cluster string
	Topo    *cluster.Topology
	PGBin   string
	// Config is the experiment's configuration; its progress lines are sent as Log events.
	Config readahead.Config

	// Conditions and Rows are what the run found on this machine and its summary table,
	// once it has set up (for the terminal).
	Conditions readahead.Conditions
	Rows       []readahead.Row
}

// PrivateServer is sent when a private server is being made.
type PrivateServer struct{}

// Kind is "readahead".
func (r *Readahead) Kind() string { return "readahead" }

// Validate checks the configuration, and that a cluster and binaries are not both given.
func (r *Readahead) Validate() error {
	var errs []error
	if err := r.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	if (r.Topo != nil || r.Cluster != "") && r.PGBin != "" {
		errs = append(errs, errClusterAndPGBin())
	}
	return agerr.Join(errs...)
}

func errClusterAndPGBin() error {
	return agerr.BadInputf("--cluster and --pg-bin: give one (an existing cluster, or binaries for a private server)")
}

// Sections is the read-ahead section of the run.
func (r *Readahead) Sections() []string { return []string{readahead.ExtraKey} }

// Run sets the experiment up, runs every measurement (the result is written after each),
// and undoes the set-up.
func (r *Readahead) Run(ctx context.Context, run *Running) (err error) {
	if r.Topo == nil && r.Cluster != "" {
		if r.Topo, err = cluster.Load(run.Home(), r.Cluster); err != nil {
			return err
		}
	}
	topo := r.Topo
	var top *result.Topology
	if topo != nil {
		unlock, err := topo.Lock()
		if err != nil {
			return err
		}
		defer unlock()
		top = &result.Topology{Cluster: topo.Name, Commit: topo.Commit}
	} else {
		run.Emit(PrivateServer{})
		var destroy func() error
		if topo, destroy, err = privateServer(ctx, r.PGBin); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, destroy()) }()
		top = &result.Topology{}
	}
	p := topo.Primary()
	top.Nodes = []result.Node{{Name: p.Name, Role: p.Role, Addr: fmt.Sprintf("%s:%d", p.Host, p.Port)}}
	cfg := r.Config
	cfg.Progress = func(line string) { run.Emit(Log{Line: line}) }
	e, err := readahead.Setup(ctx, topoServer{topo}, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, e.Close()) }()
	rec, err := run.Recorder()
	if err != nil {
		return err
	}
	cond, cfg := e.Conditions(), e.Config()
	res := rec.Result
	res.Meta.Topology = top
	res.Meta.Seed = cfg.Seed
	res.Meta.Server = &result.Server{Version: cond.ServerVersion, VersionNum: cond.VersionNum}
	res.Meta.Config = r.config(cfg, topo.PG.BinDir)
	queries := readahead.Queries(cfg.RangeIDs, cfg.JoinIDs)
	var ms []readahead.Measurement
	var stepErr error
	record := func() {
		if err := fillReadahead(res, queries, cond, ms); err != nil && stepErr == nil {
			stepErr = err
		}
	}
	ms, runErr := e.RunAll(ctx, func(m readahead.Measurement) {
		ms = append(ms, m)
		record()
		_ = rec.Save()
	})
	record()
	r.Conditions, r.Rows = cond, readahead.Summarize(queries, ms)
	return errors.Join(runErr, stepErr)
}

// fillReadahead puts the measurements so far into the result: a step each, the summary
// table and the conditions in the run's extra data, and the run's warnings.
func fillReadahead(res *result.Result, queries []readahead.Query, cond readahead.Conditions, ms []readahead.Measurement) error {
	res.Steps = res.Steps[:0]
	for i, m := range ms {
		point := 0
		for j, q := range queries {
			if q.Name == m.Query {
				point = j
			}
		}
		s, err := m.Step(i, point)
		if err != nil {
			return err
		}
		res.Steps = append(res.Steps, s)
	}
	if err := res.SetExtra(readahead.ExtraKey, readahead.RunExtra{Conditions: cond, Table: readahead.Summarize(queries, ms)}); err != nil {
		return err
	}
	res.Warnings = readaheadWarnings(cond, ms)
	return nil
}

// readaheadWarnings says which runs were warm instead of cold or used another plan node.
func readaheadWarnings(cond readahead.Conditions, ms []readahead.Measurement) []string {
	var w []string
	warm, wrongPlan := 0, 0
	for _, m := range ms {
		if m.ColdAsked && !m.Cold {
			warm++
		}
		if !m.NodeOK {
			wrongPlan++
		}
	}
	if warm > 0 {
		w = append(w, fmt.Sprintf("%d of %d runs read nothing from storage: they were warm, not cold", warm, len(ms)))
	}
	if wrongPlan > 0 {
		w = append(w, fmt.Sprintf("%d of %d runs did not use the intended plan node", wrongPlan, len(ms)))
	}
	return append(w, cond.Notes...)
}

// topoServer is readahead.Server over a cluster's primary.
type topoServer struct{ t *cluster.Topology }

func (s topoServer) Connect(ctx context.Context, db string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(s.t.ConnString(s.t.Primary(), db))
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = 10 * time.Second
	return pgx.ConnectConfig(ctx, cfg)
}

func (s topoServer) Restart(ctx context.Context) error {
	name := s.t.Primary().Name
	if err := s.t.StopNode(ctx, name); err != nil {
		return err
	}
	return s.t.StartNode(ctx, name)
}

func (s topoServer) DataDir() string    { return s.t.Primary().DataDir }
func (s topoServer) OSUser() (int, int) { return s.t.OSUser.UID, s.t.OSUser.GID }
func (s topoServer) HasStandbys() bool  { return len(s.t.Standbys()) > 0 }

// privateServer makes a lone primary in a temporary agbench home on a free loopback port,
// and returns the function that destroys it and the home.
func privateServer(ctx context.Context, pgBin string) (*cluster.Topology, func() error, error) {
	home, err := os.MkdirTemp("", "agbench-readahead-home-")
	if err != nil {
		return nil, nil, err
	}
	if err := os.Chmod(home, 0o755); err != nil {
		os.RemoveAll(home)
		return nil, nil, err
	}
	var topo *cluster.Topology
	for attempt := 0; attempt < privateServerTries; attempt++ {
		port, perr := freeport.Consecutive(1)
		if perr != nil {
			err = perr
			break
		}
		topo, err = cluster.Create(ctx, cluster.CreateOptions{
			Home: home, Name: "readahead", Commit: cluster.CommitAsync, BasePort: port, PGBin: pgBin,
			Settings: []string{"fsync=off", "autovacuum=off"},
		})
		if err == nil || !strings.Contains(err.Error(), "in use") {
			break
		}
	}
	if err != nil {
		os.RemoveAll(home)
		return nil, nil, err
	}
	return topo, func() error {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return errors.Join(topo.Destroy(c), os.RemoveAll(home))
	}, nil
}
