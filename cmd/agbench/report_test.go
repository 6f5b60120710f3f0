package main

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/workload"
)

// sleepLoad is a workload whose operation waits: a server of fixed capacity shared by all
// VUs (n slots, each serving one op per serviceTime), so throughput rises with VUs up to the
// capacity, then flattens. The server keeps its own clock: an op starts when its VU's last op
// ended or its slot came free, whichever is later, and ends serviceTime after that, however
// late the goroutines wake. On a busy machine a wake-up can lag by tens of milliseconds, so
// an op timed by a sleep from when it ran would cost serviceTime plus that lag, and a side's
// throughput would be the machine's load at the moment, not the server's capacity. A VU
// that woke late catches up at once, as long as the machine lets it run: the service time
// is long enough (20 ms: 50 to 200 ops a second a side) that it does on a starved machine,
// where at 2 ms (1,500 a second) the runner's own work fell behind at a load of 55 and the
// three-server side's repeats ranged from 569 to 1,069 a second.
type sleepLoad struct{ slots chan *slot }

// slot is one of the server's places; free is when its last op ends on the server's clock.
type slot struct{ free time.Time }

const serviceTime = 20 * time.Millisecond

func newSleepLoad(capacity int) *sleepLoad {
	l := &sleepLoad{slots: make(chan *slot, capacity)}
	for range capacity {
		l.slots <- &slot{}
	}
	return l
}

// sleepWorker is one VU; done is when its last op ended on the server's clock.
type sleepWorker struct {
	l    *sleepLoad
	done time.Time
}

func (l *sleepLoad) NewWorker(context.Context, workload.VU) (workload.Worker, error) {
	return &sleepWorker{l: l, done: time.Now()}, nil
}

func (w *sleepWorker) Do(ctx context.Context, op *workload.Op) error {
	var s *slot
	select {
	case s = <-w.l.slots:
	case <-ctx.Done():
		return ctx.Err()
	}
	end := w.done
	if s.free.After(end) {
		end = s.free
	}
	end = end.Add(serviceTime)
	s.free, w.done = end, end
	time.Sleep(time.Until(end))
	w.l.slots <- s
	op.Name, op.Bytes = "query", 8192
	return nil
}

// measuredRun runs a real sweep of the sleep workload with the runner (threads × routing
// variants × repeats) and writes its result file under dir, as a command does.
func measuredRun(t *testing.T, dir string, threads []string, servers map[string]int, repeat int, step time.Duration) string {
	t.Helper()
	var values []string
	for _, v := range []string{"off", "on"} {
		if _, ok := servers[v]; ok {
			values = append(values, v)
		}
	}
	sweep := runner.Sweep{Axes: []runner.Axis{{Name: "threads", Values: threads}}, Compare: &runner.Axis{Name: "routing", Values: values}, Repeat: repeat, Seed: 1}
	loads := map[string]*sleepLoad{}
	for k, n := range servers {
		loads[k] = newSleepLoad(n)
	}
	res := result.New("stress", "test", []string{"stress", "--threads", strings.Join(threads, ","), "--compare", "routing=off,on"})
	var steps []result.Step
	for _, p := range sweep.Plan() {
		n, _ := strconv.Atoi(p.Params["threads"])
		st, err := runner.Run(context.Background(), runner.Config{
			Workload: loads[p.Params["routing"]], Plan: []runner.Point{p},
			Spec: func(runner.Point) runner.StepSpec { return runner.StepSpec{VUs: n, Duration: step} },
			Tick: 100 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, st...)
	}
	res.Steps = steps
	res.Finish(nil)
	out := result.RunDir(dir, res.Meta.Started, "stress")
	if _, err := result.Write(out, res); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	run := measuredRun(t, dir, []string{"1", "2", "4"}, map[string]int{"off": 1, "on": 2}, 1, 800*time.Millisecond)
	html := filepath.Join(dir, "report.html")
	csvDir := filepath.Join(dir, "csv")
	code, out, errs := runCLI(t, nil, "report", run, "-o", html, "--csv", csvDir)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	for _, want := range []string{"stress: throughput and latency per threads", "routing=off", "| routing=on", "report: " + html} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), `<svg class="chart throughput"`) {
		t.Fatalf("report not written: %v", err)
	}
	f, err := os.Open(filepath.Join(csvDir, "stress-main.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 4 || recs[0][0] != "threads" {
		t.Fatalf("csv %v %v", recs, err)
	}
	// A folder of runs is read whole.
	code, out, _ = runCLI(t, nil, "report", dir, "-o", html, "-q")
	if code != 0 || strings.Contains(out, "throughput and latency") {
		t.Fatalf("folder: code %d, out %s", code, out)
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	notResult := filepath.Join(dir, "x.json")
	_ = os.WriteFile(notResult, []byte(`{"hello": 1}`), 0o644)
	html := filepath.Join(dir, "r.html")
	code, _, errs := runCLI(t, nil, "report", filepath.Join(dir, "missing"), notResult, "-o", html)
	if code != 2 || !strings.Contains(errs, "missing: no such result file") || !strings.Contains(errs, "x.json") {
		t.Fatalf("code %d: %s", code, errs)
	}
	if _, err := os.Stat(html); !os.IsNotExist(err) {
		t.Fatal("a report was written from bad input")
	}
	code, _, errs = runCLI(t, nil, "report")
	if code != 2 || !strings.Contains(errs, "at least one result") {
		t.Fatalf("no args: code %d %s", code, errs)
	}
	code, _, errs = runCLI(t, nil, "report", dir, "-o", html)
	if code != 2 || !strings.Contains(errs, "no result.json") {
		t.Fatalf("empty folder: code %d %s", code, errs)
	}
	code, _, errs = runCLI(t, nil, "compare", "a", "b", "c")
	if code != 2 || !strings.Contains(errs, "got 3") {
		t.Fatalf("compare 3: code %d %s", code, errs)
	}
}

func TestCompareCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// routing=on has four times the capacity of off: at 4 threads (200 ops/s against 50) the
	// gap is far beyond the spread of four repeats (three apart would be no finding: one
	// time in ten by chance); at 1 thread both are limited by the service time. Each
	// repeat lasts 2 s: a repeat of on falls to off's level only if the machine stalls this
	// process for three quarters of it. Of 0.8 s repeats, a stall of 0.7 s (a CI run beside
	// another at load 25) took one to 20 ops/s, and the spreads overlapped.
	run := measuredRun(t, dir, []string{"1", "4"}, map[string]int{"off": 1, "on": 4}, 4, 2*time.Second)
	code, out, errs := runCLI(t, nil, "compare", run)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "B = routing=on vs A = routing=off") || !strings.Contains(out, "verdict") {
		t.Fatalf("compare output:\n%s", out)
	}
	var at4 string
	for _, l := range lines {
		if strings.HasPrefix(l, "4 ") {
			at4 = l
		}
	}
	if !strings.Contains(at4, "larger than spread") {
		t.Fatalf("4 threads not told apart:\n%s", out)
	}
	// Two runs, one repeat each of 0.8 s: too little data to compare, and said so.
	other := measuredRun(t, filepath.Join(dir, "b"), []string{"1", "4"}, map[string]int{"off": 1, "on": 4}, 1, 800*time.Millisecond)
	code, out, _ = runCLI(t, nil, "compare", run, other)
	if code != 0 || !strings.Contains(out, "A = "+run) || !strings.Contains(out, "too little data to compare") {
		t.Fatalf("A/B: code %d\n%s", code, out)
	}
}

// Through a listener stress cannot measure the servers' MB/s. A variant without it
// is '–' with the reason in compare and in the report's headline, never 0 or -100%.
func TestCompareWithAnAbsentFigure(t *testing.T) {
	dir := t.TempDir()
	run := measuredRun(t, dir, []string{"1", "2"}, map[string]int{"off": 1, "on": 2}, 1, 800*time.Millisecond)
	res, err := result.Read(filepath.Join(run, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Steps {
		if st := &res.Steps[i]; st.Params["routing"] == "off" {
			if st.Counters == nil {
				st.Counters = map[string]float64{}
			}
			st.Counters["nopm"] = 12.5
		}
	}
	if _, err := result.Write(run, res); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, nil, "compare", run)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	code, rep, errs := runCLI(t, nil, "report", run, "-o", filepath.Join(dir, "r.html"))
	if code != 0 {
		t.Fatalf("report: code %d: %s", code, errs)
	}
	t.Logf("compare:\n%s\nreport:\n%s", out, rep)
	for _, text := range []string{out, rep} {
		if strings.Contains(text, "-100") || !strings.Contains(text, "not measured in routing=on") {
			t.Errorf("an absent figure compared as 0:\n%s", text)
		}
	}
}
