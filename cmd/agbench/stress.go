package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/workload/stress"
)

func init() { registerKind(stress.Name, newStressCmd) }

type stressFlags struct {
	load       loadFlags
	query      string
	queryFile  string
	paramFile  string
	paramRange string
	initRows   int64
	initTable  string
	cfg        stress.Config
}

func newStressCmd(a *app) *cobra.Command {
	f := &stressFlags{}
	c := &cobra.Command{
		Use: "stress",
		Long: `Run a query (or a file of queries, in turn) on every thread for the given iterations,
as SQLQueryStress does, and report per step: total time, iterations per second, MB read
per second on the servers (buffer hits and reads × 8 kB), rows and MB received, latency
percentiles and errors.

--threads takes a list (1,2,4,8,10,12) and runs one step per value. --compare
routing=off,on runs every step twice, interleaved, with read intent: off sends it to the
primary, on routes it to the standbys; the table shows where the sessions landed.
Parameters $1, $2 ... come from --param-file (CSV rows, one drawn per iteration) or
--param-range LO:HI (one integer). --init N makes a simple table of N rows (--init-table)
when it does not exist, for demos until 'agbench tpcc build'.`,
		Example: `  agbench stress --cluster lab --init 100000 --query "SELECT count(*) FROM customer" \
      --threads 1,2,4,8 --iterations 100 --compare routing=off,on`,
		Args:    noArgs,
		PreRunE: func(cmd *cobra.Command, _ []string) error { return f.check(cmd) },
		RunE:    func(cmd *cobra.Command, _ []string) error { return runStress(cmd, a, f) },
	}
	f.load.add(c, "1", 1000)
	fs := c.Flags()
	fs.StringVarP(&f.query, "query", "q", "", "the query")
	fs.StringVar(&f.queryFile, "query-file", "", "a file of queries, each ending with ';' at the end of a line, run in turn")
	fs.StringVar(&f.paramFile, "param-file", "", "CSV file of parameters ($1, $2 ...), a row drawn per iteration")
	fs.StringVar(&f.paramRange, "param-range", "", "one integer parameter $1 drawn from LO:HI")
	fs.Int64Var(&f.initRows, "init", 0, "make --init-table with this many rows first, if it does not exist")
	fs.StringVar(&f.initTable, "init-table", "customer", "table made by --init")
	return c
}

// check validates the flags without connecting (cobra's PreRunE, and a plan's check) and
// keeps the workload's configuration.
func (f *stressFlags) check(cmd *cobra.Command) error {
	var cfg stress.Config
	errs := []error{f.load.check(cmd)}
	switch {
	case f.query != "" && f.queryFile != "":
		errs = append(errs, agerr.BadInputf("--query and --query-file: give one"))
	case f.query != "":
		cfg.Queries = []string{f.query}
	case f.queryFile != "":
		b, err := os.ReadFile(f.queryFile)
		if err != nil {
			errs = append(errs, agerr.BadInputf("--query-file %s: %v", f.queryFile, err))
		} else if cfg.Queries = stress.SplitQueries(b); len(cfg.Queries) == 0 {
			errs = append(errs, agerr.BadInputf("--query-file %s: no queries in it", f.queryFile))
		}
	default:
		errs = append(errs, agerr.BadInputf("no query: give --query or --query-file"))
	}
	switch {
	case f.paramFile != "" && f.paramRange != "":
		errs = append(errs, agerr.BadInputf("--param-file and --param-range: give one"))
	case f.paramFile != "":
		fh, err := os.Open(f.paramFile)
		if err != nil {
			errs = append(errs, agerr.BadInputf("--param-file %s: %v", f.paramFile, err))
			break
		}
		params, err := stress.ParseParamFile(fh)
		fh.Close()
		if err != nil {
			errs = append(errs, agerr.BadInputf("--param-file %s: %v", f.paramFile, err))
		} else {
			cfg.Params = params
		}
	case f.paramRange != "":
		r, err := stress.ParseRange(f.paramRange)
		if err != nil {
			errs = append(errs, agerr.BadInputf("--param-range %q: %v", f.paramRange, err))
		} else {
			cfg.Params = r
		}
	}
	if f.initRows < 0 {
		errs = append(errs, agerr.BadInputf("--init %d: must be 0 or more rows", f.initRows))
	}
	f.cfg = cfg
	return agerr.Join(errs...)
}

func runStress(cmd *cobra.Command, a *app, f *stressFlags) error {
	l, err := f.load.load(a, "stress", "it/s")
	if err != nil {
		return err
	}
	cfg := f.cfg
	ctx := cmd.Context()
	if err := l.Start(ctx); err != nil {
		return err
	}
	defer l.Close()
	if err := initTable(ctx, a, l, f.initTable, f.initRows); err != nil {
		return err
	}
	width := 0
	if cfg.Params != nil {
		width = cfg.Params.Width()
	}
	if err := l.CheckQueries(ctx, cfg.Queries, width); err != nil {
		return err
	}
	cfg.Connect = l.Connector()
	cfg.CounterConns = l.NodeConns
	w := stress.New(cfg)
	defer w.Close()
	l.Config = experiment.StressConfig(l, experiment.Given{Load: f.load.threads, Compare: f.load.compare,
		ParamFile: f.paramFile, ParamRange: f.paramRange}, cfg.Queries)
	l.Workload = w
	return runLoad(ctx, a, cmd, l, f.load.results, render.StressColumns)
}

// runLoad runs a load experiment with progress and prints the table, the analysis and the
// footer.
func runLoad(ctx context.Context, a *app, cmd *cobra.Command, l *experiment.Load, results string, cols []table.Column) error {
	prog := newProgress(a, len(l.Plan()), "ops")
	out, runErr := experiment.Run(ctx, l, setup(cmd, results, prog.event))
	prog.clear()
	if out == nil {
		return runErr
	}
	render.Load(a.stdout, out.Result, out.Analysis, out.Path, cols, l.StaleProbe)
	return runErr
}

// initTable makes the demo table of --init rows (none for 0) and says so when it made it.
func initTable(ctx context.Context, a *app, l *experiment.Load, name string, rows int64) error {
	if rows <= 0 {
		return nil
	}
	created, took, err := l.InitTable(ctx, name, rows)
	if created && took > 0 {
		fmt.Fprintf(a.stderr, "made table %s with %d rows in %.1fs\n", name, rows, took.Seconds())
	}
	return err
}
