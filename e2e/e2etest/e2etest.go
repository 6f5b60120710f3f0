// Package e2etest runs the agbench binary as a user would, for the end-to-end test packages
// under e2e/: Main builds it once per test package, Run and Start execute it with arguments
// and environment and give back its output and exit status, and Shared gives a package's
// shared cluster (clustertest.Shared) with the environment that runs agbench on it. The end-to-end tests
// judge the command line's behaviour and the result files alone: this package never calls
// package main, whose internals may change shape under them. It must be imported by tests
// only.
//
// Imports from agbench: only internal/analyze, internal/cluster, internal/cluster/clustertest, internal/listener, internal/proc, internal/result, internal/workload/pgops, internal/workload/tpcc.
package e2etest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// The package's temporary folder, for the binary, made by Main.
var (
	tmp      string
	build    sync.Once
	bin      string
	buildErr error
)

// Parallel is how many tests of an end-to-end package run at once unless -test.parallel
// says: they mostly wait, on servers and on their measured windows, rather than use a CPU.
const Parallel = 4

// Main runs a test package's tests and then destroys the shared clusters they made, whether
// they passed or not (clustertest.Run), and removes the binary. A test package's TestMain
// calls it.
func Main(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(Parallel, runtime.GOMAXPROCS(0))))
	}
	var err error
	tmp, err = os.MkdirTemp("", "agbench-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2etest:", err)
		os.Exit(1)
	}
	code := clustertest.Run(m)
	os.RemoveAll(tmp)
	os.Exit(code)
}

// Bin returns the agbench binary, built from ./cmd/agbench on its first call in the test
// process (go build's cache makes it a link when nothing changed); a build that fails fails
// every test that asks.
func Bin(t testing.TB) string {
	t.Helper()
	if tmp == "" {
		t.Fatal("e2etest.Bin: the package's TestMain does not call e2etest.Main")
	}
	build.Do(func() {
		bin = filepath.Join(tmp, "agbench")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/agbench/agbench/cmd/agbench").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// Command is agbench with args, in the environment of the test process with env's keys set
// over it, its output not yet connected.
func Command(t testing.TB, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(Bin(t), args...)
	cmd.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k]) // a later entry wins over the inherited one
	}
	return cmd
}

// Run runs agbench to its end and returns its exit status, stdout and stderr. A binary
// that could not be started, or that died of a signal, fails the test.
func Run(t testing.TB, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	cmd := Command(t, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return exitCode(t, cmd.Run(), args, &errb), out.String(), errb.String()
}

// exitCode is the exit status that err (of a command's run) stands for.
func exitCode(t testing.TB, err error, args []string, stderr fmt.Stringer) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() < 0 {
		t.Fatalf("agbench %s: %v\nstderr %s", strings.Join(args, " "), err, stderr)
	}
	return ee.ExitCode()
}

// Buffer is a bytes.Buffer safe for a writer and a reader in different goroutines: the
// output of a command still running.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Proc is agbench running in the background.
type Proc struct {
	Stdout, Stderr *Buffer
	cmd            *exec.Cmd
	exited         chan struct{} // closed when the command has ended, err its Wait's error
	err            error
	args           []string
}

// Start starts agbench in the background; Stop (Ctrl-C) or Wait ends it, and a test that
// ends first interrupts it as Ctrl-C does (end).
func Start(t testing.TB, env map[string]string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Stdout: &Buffer{}, Stderr: &Buffer{}, exited: make(chan struct{}), args: args}
	p.cmd = Command(t, env, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.Stdout, p.Stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { p.end() })
	return p
}

// end ends a command the test left running as a user does, by Ctrl-C, so that agbench stops
// what it started (listeners, load, a cluster of a study); only one that ignores it for a
// minute is killed.
func (p *Proc) end() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
	}
}

// Signal sends sig to the running command.
func (p *Proc) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal agbench: %v", err)
	}
}

// Wait waits up to limit for the command to end and returns its exit status.
func (p *Proc) Wait(t testing.TB, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return exitCode(t, p.err, p.args, p.Stderr)
	case <-time.After(limit):
		p.end()
		t.Fatalf("agbench %s did not end within %v\nstdout %s\nstderr %s", strings.Join(p.args, " "), limit, p.Stdout, p.Stderr)
		return -1
	}
}

// Kill kills the command (SIGKILL), as a crash or kill -9 would, and waits until it has
// ended: it stops nothing it started.
func (p *Proc) Kill(t testing.TB) {
	t.Helper()
	p.Signal(t, syscall.SIGKILL)
	<-p.exited
}

// WaitOutput waits up to limit until the command has written what (on stdout or stderr),
// polling; it fails the test when the command ends first or the time runs out.
func (p *Proc) WaitOutput(t testing.TB, what string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(p.Stdout.String(), what) && !strings.Contains(p.Stderr.String(), what) {
		select {
		case <-p.exited:
			t.Fatalf("agbench %s ended before it wrote %q\nstdout %s\nstderr %s", strings.Join(p.args, " "), what, p.Stdout, p.Stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("agbench %s did not write %q within %v\nstdout %s\nstderr %s", strings.Join(p.args, " "), what, limit, p.Stdout, p.Stderr)
		}
	}
}

// Stop interrupts the command as Ctrl-C does and returns its exit status; it must end within
// a minute.
func (p *Proc) Stop(t testing.TB) int {
	t.Helper()
	p.Signal(t, syscall.SIGINT)
	return p.Wait(t, time.Minute)
}

// WantNothing fails the test when glob matches anything: what a refused command must not
// make.
func WantNothing(t *testing.T, glob string) {
	t.Helper()
	if m, _ := filepath.Glob(glob); len(m) != 0 {
		t.Fatalf("a refused command left %v", m)
	}
}

// ReadOneResult reads the one result under dir (a --results folder).
func ReadOneResult(t testing.TB, dir string) *result.Result {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", result.FileName))
	if len(files) != 1 {
		t.Fatalf("result files %v", files)
	}
	res, err := result.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// printedResult finds the path of the result a run printed ("result  PATH").
var printedResult = regexp.MustCompile(`result  (\S+)`)

// PrintedResult reads the result whose path a run printed on stdout, out.
func PrintedResult(t testing.TB, out string) *result.Result {
	t.Helper()
	m := printedResult.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no result path in output:\n%s", out)
	}
	r, err := result.Read(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// FiredVerdicts are the codes of the verdicts that fired in a result's stored analysis:
// each variant's validity verdicts and the comparison's.
func FiredVerdicts(t testing.TB, r *result.Result) []string {
	t.Helper()
	var out []string
	if len(r.Analysis) > 0 {
		var run analyze.Run
		if err := json.Unmarshal(r.Analysis, &run); err != nil {
			t.Fatalf("result analysis: %v", err)
		}
		for _, v := range run.Variants {
			for _, x := range analyze.Fired(v.Result.Verdicts) {
				out = append(out, x.Code)
			}
		}
		for _, x := range analyze.Fired(run.Comparisons) {
			out = append(out, x.Code)
		}
	}
	return out
}
