package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/report/reporttest"
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

// The quick example plans run end to end as CI runs them: a cluster made and removed, every
// experiment, one results folder, one report that draws in a real browser without a fetch.
func TestRunQuickPlans(t *testing.T) {
	clustertest.Require(t)
	if testing.Short() {
		t.Skip("runs the quick studies")
	}
	bin := filepath.Join(t.TempDir(), "agbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, name := range []string{"ror-quick", "storage-quick"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // two clusters on their own ports; the studies mostly wait on servers
			home := clustertest.Home(t)
			dir := t.TempDir()
			plan := quickPlan(t, name, dir)
			env := map[string]string{"AGBENCH_HOME": home, "AGBENCH_SELF": bin}
			start := time.Now()
			code, out, errs := runCLI(t, env, "run", plan)
			t.Logf("%s took %s", name, time.Since(start).Round(time.Second))
			if code != 0 {
				t.Fatalf("code %d\n%s\n%s", code, out, errs)
			}
			if names, _ := cluster.List(home); len(names) != 0 {
				t.Errorf("clusters left behind: %v", names)
			}
			m := regexp.MustCompile(`report: (\S+report\.html)`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no report path in output:\n%s", out)
			}
			page, err := os.ReadFile(m[1])
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`<svg class="chart throughput"`, `<table class="data"`, "agbench tpcc run --", "Environment and exact commands"} {
				if !strings.Contains(string(page), want) {
					t.Errorf("report lacks %q", want)
				}
			}
			checkInBrowser(t, m[1], name)
		})
	}
}

// quickPlan copies plans/NAME.yaml with free ports and the results under dir.
func quickPlan(t *testing.T, name, dir string) string {
	t.Helper()
	b, err := os.ReadFile("../../plans/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	base, err := clustertest.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	text = regexp.MustCompile(`base_port: \d+`).ReplaceAllString(text, "base_port: "+strconv.Itoa(base))
	if strings.Contains(text, "listener: 127.0.0.1:") {
		lp, err := clustertest.FreePorts(3)
		if err != nil {
			t.Fatal(err)
		}
		text = regexp.MustCompile(`listener: 127\.0\.0\.1:\d+`).ReplaceAllString(text, "listener: 127.0.0.1:"+strconv.Itoa(lp))
	}
	text = strings.Replace(text, "    settings:\n", "    settings:\n      fsync: \"off\"\n", 1)
	text += "results: " + filepath.Join(dir, "results") + "\n"
	p := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkInBrowser(t *testing.T, file, name string) {
	t.Helper()
	chromium := reporttest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := reporttest.Render(ctx, chromium, file, []string{"svg.chart", "svg.chart path.line", "table.data"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Requests) > 0 || len(got.Problems) > 0 {
		t.Errorf("requests %v, problems %v", got.Requests, got.Problems)
	}
	if got.Counts["svg.chart"] == 0 || got.Drawn != got.Counts["svg.chart"] {
		t.Errorf("%d charts, %d drawn", got.Counts["svg.chart"], got.Drawn)
	}
	dir := os.Getenv("AGBENCH_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	shot := filepath.Join(dir, name+"-report.png")
	if err := os.WriteFile(shot, got.Screenshot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
}

// Ctrl-C in the middle of an experiment stops it, keeps what it measured, still writes the
// report, and removes the cluster the study made.
func TestRunInterruptedRemovesCluster(t *testing.T) {
	clustertest.Require(t)
	home := clustertest.Home(t)
	dir := t.TempDir()
	base, err := clustertest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "p.yaml")
	_ = os.WriteFile(plan, []byte(`name: cut
results: `+filepath.Join(dir, "results")+`
target:
  cluster: {name: cut, standbys: 0, base_port: `+strconv.Itoa(base)+`, settings: {fsync: "off"}}
experiments:
  - command: stress
    flags: {query: SELECT 1, threads: 2, iterations: 0, duration: 10m}
  - command: stress
    name: never
    flags: {query: SELECT 2}
`), 0o644)
	var out, errb lockedBuffer
	a := &app{stdout: &out, stderr: &errb, getenv: func(k string) string {
		if k == "AGBENCH_HOME" {
			return home
		}
		return os.Getenv(k)
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Interrupt a few seconds into the first experiment.
		for ctx.Err() == nil {
			if strings.Contains(out.String(), "[1/2] stress: agbench stress") {
				time.Sleep(4 * time.Second)
				cancel()
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	done := make(chan int, 1)
	go func() { done <- run(ctx, a, []string{"run", plan}) }()
	var code int
	select {
	case code = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the study did not stop")
	}
	if code == 0 {
		t.Fatalf("an interrupted study exited 0\n%s", out.String())
	}
	if names, _ := cluster.List(home); len(names) != 0 {
		t.Fatalf("cluster left behind after Ctrl-C: %v\n%s", names, out.String())
	}
	if strings.Contains(out.String(), "never") && strings.Contains(out.String(), "[2/2]") {
		t.Fatalf("the next experiment ran after Ctrl-C:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "report: ") {
		t.Fatalf("no report of what ran:\n%s\n%s", out.String(), errb.String())
	}
}

// lockedBuffer is a buffer written by the study and read by the test at the same time.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
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

// A study prints and logs its commands without passwords, quoted so that they paste.
func TestStudyShowsCommandsWithoutPasswords(t *testing.T) {
	got := shownCommand([]string{"stress", "--primary=postgres://app:s3cret@127.0.0.1:5432/app", "--query=SELECT 1"})
	if want := "agbench stress --primary=postgres://app@127.0.0.1:5432/app '--query=SELECT 1'"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
