package experiment

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/workload/stress"
)

func init() {
	Register(Meta{Name: stress.Name, Description: "SQLQueryStress: threads × iterations of a query, with routing off and on",
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
		Flags: func(fs *pflag.FlagSet) Builder {
			s := &Stress{}
			s.register(fs)
			return func([]string) (Experiment, error) { s.built(fs); return s, nil }
		}})
}

// Stress is a stress run's spec (SQLQueryStress): a query, or a file of queries run in
// turn, on every thread of every step, with parameters drawn per iteration.
type Stress struct {
	loadFlags
	Query, QueryFile      string
	ParamFile, ParamRange string
	InitRows              int64
	InitTable             string
}

func (s *Stress) register(fs *pflag.FlagSet) {
	s.loadFlags.register(fs, "1", 1000)
	fs.StringVarP(&s.Query, "query", "q", "", "the query")
	fs.StringVar(&s.QueryFile, "query-file", "", "a file of queries, each ending with ';' at the end of a line, run in turn")
	fs.StringVar(&s.ParamFile, "param-file", "", "CSV file of parameters ($1, $2 ...), a row drawn per iteration")
	fs.StringVar(&s.ParamRange, "param-range", "", "one integer parameter $1 drawn from LO:HI")
	fs.Int64Var(&s.InitRows, "init", 0, "make --init-table with this many rows first, if it does not exist")
	fs.StringVar(&s.InitTable, "init-table", "customer", "table made by --init")
}

// Kind is stress.
func (s *Stress) Kind() string { return stress.Name }

// Validate checks the flags without connecting, every problem at once.
func (s *Stress) Validate() error {
	_, err := s.config()
	return err
}

// config reads the queries and parameters the flags name.
func (s *Stress) config() (stress.Config, error) {
	var cfg stress.Config
	_, err := s.parse()
	errs := []error{err}
	switch {
	case s.Query != "" && s.QueryFile != "":
		errs = append(errs, agerr.BadInputf("--query and --query-file: give one"))
	case s.Query != "":
		cfg.Queries = []string{s.Query}
	case s.QueryFile != "":
		b, err := os.ReadFile(s.QueryFile)
		if err != nil {
			errs = append(errs, agerr.BadInputf("--query-file %s: %v", s.QueryFile, err))
		} else if cfg.Queries = stress.SplitQueries(b); len(cfg.Queries) == 0 {
			errs = append(errs, agerr.BadInputf("--query-file %s: no queries in it", s.QueryFile))
		}
	default:
		errs = append(errs, agerr.BadInputf("no query: give --query or --query-file"))
	}
	params, err := s.params()
	cfg.Params = params
	errs = append(errs, err)
	if s.InitRows < 0 {
		errs = append(errs, agerr.BadInputf("--init %d: must be 0 or more rows", s.InitRows))
	}
	errs = append(errs, s.checkInit(s.InitRows))
	return cfg, agerr.Join(errs...)
}

// params reads --param-file or --param-range (nil for neither).
func (s *Stress) params() (stress.Params, error) {
	switch {
	case s.ParamFile != "" && s.ParamRange != "":
		return nil, agerr.BadInputf("--param-file and --param-range: give one")
	case s.ParamFile != "":
		fh, err := os.Open(s.ParamFile)
		if err != nil {
			return nil, agerr.BadInputf("--param-file %s: %v", s.ParamFile, err)
		}
		defer fh.Close()
		params, err := stress.ParseParamFile(fh)
		if err != nil {
			return nil, agerr.BadInputf("--param-file %s: %v", s.ParamFile, err)
		}
		return params, nil
	case s.ParamRange != "":
		r, err := stress.ParseRange(s.ParamRange)
		if err != nil {
			return nil, agerr.BadInputf("--param-range %q: %v", s.ParamRange, err)
		}
		return r, nil
	}
	return nil, nil
}

// Run checks the target, makes the --init table, prepares the queries on the server (a
// query it rejects is bad input) and runs the steps.
func (s *Stress) Run(ctx context.Context, r *Running) error {
	cfg, err := s.config()
	if err != nil {
		return err
	}
	l, err := s.start(ctx, r, stress.Name, "it/s", s.InitTable, s.InitRows)
	if err != nil {
		return err
	}
	defer l.Close()
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
	l.Config = stressConfig(l, given{Load: s.Threads, Compare: s.Compare, ParamFile: s.ParamFile, ParamRange: s.ParamRange}, cfg.Queries)
	l.Workload = w
	return l.Run(ctx, r)
}

// Analysis is the load's: threads against iterations per second.
func (s *Stress) Analysis() (analyze.Options, bool) {
	slos, _ := s.Analyse.SLOs()
	return analyze.Options{LoadName: "threads", Unit: "it/s", SLOs: slos}, true
}
