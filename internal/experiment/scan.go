package experiment

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/workload/scan"
)

func init() {
	Register(Meta{Name: scan.Name, Description: "Time reading N rows of a table to the client (the articles' OLAP read), warm or cold",
		Long: `Read N rows of a table to the client and report the elapsed time, rows/s, MB/s received
and the servers' buffer hits and reads (× 8 kB: MB/s read by the server).

--cold restarts the cluster's servers (--cluster only) and drops the OS page cache
(needs root and a writable /proc/sys/vm/drop_caches) before every step; where the cache
cannot be dropped the run says it was warm. --compare routing=off,on reads with read
intent from the primary, then routed to the standbys.`,
		Example: `  agbench scan --cluster lab --table customer --rows 1000000 --compare routing=off,on`,
		Flags: func(fs *pflag.FlagSet) Builder {
			s := &Scan{}
			s.register(fs)
			return func([]string) (Experiment, error) { s.built(fs); return s, nil }
		}})
}

// Scan is a scan run's spec: read N rows of a table to the client, warm or cold.
type Scan struct {
	loadFlags
	Table    string
	Rows     int64
	Cold     bool
	InitRows int64
}

func (s *Scan) register(fs *pflag.FlagSet) {
	s.loadFlags.register(fs, "1", 1)
	fs.StringVar(&s.Table, "table", "customer", "table to read")
	fs.Int64Var(&s.Rows, "rows", 1000000, "rows to read (0: all)")
	fs.BoolVar(&s.Cold, "cold", false, "restart the servers and drop the OS cache before each step")
	fs.Int64Var(&s.InitRows, "init", 0, "make --table with this many rows first, if it does not exist")
}

// Kind is scan.
func (s *Scan) Kind() string { return scan.Name }

// Validate checks the flags without connecting, every problem at once.
func (s *Scan) Validate() error {
	_, err := s.parse()
	errs := []error{err}
	if s.Table == "" {
		errs = append(errs, agerr.BadInputf("--table: empty"))
	}
	if s.Rows < 0 || s.InitRows < 0 {
		errs = append(errs, agerr.BadInputf("--rows and --init: must be 0 or more"))
	}
	if s.Cold && s.Target.Cluster == "" {
		errs = append(errs, agerr.BadInputf("--cold restarts the servers: it needs --cluster"))
	}
	if s.Cold && s.Segments.Given() {
		errs = append(errs, agerr.BadInputf("--cold with --segment: a segment restarting the servers would cut the other segments' sessions"))
	}
	errs = append(errs, s.checkInit(s.InitRows))
	return agerr.Join(errs...)
}

// Run checks the target, makes the --init table, prepares the scan's query on the server
// and runs the steps (each after a restart and a dropped cache with --cold).
func (s *Scan) Run(ctx context.Context, r *Running) error {
	l, err := s.start(ctx, r, scan.Name, "reads/s", s.Table, s.InitRows)
	if err != nil {
		return err
	}
	defer l.Close()
	cfg := scan.Config{Table: s.Table, Rows: s.Rows, Connect: l.Connector(), CounterConns: l.NodeConns}
	if s.Cold {
		cfg.Cold = l.ColdCache()
	}
	if err := l.CheckQueries(ctx, []string{cfg.Query()}, 0); err != nil {
		return err
	}
	w := scan.New(cfg)
	defer w.Close()
	l.Config = scanConfig(l, given{Load: s.Threads, Compare: s.Compare}, s.Table, s.Rows, s.Cold)
	l.Workload = w
	return l.Run(ctx, r)
}

// Analysis is the load's: threads against reads per second.
func (s *Scan) Analysis() (analyze.Options, bool) {
	slos, _ := s.Analyse.SLOs()
	return analyze.Options{LoadName: "threads", Unit: "reads/s", SLOs: slos}, true
}
