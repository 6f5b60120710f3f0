package importcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pending are packages whose doc comment gains its sentence on another branch; until then
// their missing sentence is logged, not failed. A pending package that states its rule
// fails the test, so that it leaves this list.
var pending = map[string]string{}

// designRule is one of DESIGN.md's rules across packages, checked on everything a package
// depends on, directly or not. bad tells a forbidden dependency: a path of the module
// (relative, inModule) or a full path outside it.
type designRule struct {
	pkg  string // a package of the module, or a pattern ending in "/..."
	says string // DESIGN.md's (or STYLE.md's) words
	bad  func(dep string, inModule bool) bool
}

var designRules = []designRule{
	{"internal/workload/...", "workloads never import the runner, the cluster or the report (nor the listener or target: a workload is given its connection strings)",
		func(d string, in bool) bool {
			return in && (Under(d, "internal/runner") || Under(d, "internal/cluster") || Under(d, "internal/report") ||
				Under(d, "internal/listener") || Under(d, "internal/target"))
		}},
	{"internal/runner", "the runner never knows SQL",
		func(d string, in bool) bool {
			return !in && Under(d, "github.com/jackc/pgx/v5") || in && strings.HasPrefix(d, "internal/workload/")
		}},
	{"internal/report", "the report reads only result files",
		func(d string, in bool) bool {
			return in && !slices.Contains([]string{"internal/result", "internal/result/diskrun", "internal/analyze", "internal/atomicfile", "internal/agerr",
				"internal/render", "internal/table", "internal/stats", "internal/units", "internal/proc", "internal/routing", // proc: through result's host; routing: analyze's reading of a routing list
				"internal/status"}, d) // status: through render, which prints live state too
		}},
	{"internal/render", "the renderer reads results, the analysis's findings and the records of live state, never an engine (runner, workloads, cluster, listener, diskio, seed, drill, sample), nor the report that reads it",
		func(d string, in bool) bool {
			return in && !slices.Contains([]string{"internal/result", "internal/result/diskrun", "internal/analyze", "internal/atomicfile", "internal/agerr",
				"internal/table", "internal/stats", "internal/units", "internal/proc", "internal/routing", // proc: through result's host; routing: analyze's reading of a routing list
				"internal/status"}, d)
		}},
	{"internal/result/diskrun", "a result's disk sections are the schema only: they import the result and its units, never the tester that writes them",
		func(d string, in bool) bool {
			return in && !slices.Contains([]string{"internal/result", "internal/agerr", "internal/atomicfile", "internal/proc", "internal/status", "internal/units"}, d)
		}},
	{"internal/status", "the records of live state are a leaf: types only, so that the renderer reaches no engine through them",
		func(d string, in bool) bool { return in }},
	{"internal/routing", "routing is pure logic, no network",
		func(d string, in bool) bool { return in || Under(d, "net") || Under(d, "github.com/jackc/pgx/v5") }},
	{"internal/result", "result imports nothing from agbench but agerr, atomicfile, proc (the kernel's files, for the machine a run records) and status (types only: a drill records Patroni's timing as live state declares it)",
		func(d string, in bool) bool {
			return in && d != "internal/agerr" && d != "internal/atomicfile" && d != "internal/proc" && d != "internal/status"
		}},
	{"internal/hostmetrics", "other hosts' figures are read over HTTP and named as the result names them; the reader knows no window, sampler, cluster, experiment, analysis or report",
		func(d string, in bool) bool {
			return in && d != "internal/agerr" && d != "internal/result" && d != "internal/proc" && d != "internal/atomicfile" && d != "internal/status" // proc, atomicfile, status: through result
		}},
	{"bench/...", "a benchmark is a program, not a test: it imports no package meant for tests (a name ending in \"test\", nor importcheck)",
		func(d string, in bool) bool {
			return in && (strings.HasSuffix(d, "test") || d == "internal/importcheck") || d == "testing"
		}},
}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env GOMOD: %v %s", err, out)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// TestModuleLayering checks every package of the module against the rule its doc comment
// states, and DESIGN.md's rules across packages.
func TestModuleLayering(t *testing.T) {
	pkgs, err := Load(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	stated := map[string]bool{}
	for _, p := range pkgs {
		_, err := ParseRule(p.Doc)
		stated[p.Path] = err == nil
	}
	for _, v := range Check(pkgs) {
		if why, ok := pending[v.Package]; ok && v.NoRule {
			t.Logf("%s: pending: %s", v.Package, why)
			continue
		}
		t.Error(v)
	}
	for p := range pending {
		if stated[p] {
			t.Errorf("%s states its rule now: remove it from pending", p)
		}
	}
	for _, v := range CheckDesign(pkgs, designRules) {
		t.Error(v)
	}
}

// TestOneKernelFilesPackage: internal/proc is the one reader of the kernel's files, so it
// alone imports the library that parses them (others depend on it only through libraries,
// as Prometheus's client does for its process metrics).
func TestOneKernelFilesPackage(t *testing.T) {
	pkgs, err := Load(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	importers := 0
	for _, p := range pkgs {
		for _, imp := range p.OtherImports {
			if Under(imp, "github.com/prometheus/procfs") {
				importers++
				if p.Path != "internal/proc" {
					t.Errorf("%s imports %s: the kernel's files are read through internal/proc", p.Path, imp)
				}
			}
		}
	}
	if importers == 0 {
		t.Error("no package imports github.com/prometheus/procfs: a renamed internal/proc must keep this check")
	}
}

// CheckDesign returns a line for every dependency that one of rules forbids, and for every
// rule that matches no package (a renamed package must not switch its rule off).
func CheckDesign(pkgs []Package, rules []designRule) []string {
	var out []string
	for _, r := range rules {
		matched := false
		for _, p := range pkgs {
			if !(Rule{Only: []string{r.pkg}}).Allows(p.Path) {
				continue
			}
			matched = true
			for _, d := range p.Deps {
				if r.bad(d, true) {
					out = append(out, p.Path+" depends on "+d+": DESIGN.md says "+r.says)
				}
			}
			for _, d := range p.OtherDeps {
				if r.bad(d, false) {
					out = append(out, p.Path+" depends on "+d+": DESIGN.md says "+r.says)
				}
			}
		}
		if !matched {
			out = append(out, "no package is "+r.pkg+": DESIGN.md's rule that "+r.says+" checks nothing")
		}
	}
	return out
}

func TestParseRule(t *testing.T) {
	for doc, want := range map[string]Rule{
		"Package x owns y.\n\nImports from agbench: none.\n":                                {None: true},
		"Package x.\nImports from agbench: only internal/result.":                           {Only: []string{"internal/result"}},
		"Imports from agbench: only internal/agerr, internal/result, internal/stats.":       {Only: []string{"internal/agerr", "internal/result", "internal/stats"}},
		"Imports from agbench: only internal/...":                                           {Only: []string{"internal/..."}},
		"Imports from agbench: only internal/....":                                          {Only: []string{"internal/..."}},
		"Imports from agbench: only internal/agerr,\ninternal/result.\nNext sentence.":      {Only: []string{"internal/agerr", "internal/result"}},
		"Imports from agbench: only internal/agerr\n\nNext paragraph.":                      {Only: []string{"internal/agerr"}},
		"Example:\n\tImports from agbench: only internal/x.\n\nImports from agbench: none.": {None: true},
	} {
		got, err := ParseRule(doc)
		if err != nil || got.None != want.None || !slices.Equal(got.Only, want.Only) {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v", doc, got, err, want)
		}
	}
	for doc, want := range map[string]string{
		"Package x owns y.": "states no layering rule",
		"It imports nothing from agbench.\nIt must not import the runner.":    "states no layering rule",
		"Imports from agbench: none.\nImports from agbench: only internal/x.": "2 layering rules",
		"Imports from agbench: internal/x.":                                   "want",
		"Imports from agbench: only internal/x,, internal/y.":                 "not a package path",
		"Imports from agbench: only the result package.":                      "not a package path",
		"Imports from agbench: only /internal/x.":                             "not a package path",
	} {
		if _, err := ParseRule(doc); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRule(%q) = %v; want an error with %q", doc, err, want)
		}
	}
	r := Rule{Only: []string{"internal/workload/...", "internal/result"}}
	for path, want := range map[string]bool{"internal/workload": true, "internal/workload/tpcc": true, "internal/workloads": false,
		"internal/result": true, "internal/result/x": false, "internal/runner": false} {
		if r.Allows(path) != want {
			t.Errorf("Allows(%q) = %v", path, !want)
		}
	}
}

// TestCheckFailsOnViolations is the checker's self-test: over a made-up module it names
// the package and the forbidden import, a package without a rule, and a rule that allows
// no package that exists.
func TestCheckFailsOnViolations(t *testing.T) {
	pkgs := []Package{
		{Path: "internal/result", Doc: "Package result.\n\nImports from agbench: only internal/agerr.", Imports: []string{"internal/agerr"}},
		{Path: "internal/agerr", Doc: "Imports from agbench: none."},
		{Path: "internal/workload/tpcc", Doc: "Imports from agbench: only internal/result.",
			Imports: []string{"internal/result", "internal/runner"}},
		{Path: "internal/runner", Doc: "Package runner runs things. It must not import workloads.", Imports: []string{"internal/result"}},
		{Path: "cmd/tool", Doc: "Imports from agbench: only internal/..., internal/gone.", Imports: []string{"internal/runner", "cmd/other"}},
		{Path: "cmd/other", Doc: "Imports from agbench: none."},
	}
	var got []string
	for _, v := range Check(pkgs) {
		got = append(got, v.Error())
	}
	want := []string{
		"internal/workload/tpcc: imports internal/runner, which its doc comment does not allow (Imports from agbench: only internal/result)",
		"internal/runner: its doc comment states no layering rule",
		"cmd/tool: its rule allows internal/gone, which is no package of the module",
		"cmd/tool: imports cmd/other, which its doc comment does not allow",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("violation %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	if v := Check(pkgs); v[0].Import != "internal/runner" || v[0].Package != "internal/workload/tpcc" || !v[1].NoRule {
		t.Errorf("violations carry the package and import: %+v", v[:2])
	}
	// DESIGN.md's rules catch a dependency through another package, and a rule on no package.
	pkgs[2].Deps = []string{"internal/result", "internal/agerr", "internal/runner"}
	pkgs[3].OtherDeps = []string{"fmt", "github.com/jackc/pgx/v5/pgconn"}
	lines := CheckDesign(pkgs, designRules)
	for _, w := range []string{"internal/workload/tpcc depends on internal/runner", "internal/runner depends on github.com/jackc/pgx/v5/pgconn",
		"no package is internal/routing"} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w) }) {
			t.Errorf("CheckDesign misses %q:\n%s", w, strings.Join(lines, "\n"))
		}
	}
}

// TestLoadReadsAModule runs Load and Check end to end over a small module on disk whose
// one package imports what its doc comment forbids.
func TestLoadReadsAModule(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":          "module example.com/m\n\ngo 1.22\n",
		"low/low.go":      "// Package low is a leaf.\n//\n// Imports from agbench: none.\npackage low\n",
		"mid/doc.go":      "// Package mid sits in the middle.\n//\n// Imports from agbench: none.\npackage mid\n",
		"mid/mid.go":      "package mid\n\nimport _ \"example.com/m/low\"\n",
		"mid/mid_test.go": "package mid\n\nimport _ \"example.com/m/top\"\n",
		"top/top.go":      "// Package top is on top.\npackage top\n\nimport _ \"example.com/m/mid\"\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pkgs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range Check(pkgs) {
		got = append(got, v.Error())
	}
	want := []string{
		"mid: imports low, which its doc comment does not allow (Imports from agbench: none)",
		`top: its doc comment states no layering rule (a line "Imports from agbench: only internal/x, internal/y.")`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if top := pkgs[2]; top.Path != "top" || !slices.Equal(top.Deps, []string{"low", "mid"}) {
		t.Errorf("top: %+v", top)
	}
}
