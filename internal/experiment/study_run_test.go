package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/plan"
)

// studyOf parses a plan and makes its study, with every experiment run by experiment.Run
// (as the command layer's hook does, without the printing) and the report's folder noted.
func studyOf(t *testing.T, body, home string) (*Study, *[]string) {
	t.Helper()
	p, err := plan.Parse("s.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	s := NewStudy(p, "dir")
	if err := agerr.Join(p.Check(Catalog{}), s.Validate()); err != nil {
		t.Fatal(err)
	}
	var reported []string
	s.Experiment = func(ctx context.Context, r StudyRun) error {
		_, err := Run(ctx, r.Spec, Setup{Version: "test", Args: r.Args, Results: r.Flags.Lookup("results").Value.String(), Home: home})
		return err
	}
	s.Report = func(dir string) error { reported = append(reported, dir); return nil }
	s.Agbench = func() (string, error) { return "", fmt.Errorf("no background agbench in this test") }
	return s, &reported
}

// eventLog keeps a study's events in order, named by their type.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := e.(Log); !ok {
		l.events = append(l.events, e)
	}
}

func (l *eventLog) names() string {
	var out []string
	for _, e := range l.events {
		out = append(out, reflect.TypeOf(e).Name())
	}
	return strings.Join(out, " ")
}

// A study creates its cluster through the cluster package, runs its experiments until one
// fails, logs the commands it ran, has its report written and destroys the cluster, each
// step sent as an event in that order.
func TestStudyRunCreatesRunsAndDestroys(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	home, results := clustertest.Home(t), t.TempDir()
	base, err := clustertest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { destroyLeft(t, home) })
	s, reported := studyOf(t, fmt.Sprintf(`name: s
results: %s
target:
  cluster: {name: s, standbys: 0, base_port: %d, settings: {fsync: "off"}}
experiments:
  - {command: stress, flags: {query: SELECT 1, threads: 1, iterations: 5}}
  - {command: tpcc run, flags: {vus: 1, duration: 1s}}
  - {command: stress, name: never, flags: {query: SELECT 2}}
`, results, base), home)
	var log eventLog
	out, err := Run(context.Background(), s, Setup{Home: home, Events: log.add})
	if out != nil || err == nil || err.Error() != "experiment tpcc-run failed; the report covers what ran" {
		t.Fatalf("outcome %v, error %v", out, err)
	}
	want := "StudyBegun ClusterCreating ClusterCreated ExperimentBegun ExperimentEnded ExperimentBegun ExperimentEnded StudyEnded ClusterDestroying ClusterDestroyed"
	if got := log.names(); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	ev := log.events
	dir := ev[0].(StudyBegun).Dir
	if c := ev[2].(ClusterCreated); c.Err != nil || c.Topology == nil || c.Topology.Name != "s" {
		t.Errorf("created %+v", c)
	}
	if e := ev[4].(ExperimentEnded); e.Err != nil || e.I != 1 || e.N != 3 || e.Label != "stress" {
		t.Errorf("first experiment %+v", e)
	}
	if e := ev[6].(ExperimentEnded); !agerr.IsBadInput(e.Err) || !strings.Contains(e.Err.Error(), "tpcc build first") {
		t.Errorf("second experiment %+v", e)
	}
	if d := ev[9].(ClusterDestroyed); d.Err != nil || d.Name != "s" {
		t.Errorf("destroyed %+v", d)
	}
	if names, _ := cluster.List(home); len(names) != 0 {
		t.Errorf("clusters left: %v", names)
	}
	if len(*reported) != 1 || (*reported)[0] != dir || filepath.Dir(dir) != results {
		t.Errorf("report of %v, study folder %s", *reported, dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, CommandsFile))
	wantCmds := fmt.Sprintf("agbench cluster create --name=s --standbys=0 --commit=async --base-port=%d --set=fsync=off\n"+
		"agbench stress '--query=SELECT 1' --threads=1 --iterations=5 --cluster=s --results=%s/01-stress\n"+
		"agbench tpcc run --vus=1 --duration=1s --cluster=s --results=%s/02-tpcc-run\n", base, dir, dir)
	if err != nil || string(b) != wantCmds {
		t.Errorf("commands %q %v\nwant %q", b, err, wantCmds)
	}
}

// A cluster that cannot be created stops the study before anything else runs: no
// experiment, no commands, nothing to destroy.
func TestStudyRunStopsWhenTheClusterIsNotCreated(t *testing.T) {
	t.Parallel()
	home, results := t.TempDir(), t.TempDir()
	s, reported := studyOf(t, `name: bad
results: `+results+`
target:
  cluster: {name: bad, standbys: 1, routing_list: "(('standby5'))"}
experiments:
  - {command: stress, flags: {query: SELECT 1}}
`, home)
	var log eventLog
	_, err := Run(context.Background(), s, Setup{Home: home, Events: log.add})
	if err == nil || err.Error() != "creating cluster bad failed (exit 2); nothing else ran" {
		t.Fatalf("error %v", err)
	}
	if got := log.names(); got != "StudyBegun ClusterCreating ClusterCreated" {
		t.Fatalf("events %s", got)
	}
	if c := log.events[2].(ClusterCreated); !agerr.IsBadInput(c.Err) || !strings.HasPrefix(c.Err.Error(), "--routing-list: ") {
		t.Errorf("created %+v", c)
	}
	if entries, _ := os.ReadDir(log.events[0].(StudyBegun).Dir); len(entries) != 0 || len(*reported) != 0 {
		t.Errorf("study folder holds %v; reported %v", entries, *reported)
	}
}

// destroyLeft destroys any cluster a failed test left in home.
func destroyLeft(t *testing.T, home string) {
	names, _ := cluster.List(home)
	for _, n := range names {
		if topo, unlock, err := cluster.OpenLocked(context.Background(), home, n); err == nil {
			if err := topo.Destroy(context.Background()); err != nil {
				t.Errorf("destroy %s: %v", n, err)
			}
			unlock()
		}
	}
}
