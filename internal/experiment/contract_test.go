package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/diskio"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/target"
)

// Every kind is registered once, under its command's words, and its flags' builder makes
// a spec of it from its defaults.
func TestRegistryHasEveryKind(t *testing.T) {
	var names []string
	for _, m := range Registered() {
		names = append(names, m.Name)
		e, err := m.Build(pflag.NewFlagSet(m.Name, pflag.ContinueOnError))(nil)
		if err != nil || e == nil || e.Kind() != m.Name {
			t.Errorf("%s: the builder made %#v (%v)", m.Name, e, err)
		}
	}
	want := "disk drill readahead scan seed stress tpcc build tpcc run"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("registered %q, want %q (sorted)", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a second registration of a name did not panic")
		}
	}()
	Register(Meta{Name: "disk", Flags: func(*pflag.FlagSet) Builder { return nil }})
}

// A spec that Validate refuses is bad input: Run makes no folder, connects to nothing and
// returns no outcome. The load's target points at a port where nothing listens, so a
// connection attempt would fail with another error.
func TestRunRefusesABadSpecWithoutConnecting(t *testing.T) {
	nowhere := "postgres://agbench@127.0.0.1:1/postgres?connect_timeout=1"
	specs := map[string]Experiment{
		"load without a workload": &Load{Command: "stress", Target: &target.Target{Primary: nowhere}},
		"disk with a bad step":    &Disk{Path: "x.dat", Steps: []diskio.Workload{{}}},
		"seed without a method":   &Seed{},
		"readahead of no rows":    &Readahead{PGBin: "/nonexistent"},
		"drill without a fault":   &Drill{},
	}
	for name, e := range specs {
		base := filepath.Join(t.TempDir(), "results")
		out, err := Run(context.Background(), e, Setup{Version: "test", Results: base})
		if out != nil || agerr.ExitCode(err) != agerr.ExitBadInput {
			t.Errorf("%s: outcome %v, error %v (exit %d), want bad input and no outcome", name, out, err, agerr.ExitCode(err))
		}
		if strings.Contains(strings.ToLower(fmt.Sprint(err)), "connect") {
			t.Errorf("%s: %v: it tried to connect", name, err)
		}
		if _, serr := os.Stat(base); serr == nil {
			t.Errorf("%s: results folder made for a refused spec", name)
		}
	}
}

// A kind that fails before it takes its recorder leaves no folder; one that fails after
// it measured is recorded, marked incomplete with the reason.
func TestRunRecordsAndMarksIncomplete(t *testing.T) {
	base := t.TempDir()
	out, err := Run(context.Background(), failing{after: false}, Setup{Results: base})
	if out != nil || err == nil {
		t.Fatalf("failed before recording: outcome %v, err %v", out, err)
	}
	if m, _ := filepath.Glob(filepath.Join(base, "*")); len(m) != 0 {
		t.Fatalf("folders left: %v", m)
	}
	out, err = Run(context.Background(), failing{after: true}, Setup{Results: base})
	if err == nil || out == nil || out.Path == "" {
		t.Fatalf("failed after a step: outcome %v, err %v", out, err)
	}
	res, rerr := result.Read(out.Path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if res.Complete || res.IncompleteReason != context.Canceled.Error() || len(res.Steps) != 1 {
		t.Fatalf("complete %v, reason %q, steps %d", res.Complete, res.IncompleteReason, len(res.Steps))
	}
}

// failing is a kind that fails, before it takes its recorder or after a step.
type failing struct{ after bool }

func (failing) Kind() string       { return "failing" }
func (failing) Validate() error    { return nil }
func (failing) Sections() []string { return nil }
func (f failing) Run(ctx context.Context, r *Running) error {
	if !f.after {
		return agerr.BadInputf("refused while preparing")
	}
	rec, err := r.Recorder()
	if err != nil {
		return err
	}
	rec.AddStep(result.Step{Index: 0, VUs: 1, Complete: true})
	return context.Canceled // as a run cut short
}
