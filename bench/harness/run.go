package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/agbench/agbench/internal/freeport"
	"github.com/agbench/agbench/internal/result"
)

// Run runs a comparator (or agbench) to its end with env (nil: this process's), and returns
// its combined output and the CPU time (user + system) it used. A failure carries the output.
func Run(ctx context.Context, env []string, name string, args ...string) ([]byte, time.Duration, error) {
	c := exec.CommandContext(ctx, name, args...)
	c.Env = env
	out, err := c.CombinedOutput()
	if err != nil {
		return out, 0, fmt.Errorf("%s: %v\n%s", filepath.Base(name), err, out)
	}
	return out, c.ProcessState.UserTime() + c.ProcessState.SystemTime(), nil
}

// ReadResult reads the one result of a command that agbench wrote under dir (given as its
// --results): the folder dir/*-<command>/result.json.
func ReadResult(dir, command string) (*result.Result, error) {
	m, _ := filepath.Glob(filepath.Join(dir, "*-"+command, "result.json"))
	if len(m) != 1 {
		return nil, fmt.Errorf("%d results of %s under %s, want 1", len(m), command, dir)
	}
	return result.Read(m[0])
}

// FreePorts returns the first of n consecutive free loopback ports, reserved for this
// process until it ends.
func FreePorts(n int) (int, error) {
	return freeport.Consecutive(n)
}

// WorkDir makes a folder for a benchmark's files that the server's user may enter (tests
// and benchmarks run as root, and the servers as postgres).
func WorkDir(name string) (string, error) {
	d, err := os.MkdirTemp("", "agbench-bench-"+name+"-")
	if err != nil {
		return "", err
	}
	return d, os.Chmod(d, 0o755)
}
