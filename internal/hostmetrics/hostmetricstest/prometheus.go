package hostmetricstest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/agbench/agbench/internal/freeport"
)

// StartPrometheus starts a Prometheus server on a free loopback port that scrapes each
// of targets (HOST:PORT of node_exporters) every second, its storage in a temporary
// folder; it waits until the server has node_cpu_seconds_total of every target, and stops
// it at the test's end. Each target's series carry instance="HOST:PORT".
func StartPrometheus(t testing.TB, targets ...string) *Process {
	return StartPrometheusEvery(t, time.Second, targets...)
}

// StartPrometheusEvery is StartPrometheus with the server scraping every interval (Prometheus
// scrapes every minute by default): it waits for two scrapes of each target, up to two
// intervals and more after its start.
func StartPrometheusEvery(t testing.TB, every time.Duration, targets ...string) *Process {
	t.Helper()
	Require(t, PrometheusBin)
	port, err := freeport.Consecutive(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	writeConfig(t, config, every, targets)
	p := start(t, PrometheusBin, []string{"--config.file=" + config,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr}, dir)
	p.Addr, p.URL, p.config, p.every = addr, "http://"+addr, config, every
	p.waitAnswers(t, p.URL+"/-/ready")
	for _, a := range targets {
		p.waitSeries(t, a)
	}
	return p
}

// writeConfig writes the server's configuration: targets scraped every every.
func writeConfig(t testing.TB, path string, every time.Duration, targets []string) {
	t.Helper()
	quoted := make([]string, len(targets))
	for i, a := range targets {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: %s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: [%s]\n",
		fmt.Sprintf("%ds", int(every.Seconds())), strings.Join(quoted, ", "))
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Rescrape makes the server scrape these targets from now on (none: it scrapes nothing),
// as an operator's edit of its configuration does: it reloads it (SIGHUP) and waits until
// its targets are those.
func (p *Process) Rescrape(t testing.TB, targets ...string) {
	t.Helper()
	writeConfig(t, p.config, p.every, targets)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	c, err := api.NewClient(api.Config{Address: p.URL})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(targets))
	ctx, cancel := context.WithTimeout(context.Background(), startWait)
	defer cancel()
	for {
		res, err := v1.NewAPI(c).Targets(ctx)
		var got []string
		for _, a := range res.Active {
			got = append(got, string(a.Labels["instance"]))
		}
		if slices.Sort(got); err == nil && slices.Equal(got, want) {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("prometheus exited: %s", p.log())
		case <-ctx.Done():
			t.Fatalf("prometheus scrapes %v, not %v, %s after its reload: %s", got, want, startWait, p.log())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitSeries waits until the server has scraped node_cpu_seconds_total of target twice
// (a rate needs two scrapes).
func (p *Process) waitSeries(t testing.TB, target string) {
	t.Helper()
	c, err := api.NewClient(api.Config{Address: p.URL})
	if err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf(`count_over_time(node_cpu_seconds_total{instance=%q,cpu="0",mode="idle"}[%ds])`, target, int(3*p.every.Seconds())+60)
	wait := startWait + 2*p.every // the first scrape comes up to an interval after the start
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for {
		v, _, err := v1.NewAPI(c).Query(ctx, q, time.Time{})
		if vec, ok := v.(model.Vector); err == nil && ok && len(vec) == 1 && vec[0].Value >= 2 {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("prometheus exited: %s", p.log())
		case <-ctx.Done():
			t.Fatalf("prometheus did not scrape %s twice within %s: %s", target, wait, p.log())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
