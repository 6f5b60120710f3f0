package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/seed"
)

func TestSeedBadInputExits2(t *testing.T) {
	env := map[string]string{"AGBENCH_HOME": t.TempDir()}
	cases := [][]string{
		{"seed", "--compress", "brotli"},
		{"seed", "--compress", "zstd:99"},
		{"seed", "--method", "copy"},
		{"seed", "--max-rate", "fast"},
		{"seed", "--max-rate", "1k"},
		{"seed", "--sync", "--async"},
		{"seed", "--init-size", "1x"},
		{"seed", "--init-only"},
		{"seed", "--compare", "speed=1,2"},
		{"seed", "--compare", "method=direct", "compress=none,rar"},
		{"seed", "--repeat", "3"},
		{"seed", "stray"},
		{"seed", "--cluster", "nope"},
		{"seed", "history", "--cluster", "nope"},
		{"seed", "drop", "--cluster", "nope", "--name", "x"},
	}
	for _, args := range cases {
		code, _, errs := runCLI(t, env, args...)
		if code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errs)
		}
	}
	// Every problem at once.
	_, _, errs := runCLI(t, env, "seed", "--compress", "brotli", "--method", "copy", "--max-rate", "fast")
	for _, flag := range []string{"--compress", "--method", "--max-rate"} {
		if !strings.Contains(errs, flag) {
			t.Errorf("combined bad input does not name %s: %q", flag, errs)
		}
	}
}

func TestSeedCompareHistoryAndDrop(t *testing.T) {
	clustertest.Require(t)
	home := clustertest.Home(t)
	env := map[string]string{"AGBENCH_HOME": home}
	topo := clustertest.NewIn(t, home, clustertest.Options{Name: "lab"})
	results := t.TempDir()
	code, out, errs := runCLI(t, env, "seed", "--cluster", "lab", "--init-size", "40M", "--results", results,
		"--compare", "method=direct,backup-restore", "compress=none,lz4")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	t.Logf("\n%s", out)
	for _, want := range []string{"direct/none", "backup-restore/lz4", "transfer", "restore", "catch-up", "MB/s", "compression ratio", "random bytes"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	paths, _ := filepath.Glob(filepath.Join(results, "*-seed", "result.json"))
	if len(paths) != 1 {
		t.Fatalf("result files: %v", paths)
	}
	r, err := result.Read(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete || len(r.Steps) != 4 || r.Meta.Command != "seed" {
		t.Fatalf("result: complete %v, %d steps", r.Complete, len(r.Steps))
	}
	for _, st := range r.Steps {
		if st.Counters["streamed_bytes"] < 30<<20 || st.Counters["total_seconds"] <= 0 || st.Series["seed.done_bytes"].V == nil || st.Extra["seed"] == nil {
			t.Errorf("step %s: counters %v", st.Variant, st.Counters)
		}
		if strings.HasSuffix(st.Variant, "/lz4") && st.Counters["compression_ratio"] < 1.3 {
			t.Errorf("step %s: compression ratio %.2f", st.Variant, st.Counters["compression_ratio"])
		}
	}
	// Every compared standby was dropped again.
	code, out, _ = runCLI(t, env, "cluster", "status", "--name", "lab")
	if code != 0 || strings.Contains(out, "standby") {
		t.Errorf("standbys left after --compare:\n%s", out)
	}
	code, out, _ = runCLI(t, env, "seed", "history", "--cluster", "lab")
	if code != 0 || strings.Count(out, "removed") != 4 {
		t.Errorf("history:\n%s", out)
	}
	// A plain seeding keeps its standby; drop removes it.
	code, out, errs = runCLI(t, env, "seed", "--cluster", "lab", "--method", "backup-restore", "--compress", "zstd", "--name", "kept", "--results", results)
	if code != 0 || !strings.Contains(out, "seeded kept") {
		t.Fatalf("seed: exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("\n%s", out)
	code, _, errs = runCLI(t, env, "seed", "--cluster", "lab", "--name", "kept")
	if code != 2 || !strings.Contains(errs, "already has a node") {
		t.Errorf("seeding a taken name: exit %d, %s", code, errs)
	}
	if code, _, errs = runCLI(t, env, "seed", "drop", "--cluster", "lab", "--name", "kept"); code != 0 {
		t.Fatalf("drop: %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(topo.Dir, "nodes", "kept")); !os.IsNotExist(err) {
		t.Errorf("drop left the data folder: %v", err)
	}
	recs, err := seed.History(topo.Dir)
	if err != nil || len(recs) != 5 || recs[4].State != seed.StateRemoved {
		t.Errorf("history after drop: %+v, %v", recs, err)
	}
}
