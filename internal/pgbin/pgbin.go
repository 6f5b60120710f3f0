// Package pgbin owns finding PostgreSQL server binaries of any installed version and running
// them, as an unprivileged operating-system user when agbench itself runs as root (PostgreSQL
// refuses to run as root). It knows nothing of clusters, topologies or SQL.
//
// Imports from agbench: only internal/agerr.
package pgbin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agbench/agbench/internal/agerr"
)

// Install is one set of PostgreSQL server binaries.
type Install struct {
	BinDir  string `json:"bin_dir"`
	Version string `json:"version"` // as postgres --version prints it, e.g. "15.18"
	Major   int    `json:"major"`
}

// serverTools are the binaries a directory must hold to count as a server install.
var serverTools = []string{"postgres", "initdb", "pg_ctl", "pg_basebackup"}

// Path returns the full path of a tool in this install.
func (i *Install) Path(tool string) string { return filepath.Join(i.BinDir, tool) }

// Find locates PostgreSQL server binaries. An explicit directory (--pg-bin) is used as given;
// otherwise it tries, in order, the PATH, pg_config --bindir, and the newest of
// /usr/lib/postgresql/*/bin. A missing install is bad input with a hint on how to get one.
func Find(ctx context.Context, explicit string) (*Install, error) {
	if explicit != "" {
		if err := hasServerTools(explicit); err != nil {
			return nil, agerr.BadInputf("--pg-bin %s: %v", explicit, err)
		}
		return probe(ctx, explicit)
	}
	var tried []string
	for _, dir := range candidates(ctx) {
		tried = append(tried, dir)
		if hasServerTools(dir) == nil {
			return probe(ctx, dir)
		}
	}
	return nil, agerr.BadInputf("no PostgreSQL server binaries found (looked on PATH, pg_config --bindir, /usr/lib/postgresql/*/bin: %s); "+
		"install them (apt-get install postgresql) or pass --pg-bin DIR", strings.Join(tried, ", "))
}

func candidates(ctx context.Context) []string {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	if out, err := exec.CommandContext(ctx, "pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(matches, func(a, b int) bool { return versionOfDir(matches[a]) > versionOfDir(matches[b]) })
	return append(dirs, matches...)
}

func versionOfDir(dir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
	return v
}

func hasServerTools(dir string) error {
	for _, t := range serverTools {
		st, err := os.Stat(filepath.Join(dir, t))
		if err != nil {
			return fmt.Errorf("no %s there", t)
		}
		if st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is not executable", t)
		}
	}
	return nil
}

var versionRE = regexp.MustCompile(`\(PostgreSQL\) (\d+)(?:\.(\d+))?`)

func probe(ctx context.Context, dir string) (*Install, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "postgres"), "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", filepath.Join(dir, "postgres"), err)
	}
	v, major, err := ParseVersion(string(out))
	if err != nil {
		return nil, err
	}
	return &Install{BinDir: dir, Version: v, Major: major}, nil
}

// ParseVersion reads "postgres (PostgreSQL) 15.18 (Debian ...)" into "15.18" and 15.
func ParseVersion(s string) (string, int, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return "", 0, fmt.Errorf("cannot read a PostgreSQL version from %q", strings.TrimSpace(s))
	}
	major, _ := strconv.Atoi(m[1])
	v := m[1]
	if m[2] != "" {
		v += "." + m[2]
	}
	return v, major, nil
}

// Run runs a tool of this install as user u and returns its combined output in the error
// when it fails.
func (i *Install) Run(ctx context.Context, u *OSUser, tool string, args ...string) (string, error) {
	cmd := u.Command(ctx, i.Path(tool), args...)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	out := buf.String()
	if err != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		return out, &ToolError{Tool: tool, Args: args, Output: strings.TrimSpace(out), Err: err}
	}
	return out, nil
}

// ToolError is a PostgreSQL tool that exited with an error; Output is what it printed.
type ToolError struct {
	Tool   string
	Args   []string
	Output string
	Err    error
}

func (e *ToolError) Error() string {
	out := e.Output
	if len(out) > 2000 {
		out = "…" + out[len(out)-2000:]
	}
	return fmt.Sprintf("%s failed (%v): %s", e.Tool, e.Err, out)
}

func (e *ToolError) Unwrap() error { return e.Err }
