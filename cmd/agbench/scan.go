package main

import (
	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/workload/scan"
)

func init() { registerKind(scan.Name, newScanCmd) }

type scanFlags struct {
	load     loadFlags
	table    string
	rows     int64
	cold     bool
	initRows int64
}

func newScanCmd(a *app) *cobra.Command {
	f := &scanFlags{}
	c := &cobra.Command{
		Use: "scan",
		Long: `Read N rows of a table to the client and report the elapsed time, rows/s, MB/s received
and the servers' buffer hits and reads (× 8 kB: MB/s read by the server).

--cold restarts the cluster's servers (--cluster only) and drops the OS page cache
(needs root and a writable /proc/sys/vm/drop_caches) before every step; where the cache
cannot be dropped the run says it was warm. --compare routing=off,on reads with read
intent from the primary, then routed to the standbys.`,
		Example: `  agbench scan --cluster lab --table customer --rows 1000000 --compare routing=off,on`,
		Args:    noArgs,
		PreRunE: func(cmd *cobra.Command, _ []string) error { return f.check(cmd) },
		RunE:    func(cmd *cobra.Command, _ []string) error { return runScan(cmd, a, f) },
	}
	f.load.add(c, "1", 1)
	fs := c.Flags()
	fs.StringVar(&f.table, "table", "customer", "table to read")
	fs.Int64Var(&f.rows, "rows", 1000000, "rows to read (0: all)")
	fs.BoolVar(&f.cold, "cold", false, "restart the servers and drop the OS cache before each step")
	fs.Int64Var(&f.initRows, "init", 0, "make --table with this many rows first, if it does not exist")
	return c
}

// check validates the flags without connecting (cobra's PreRunE, and a plan's check).
func (f *scanFlags) check(cmd *cobra.Command) error {
	errs := []error{f.load.check(cmd)}
	if f.table == "" {
		errs = append(errs, agerr.BadInputf("--table: empty"))
	}
	if f.rows < 0 || f.initRows < 0 {
		errs = append(errs, agerr.BadInputf("--rows and --init: must be 0 or more"))
	}
	if f.cold && f.load.spec.Cluster == "" {
		errs = append(errs, agerr.BadInputf("--cold restarts the servers: it needs --cluster"))
	}
	return agerr.Join(errs...)
}

func runScan(cmd *cobra.Command, a *app, f *scanFlags) error {
	l, err := f.load.load(a, "scan", "reads/s")
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if err := l.Start(ctx); err != nil {
		return err
	}
	defer l.Close()
	if err := initTable(ctx, a, l, f.table, f.initRows); err != nil {
		return err
	}
	cfg := scan.Config{Table: f.table, Rows: f.rows, Connect: l.Connector(), CounterConns: l.NodeConns}
	if f.cold {
		cfg.Cold = l.ColdCache()
	}
	if err := l.CheckQueries(ctx, []string{cfg.Query()}, 0); err != nil {
		return err
	}
	w := scan.New(cfg)
	defer w.Close()
	l.Config = experiment.ScanConfig(l, experiment.Given{Load: f.load.threads, Compare: f.load.compare}, f.table, f.rows, f.cold)
	l.Workload = w
	return runLoad(ctx, a, cmd, l, f.load.results, render.ScanColumns)
}
