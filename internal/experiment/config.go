package experiment

import (
	"strings"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/drill"
	"github.com/agbench/agbench/internal/seed"
	"github.com/agbench/agbench/internal/workload/readahead"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// The configuration each kind records in its result's meta.config, in one place: what the
// run was asked for, with the spellings of the command line where the result keeps them
// as given. The keys are part of the result's format.

// given is how the command line gave what a load's configuration records as given: the
// load axis's list ("1,2,4"), the comparison ("routing=off,on") and stress's parameters.
type given struct {
	Load, Compare string
	// LoadFlag is the flag that gave Load: "--vus" when empty.
	LoadFlag              string
	ParamFile, ParamRange string
}

// stressConfig is a stress run's configuration.
func stressConfig(l *Load, g given, queries []string) map[string]any {
	s := l.Step
	return map[string]any{"queries": queries, "threads": g.Load, "iterations": s.Iterations,
		"duration": s.Duration.String(), "rampup": s.Rampup.String(), "rate": s.Rate, "intent": string(l.Intent),
		"compare": g.Compare, "repeat": l.Sweep.Repeat, "param_file": g.ParamFile, "param_range": g.ParamRange,
		"stale_probe": l.StaleProbe}
}

// scanConfig is a scan run's configuration.
func scanConfig(l *Load, g given, table string, rows int64, cold bool) map[string]any {
	return map[string]any{"table": table, "rows": rows, "cold": cold, "threads": g.Load,
		"iterations": l.Step.Iterations, "intent": string(l.Intent), "compare": g.Compare, "repeat": l.Sweep.Repeat, "stale_probe": l.StaleProbe}
}

// tpccConfig is a tpcc run's configuration, with the built schema's facts.
func tpccConfig(l *Load, w *tpcc.Workload, meta *tpcc.Meta, g given) map[string]any {
	s := l.Step
	c := map[string]any{"warehouses": meta.Warehouses, "build_seed": meta.Seed, "mode": string(w.Mode),
		"vus": g.Load, "rampup_seconds": s.Rampup.Seconds(), "duration_seconds": s.Duration.Seconds(), "rate": s.Rate,
		"all_warehouses": w.AllWarehouses, "keying": w.Keying, "read_intent": w.ReadIntent, "compare": g.Compare, "stale_probe": l.StaleProbe,
		"run_constants": w.Constants(), "load_constants": meta.C}
	if w.Terminals > 0 {
		// A run of terminals has no VUs: the runner's are the pool's sessions.
		c["terminals"], c["sessions"], c["think_scale"] = w.Terminals, maxLoad(l.Sweep), w.ThinkScale
		delete(c, "vus")
	}
	return c
}

// config is a seeding's configuration: the variants by their labels.
func (s *Seed) config() map[string]any {
	o := s.Options
	return map[string]any{"method": o.Method, "compress": o.Compress.String(), "max_rate": o.MaxRate,
		"lag_threshold": o.LagThreshold, "variants": seed.Labels(s.All()), "repeat": s.Repeat, "init_size": s.InitSize}
}

// config is a read-ahead run's configuration as set up (defaults filled in), on the
// server of the binaries in pgBin.
func (r *Readahead) config(cfg readahead.Config, pgBin string) map[string]any {
	name := ""
	if r.Topo != nil {
		name = r.Topo.Name
	}
	return map[string]any{
		"rows": cfg.Rows, "range_ids": cfg.RangeIDs, "join_ids": cfg.JoinIDs, "repeat": cfg.Repeat, "queries": cfg.Queries,
		"device": cfg.Device, "read_ahead_kb": cfg.ReadAheadKB, "io_concurrency": cfg.IOConcurrency,
		"throttle_iops": cfg.ThrottleIOPS, "drop_caches": cfg.DropCaches, "cluster": name, "pg_bin": pgBin,
	}
}

// config is the drill's configuration as the result records it: on an agbench cluster its
// commit mode (and Patroni's, with what kill-primary kills), on endpoints the nodes and
// how the failover comes (Patroni's switchover, or a wait for one by other means).
func (d *Drill) config() map[string]any {
	o := d.Options
	if e := d.Endpoints; e != nil {
		var names []string
		for _, n := range e.Nodes {
			names = append(names, n.Name)
		}
		cfg := map[string]any{"fault": o.Fault, "cycles": o.Cycles, "vus": o.Writers, "read_vus": o.Readers,
			"between": o.Between.String(), "commit_wait": o.CommitWait.String(), "keep": o.Keep,
			"nodes": strings.Join(names, ","), "listener": e.Listener != "", "patroni": len(e.Patroni) > 0}
		if len(e.Patroni) == 0 {
			cfg["observe_wait"] = o.ObserveWait.String()
		}
		return cfg
	}
	cfg := map[string]any{"fault": o.Fault, "workload": o.Workload, "cycles": o.Cycles, "vus": o.Writers, "read_vus": o.Readers,
		"between": o.Between.String(), "commit_wait": o.CommitWait.String(), "detect_timeout": o.DetectTimeout.String(), "keep": o.Keep, "commit": d.Topo.Commit}
	if o.Fault == drill.FaultWALFull {
		cfg["wal_fs_size"] = o.WALFSSize
	}
	if d.Topo.Patroni != nil {
		cfg["ha"] = cluster.HAPatroni
		cfg["kill"] = o.Kill
	}
	return cfg
}
