// Package hostmetricstest starts, for tests, the real components host figures come from:
// Debian's node_exporter and Prometheus server, in the foreground on free loopback ports,
// each stopped by the test that started it (or killed or frozen mid-run by it).
//
// Imports from agbench: only internal/freeport.
package hostmetricstest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/freeport"
)

// The Debian packages' binaries.
const (
	ExporterBin   = "/usr/bin/prometheus-node-exporter"
	PrometheusBin = "/usr/bin/prometheus"
)

// ExporterCollectors are the node_exporter collectors host figures read: the others are
// switched off, so that a scrape costs what agbench's own needs cost.
var ExporterCollectors = []string{"cpu", "stat", "meminfo", "diskstats", "netdev", "pressure", "time", "uname"}

// startWait bounds how long a started component may take to answer.
const startWait = 30 * time.Second

// Process is a component a test started.
type Process struct {
	// URL is where it answers: the exporter's /metrics, the server's base URL.
	URL string
	// Addr is its HOST:PORT (a Prometheus target's instance label).
	Addr string
	// config is a Prometheus server's configuration file (Rescrape rewrites it), every
	// how often it scrapes.
	config string
	every  time.Duration
	cmd    *exec.Cmd
	once   sync.Once
	done   chan struct{}
}

// Require skips the test when bin is not installed.
func Require(t testing.TB, bin string) {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s is not installed (apt-get install prometheus-node-exporter prometheus, or scripts/install-deps.sh)", bin)
	}
}

// StartExporter starts a node_exporter on a free loopback port with the collectors host
// figures read (and the flags extra, such as a collector's filter), waits until it
// answers, and stops it at the test's end.
func StartExporter(t testing.TB, extra ...string) *Process {
	t.Helper()
	Require(t, ExporterBin)
	port, err := freeport.Consecutive(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"--web.listen-address=" + addr, "--collector.disable-defaults"}
	for _, c := range ExporterCollectors {
		args = append(args, "--collector."+c)
	}
	args = append(args, extra...)
	p := start(t, ExporterBin, args, t.TempDir())
	p.Addr, p.URL = addr, "http://"+addr+"/metrics"
	p.waitAnswers(t, p.URL)
	return p
}

func start(t testing.TB, bin string, args []string, dir string) *Process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	log, err := os.Create(filepath.Join(dir, filepath.Base(bin)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	t.Cleanup(p.Stop)
	return p
}

// waitAnswers waits until url answers 200, or fails the test with the process's log.
func (p *Process) waitAnswers(t testing.TB, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startWait)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before answering: %s", p.cmd.Path, p.log())
		case <-ctx.Done():
			t.Fatalf("%s did not answer %s within %s: %s", p.cmd.Path, url, startWait, p.log())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (p *Process) log() string {
	if f, ok := p.cmd.Stdout.(*os.File); ok {
		b, _ := os.ReadFile(f.Name())
		return strings.TrimSpace(string(b))
	}
	return ""
}

// Stop kills the process and waits until it is gone; stopping twice is nothing.
func (p *Process) Stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
}

// Freeze stops the process (SIGSTOP) without ending it, as a hung server is: it keeps its
// port, the kernel still accepts connections on it, and nothing answers them. The test's
// end lets it go on before it is stopped.
func (p *Process) Freeze(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("freezing %s: %v", p.cmd.Path, err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Signal(syscall.SIGCONT) })
}
