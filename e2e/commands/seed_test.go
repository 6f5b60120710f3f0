package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/seed"
)

func TestSeedCompareHistoryAndDrop(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	home := clustertest.Home(t)
	env := map[string]string{"AGBENCH_HOME": home}
	topo := clustertest.NewIn(t, home, clustertest.Options{Name: "lab"})
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, env, "seed", "--cluster", "lab", "--init-size", "40M", "--results", results,
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
	code, out, _ = e2etest.Run(t, env, "cluster", "status", "--name", "lab")
	if code != 0 || strings.Contains(out, "standby") {
		t.Errorf("standbys left after --compare:\n%s", out)
	}
	code, out, _ = e2etest.Run(t, env, "seed", "history", "--cluster", "lab")
	if code != 0 || strings.Count(out, "removed") != 4 {
		t.Errorf("history:\n%s", out)
	}
	// A plain seeding keeps its standby; drop removes it.
	code, out, errs = e2etest.Run(t, env, "seed", "--cluster", "lab", "--method", "backup-restore", "--compress", "zstd", "--name", "kept", "--results", results)
	if code != 0 || !strings.Contains(out, "seeded kept") {
		t.Fatalf("seed: exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("\n%s", out)
	code, _, errs = e2etest.Run(t, env, "seed", "--cluster", "lab", "--name", "kept")
	if code != 2 || !strings.Contains(errs, "already has a node") {
		t.Errorf("seeding a taken name: exit %d, %s", code, errs)
	}
	if code, _, errs = e2etest.Run(t, env, "seed", "drop", "--cluster", "lab", "--name", "kept"); code != 0 {
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
