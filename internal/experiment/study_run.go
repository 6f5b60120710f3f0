package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/atomicfile"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/plan"
	"github.com/agbench/agbench/internal/result"
)

// A study is an experiment of its own kind: it is checked whole (Validate) and run with an
// event stream like every kind. It is not in the registry: a plan's experiment cannot be a
// study, and the run command reads a plan file rather than flags.
var _ Experiment = (*Study)(nil)

// Kind is the study's command.
func (s *Study) Kind() string { return "run" }

// Sections is none: a study writes no result of its own, each experiment writes its own.
func (s *Study) Sections() []string { return nil }

// CommandsFile is the file of a study's folder that lists the commands it ran, one a line,
// as ShownCommand shows them.
const CommandsFile = "commands.txt"

// ShownCommand is a command line as a study shows and logs it: without passwords (they
// come from PGPASSWORD or ~/.pgpass when it is pasted), quoted for a POSIX shell.
func ShownCommand(args []string) string {
	return result.CommandLine(result.RedactArgs(args))
}

// Run runs the study: it reserves the study's folder (<results>/<name>-<time>), creates
// the cluster of a cluster target, runs the experiments in order until one fails or ctx is
// done, writes the commands it ran (CommandsFile) and the report (Study.Report), and
// destroys the cluster it created, also after a failure or Ctrl-C (unless the plan keeps
// it). It never takes the recorder: each experiment records its own result in the study's
// folder. Its progress goes to the event stream (StudyBegun … ClusterDestroyed, and Log
// for the cluster's creation).
func (s *Study) Run(ctx context.Context, r *Running) (err error) {
	p := s.Plan
	started := time.Now().UTC()
	dir, err := ReserveDir(filepath.Join(p.Results, p.Name+"-"+started.Format("20060102T150405Z")))
	if err != nil {
		return err
	}
	r.Emit(StudyBegun{Name: p.Name, Experiments: len(p.Experiments), Target: p.Target.Summary(), Dir: dir})
	var log strings.Builder
	if cl := p.Target.Cluster; cl != nil && !cl.Reuse {
		if err := s.createCluster(ctx, r, cl); err != nil {
			return err
		}
		fmt.Fprintln(&log, ShownCommand(cl.CreateArgs()))
		if !cl.Keep {
			defer func() {
				if derr := destroyCluster(ctx, r, cl.Name); derr != nil && err == nil {
					err = derr
				}
			}()
		}
	}
	failed := s.runAll(ctx, NewStudy(p, dir).Runs, r, &log)
	reportErr := errors.Join(atomicfile.Write(filepath.Join(dir, CommandsFile), []byte(log.String()), 0o644), s.report(dir))
	r.Emit(StudyEnded{Name: p.Name, Took: time.Since(started)})
	switch {
	case failed != "":
		return fmt.Errorf("experiment %s failed; the report covers what ran", failed)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return reportErr
}

// runAll runs the experiments in order, each logged as it starts, until one fails or ctx
// is done; it returns the label of the one that failed ("" when none did).
func (s *Study) runAll(ctx context.Context, runs []StudyRun, r *Running, log *strings.Builder) string {
	for i, run := range runs {
		if ctx.Err() != nil {
			break
		}
		r.Emit(ExperimentBegun{I: i + 1, N: len(runs), Label: run.Label, Args: run.Args})
		fmt.Fprintln(log, ShownCommand(run.Args))
		start := time.Now()
		err := run.err
		if run.Spec != nil {
			err = s.Experiment(ctx, run)
		}
		r.Emit(ExperimentEnded{I: i + 1, N: len(runs), Label: run.Label, Took: time.Since(start), Err: err})
		if err != nil {
			return run.Label
		}
	}
	return ""
}

func (s *Study) report(dir string) error {
	if s.Report == nil {
		return nil
	}
	return s.Report(dir)
}

// createCluster creates the cluster of the study's target with the options cluster create
// makes of the same command line.
func (s *Study) createCluster(ctx context.Context, r *Running, cl *plan.Cluster) error {
	r.Emit(ClusterCreating{Args: cl.CreateArgs()})
	var topo *cluster.Topology
	var took time.Duration
	o, err := ClusterOptions(cl, r.Home(), s.Agbench, &logLines{r: r})
	if err == nil {
		start := time.Now()
		topo, err = cluster.Create(ctx, o)
		took = time.Since(start)
	}
	r.Emit(ClusterCreated{Topology: topo, Took: took, Err: err})
	if err != nil {
		return fmt.Errorf("creating cluster %s failed (exit %d); nothing else ran", cl.Name, agerr.ExitCode(err))
	}
	return nil
}

// destroyCluster destroys the study's cluster under its lock, as cluster destroy does; it
// runs after Ctrl-C too, when ctx is done.
func destroyCluster(ctx context.Context, r *Running, name string) error {
	r.Emit(ClusterDestroying{Name: name})
	ctx = context.WithoutCancel(ctx)
	var took time.Duration
	topo, unlock, err := cluster.OpenLocked(ctx, r.Home(), name)
	if err == nil {
		start := time.Now()
		err = topo.Destroy(ctx)
		took = time.Since(start)
		unlock()
	}
	r.Emit(ClusterDestroyed{Name: name, Took: took, Err: err})
	if err != nil {
		return fmt.Errorf("destroying cluster %s failed (exit %d)", name, agerr.ExitCode(err))
	}
	return nil
}

// logLines sends each line written to it as a Log event (cluster.Create's progress).
type logLines struct {
	r    *Running
	part []byte
}

func (w *logLines) Write(p []byte) (int, error) {
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.r.Emit(Log{Line: string(w.part[:i])})
		w.part = w.part[i+1:]
	}
}
