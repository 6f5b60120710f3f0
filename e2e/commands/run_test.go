package commands

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/report/reporttest"
)

// The quick example plans run end to end as CI runs them: a cluster made and removed, every
// experiment, one results folder, one report that draws in a real browser without a fetch.
func TestRunQuickPlans(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	if testing.Short() {
		t.Skip("runs the quick studies")
	}
	for _, name := range []string{"ror-quick", "storage-quick"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // two clusters on their own ports; the studies mostly wait on servers
			home := clustertest.Home(t)
			dir := t.TempDir()
			plan := quickPlan(t, name, dir)
			env := map[string]string{"AGBENCH_HOME": home}
			start := time.Now()
			code, out, errs := e2etest.Run(t, env, "run", plan)
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
	t.Parallel()
	clustertest.Require(t)
	home := clustertest.Home(t)
	dir := t.TempDir()
	base, err := clustertest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
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
	p := e2etest.Start(t, map[string]string{"AGBENCH_HOME": home}, "run", plan)
	// Interrupt the first experiment once it measures: its first line of progress.
	p.WaitOutput(t, "[1/2] stress: agbench stress", 3*time.Minute-time.Since(start))
	p.WaitOutput(t, "measuring", 3*time.Minute-time.Since(start))
	code := p.Stop(t)
	out, errb := p.Stdout, p.Stderr
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
