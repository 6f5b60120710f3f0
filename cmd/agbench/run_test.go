package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every shipped plan is checked against the real commands and flags.
func TestRunCheckShippedPlans(t *testing.T) {
	plans, _ := filepath.Glob("../../plans/*.yaml")
	if len(plans) < 4 {
		t.Fatalf("plans: %v", plans)
	}
	for _, p := range plans {
		code, out, errs := runCLI(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "run", "--check", p)
		if code != 0 || !strings.Contains(out, "is valid") {
			t.Errorf("%s: code %d\n%s%s", p, code, out, errs)
		}
	}
}

// A plan with problems of every layer (shape, command, flag, value) is refused whole, each
// problem with its line and column, before anything is made.
func TestRunBadPlan(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	plan := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(plan, []byte(`name: bad
results: `+filepath.Join(dir, "results")+`
target:
  cluster: {name: bad, standbys: 1}
experiments:
  - command: stres
  - command: stress
    flags:
      threads: [1, 2]
      iteratons: 10
      repeat: often
  - command: tpcc
`), 0o644)
	code, out, errs := runCLI(t, map[string]string{"AGBENCH_HOME": home}, "run", plan)
	if code != 2 {
		t.Fatalf("code %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		plan + `:6:5: experiments[1]: "stres" is not an agbench command that runs`,
		plan + `:10:18: experiments[2] (stress): stress has no flag --iteratons`,
		plan + `:11:15: experiments[2] (stress): --repeat "often": strconv.ParseInt`,
		plan + `:12:5: experiments[3]: "tpcc" is not an agbench command that runs`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	for _, p := range []string{home, filepath.Join(dir, "results")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was made from a bad plan", p)
		}
	}
	code, _, errs = runCLI(t, nil, "run", filepath.Join(dir, "none.yaml"))
	if code != 2 || !strings.Contains(errs, "no such plan file") {
		t.Fatalf("missing plan: %d %s", code, errs)
	}
	_ = os.WriteFile(plan, []byte("target: {cluster: {standbys: 12}}\nexperiments:\n  - {command: stress, flags: {threads: {a: 1}}}\n"), 0o644)
	code, _, errs = runCLI(t, nil, "run", "--check", plan)
	if code != 2 || !strings.Contains(errs, plan+":1:30: target.cluster.standbys 12") || !strings.Contains(errs, plan+":3:40: experiments[1].flags.threads") {
		t.Fatalf("shape errors: %d %s", code, errs)
	}
}

// A plan is refused whole by `run --check` when one of its experiments would be refused
// later against the plan's target: each experiment's command checks its own command line
// (without connecting), and a command that cannot run on this kind of target is named.
func TestRunCheckChecksEachExperimentAgainstItsTarget(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.yaml")
	body := `name: bad
target:
  connect:
    primary: host=127.0.0.1 port=1
experiments:
  - name: cold
    command: scan
    flags: {cold: true, rows: 10}
  - name: ra
    command: readahead
    flags: {rows: 1000}
  - name: sd
    command: seed
  - name: st
    command: stress
    flags: {query: SELECT 1, intent: sideways}
`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, map[string]string{"AGBENCH_HOME": dir}, "run", "--check", file)
	if code != 2 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{
		"bad.yaml:6:5: experiments[1] (cold): --cold restarts the servers: it needs --cluster",
		"bad.yaml:9:5: experiments[2] (ra): readahead runs on an agbench cluster only",
		"bad.yaml:12:5: experiments[3] (sd): seed runs on an agbench cluster only",
		`bad.yaml:14:5: experiments[4] (st): --intent "sideways"`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "is not an agbench command") {
		t.Errorf("seed called no command:\n%s", errs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("check made files: %v", entries)
	}
}
