package catalogue

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// The verdict catalogue: for every verdict, a run made to be invalid in that
// way and a control run that is not, both real runs of agbench's commands on real servers
// with short steps. Each verdict must fire on its invalid run, in result.json's analysis
// and on the terminal alike, and on none of the controls. Cases are registered by the
// catalogue_*_test.go files (addCase in an init function), one file per area.

// catalogueCase is one verdict with the two runs that try it.
type catalogueCase struct {
	// Verdict is the code expected to fire (analyze.V*, or a comparison's code).
	Verdict string
	// Name says how the invalid run was made ("stress --rate 2000 on a 1-thread query").
	Name string
	// Invalid and Control each make one run (or several into the same folder) and return
	// the stdout of the command that ran last and the results folder they wrote into.
	Invalid, Control func(t *testing.T, env *catEnv) (stdout, results string)
	// ControlFiredOK, when set, is asked when the verdict fired on the control: true, with
	// the facts measured independently during the control run, when firing was right
	// there (a host that was busy for real). The row then says so.
	ControlFiredOK func() (ok bool, why string)
	// Serial is set for a case that measures the machine's own load (other processes' CPU
	// or IO) or makes that load: it runs alone, before the cases that run in parallel.
	Serial bool
}

var catalogue []catalogueCase

// addCase registers a case of the catalogue.
func addCase(c catalogueCase) { catalogue = append(catalogue, c) }

// catEnv is what the catalogue's runs share: the package's shared cluster of a primary and a
// standby, which no case changes the shape of, and the agbench home it lives in (where the
// cases that need a cluster of their own make it).
type catEnv struct {
	Home string
	Env  map[string]string
	topo *cluster.Topology
}

// Cluster returns the catalogue's shared cluster.
func (e *catEnv) Cluster(t *testing.T) *cluster.Topology { return e.topo }

// Results returns a fresh results folder for one run.
func (e *catEnv) Results(t *testing.T) string { return filepath.Join(t.TempDir(), "results") }

// Run runs agbench with the catalogue's environment; a run that exits 2 (bad input) fails
// the test, other exit codes are part of what the case judges.
func (e *catEnv) Run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out, errs := e2etest.Run(t, e.Env, args...)
	if code == 2 {
		t.Fatalf("agbench %s: exit 2\nstdout %s\nstderr %s", strings.Join(args, " "), out, errs)
	}
	return code, out + errs
}

var terminalVerdictRE = regexp.MustCompile(`(?m)^\s+! ([a-z0-9-]+):`)

// firedVerdicts returns the verdict codes that fired in a run: from every result.json under
// results (each variant's validity verdicts and the comparison's), and from the terminal's
// "! code:" lines.
func firedVerdicts(t *testing.T, stdout, results string) (inResult, onTerminal []string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(results, "*", "result.json"))
	if len(files) == 0 {
		t.Fatalf("no result.json under %s; output:\n%s", results, stdout)
	}
	for _, f := range files {
		r, err := result.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		inResult = append(inResult, e2etest.FiredVerdicts(t, r)...)
	}
	for _, m := range terminalVerdictRE.FindAllStringSubmatch(stdout, -1) {
		onTerminal = append(onTerminal, m[1])
	}
	sort.Strings(inResult)
	sort.Strings(onTerminal)
	return slices.Compact(inResult), slices.Compact(onTerminal)
}

func TestVerdictCatalogue(t *testing.T) {
	clustertest.Require(t)
	if len(catalogue) == 0 {
		t.Fatal("the catalogue has no cases")
	}
	topo, envm := e2etest.Shared(t, clustertest.Options{Standbys: 1})
	env := &catEnv{Home: envm["AGBENCH_HOME"], Env: envm, topo: topo}
	rows := make([]string, len(catalogue))
	// The group returns once every case has ended: the serial cases run in its body, the
	// others after it, side by side.
	t.Run("case", func(t *testing.T) {
		for i, c := range catalogue {
			t.Run(c.Verdict, func(t *testing.T) {
				if !c.Serial {
					t.Parallel()
				}
				inv, ctl := "not run", "not run"
				defer func() {
					if t.Skipped() && ctl == "not run" {
						ctl = "skipped (the reason is in the test log)"
					}
					rows[i] = fmt.Sprintf("| %s | %s | %s | %s |", c.Verdict, c.Name, inv, ctl)
				}()
				tryCase(t, env, c, &inv, &ctl)
			})
		}
	})
	if path := os.Getenv("AGBENCH_CATALOGUE_TABLE"); path != "" {
		table := "| verdict | invalid run | fired on the invalid run | fired on the control |\n|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// tryCase makes the case's invalid run, then its control, and judges both; it sets the
// table's cells of each (whether the verdict fired) as far as it gets.
func tryCase(t *testing.T, env *catEnv, c catalogueCase, inv, ctl *string) {
	out, res := c.Invalid(t, env)
	inR, inT := firedVerdicts(t, out, res)
	*inv = fmt.Sprintf("%v", slices.Contains(inR, c.Verdict) && slices.Contains(inT, c.Verdict))
	if !slices.Contains(inR, c.Verdict) {
		t.Errorf("invalid run (%s): %s did not fire in result.json (fired %v)\n%s", c.Name, c.Verdict, inR, out)
	}
	if !slices.Contains(inT, c.Verdict) {
		t.Errorf("invalid run (%s): %s not printed on the terminal (printed %v)\n%s", c.Name, c.Verdict, inT, out)
	}
	out, res = c.Control(t, env)
	cR, cT := firedVerdicts(t, out, res)
	fired := slices.Contains(cR, c.Verdict) || slices.Contains(cT, c.Verdict)
	*ctl = fmt.Sprintf("%v", fired)
	if fired && c.ControlFiredOK != nil {
		if ok, why := c.ControlFiredOK(); ok {
			*ctl += " (right: " + why + ")"
			fired = false
		} else {
			t.Logf("control: %s", why)
		}
	}
	if fired {
		t.Errorf("control run: %s fired (result %v, terminal %v)\n%s", c.Verdict, cR, cT, out)
	}
}

// notInCatalogue are the verdict codes the catalogue cannot try here, with why.
var notInCatalogue = map[string]string{
	"steal":            "steal is CPU time the hypervisor gave elsewhere: nothing inside the VM can make it, so no run here can be made invalid that way (its rule is unit-tested in internal/analyze)",
	"sampler-verdicts": "a 'not judged' line naming what no sampler measured, never a verdict that fires",
}

// Every verdict code internal/analyze declares (its V… string constants) has a case in the
// catalogue, or a reason in notInCatalogue: a new verdict cannot go untried.
func TestCatalogueCoversEveryVerdict(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, filepath.Join("..", "..", "internal", "analyze"),
		func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if !regexp.MustCompile(`^V[A-Z]`).MatchString(n.Name) || i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							codes = append(codes, strings.Trim(lit.Value, `"`))
						}
					}
				}
			}
		}
	}
	if len(codes) < 10 {
		t.Fatalf("found only %d verdict codes in internal/analyze: %v", len(codes), codes)
	}
	for _, code := range codes {
		if _, ok := notInCatalogue[code]; ok {
			continue
		}
		if !slices.ContainsFunc(catalogue, func(c catalogueCase) bool { return c.Verdict == code }) {
			t.Errorf("verdict %q has no case in the catalogue (add one in a catalogue_*_test.go, or say in notInCatalogue why it cannot be tried)", code)
		}
	}
}

// reading is one reading of a watch and when it was taken.
type reading[T any] struct {
	v  T
	at time.Time
}

// watch calls read now and every 100 ms until the returned function is called, which reads
// once more and returns the readings (those read returned true for), in order. A control
// measures the host with it over the run's own window (spanning) rather than around the
// whole run, whose start-up and analysis are seconds the verdict did not judge.
func watch[T any](read func() (T, bool)) (stop func() []reading[T]) {
	var out []reading[T]
	take := func() {
		at := time.Now()
		if v, ok := read(); ok {
			out = append(out, reading[T]{v, at})
		}
	}
	take()
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				take()
			}
		}
	}()
	return func() []reading[T] {
		close(done)
		<-exited
		take()
		return out
	}
}

// spanning returns the last reading taken at or before from and the first at or after to:
// the window and at most a reading's interval either side; false when there are none such.
func spanning[T any](rs []reading[T], from, to time.Time) (before, after reading[T], ok bool) {
	a, b := -1, -1
	for i, r := range rs {
		if !r.at.After(from) {
			a = i
		}
		if b < 0 && !r.at.Before(to) {
			b = i
		}
	}
	if a < 0 || b < 0 {
		return before, after, false
	}
	return rs[a], rs[b], true
}
