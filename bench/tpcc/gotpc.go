package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agbench/agbench/bench/harness"
)

// go-tpc is built from its source, fetched from the Go module proxy with go's own client into
// a cache folder once; later runs reuse the binary. The proxy's checksum database does not
// list go-tpc v1.0.9, so its module zip is checked against the hash pinned here instead.
const (
	goTPCVersion = "v1.0.9"
	goTPCSum     = "h1:DeFrlVnNzC+SxiRIihNhD9fWHnHhMZWDSFNfUVq67Ys="
)

// buildGoTPC returns the path of the go-tpc binary, building it first where the cache
// ($AGBENCH_CACHE, else the user's cache folder's agbench/) does not hold it yet.
func buildGoTPC(ctx context.Context) (string, error) {
	cache, err := harness.CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "go-tpc-"+goTPCVersion)
	bin := filepath.Join(dir, "go-tpc")
	if st, err := os.Stat(bin); err == nil && st.Mode()&0o111 != 0 {
		return bin, nil
	}
	fmt.Fprintf(os.Stderr, "building go-tpc %s from its source (Go module proxy) into %s\n", goTPCVersion, dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	env := append(os.Environ(), "GOMODCACHE="+filepath.Join(dir, "mod"), "GOFLAGS=-mod=mod", "GOSUMDB=off")
	dl := exec.CommandContext(ctx, "go", "mod", "download", "-json", "github.com/pingcap/go-tpc@"+goTPCVersion)
	dl.Env, dl.Stderr = env, os.Stderr
	out, err := dl.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download go-tpc: %w", err)
	}
	var mod struct{ Sum, Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", fmt.Errorf("go mod download go-tpc: %w", err)
	}
	if mod.Sum != goTPCSum {
		return "", fmt.Errorf("go-tpc %s: module hash %s, want %s: not built", goTPCVersion, mod.Sum, goTPCSum)
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+".tmp", "./cmd/go-tpc")
	build.Dir, build.Env = mod.Dir, env
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build go-tpc: %v\n%s", err, out)
	}
	return bin, os.Rename(bin+".tmp", bin)
}
