package main

// Golden test of everything a user sees of a recorded run, so that a refactor of the
// command layer can show that the same results still give the same tables,
// reports and comparisons.
//
// testdata/recorded/<name>.json.gz are real result.json files, one per measuring command,
// made by this package's binary on a local two-node cluster (PostgreSQL 15, loopback):
//
//	stress        stress --query "SELECT count(*) FROM customer" --threads 1,2 --iterations 0 --duration 1s --compare routing=off,on
//	stress-rerun  the same command again (a second run, for `compare A B` and a two-run report)
//	scan          scan --table customer --rows 1000 --iterations 0 --duration 1s --threads 1,2
//	tpcc-run      tpcc run --vus 1,2 --rampup 1s --duration 3s --compare routing=off,on (after tpcc build --warehouses 1)
//	disk          disk FILE --size 8M --sweep qd=1,2 --duration 1s --warmup 0s --random -b 8K
//	seed          seed (direct, no compression)
//	seed-compare  seed --compare method=direct,backup-restore --compare compress=none,lz4
//	readahead     readahead --rows 1000 --repeat 1 --device none
//
// testdata/recorded/<name>.stdout.txt is what each command printed on stdout when it made
// the result; TestRenderRecorded checks that renderCommandOutput reproduces it exactly.
// (tpcc build writes no result file, so it has none here.)
//
// testdata/golden/<name>.<kind>.txt are the renderings; rewrite them with
//
//	go test ./cmd/agbench -run TestRenderRecorded -update
//
// Kinds:
//
//	command      the command's own stdout after the run, rebuilt from the result (renderCommandOutput)
//	report       `agbench report` stdout (its text tables and summary)
//	report-html  the HTML page `agbench report -o` writes
//	report-csv   the CSV tables `agbench report --csv DIR` writes, each after a "== file ==" line
//	compare      `agbench compare RESULT` (the run's variants against each other), or its error
//
// and for several results at once: compare.stress-vs-rerun (`compare A B`),
// report-pair.stress (a report of the two stress runs side by side) and report-all (one
// report of every recorded result).
//
// Normalised before comparing (the only inputs a rendering takes beyond the results):
//   - the temporary folder the results are unpacked into reads $TMP;
//   - the HTML page's "generated <time>" (agbench report stamps it with time.Now) reads
//     "generated <TIME>";
//   - in the CSV tables, numbers with more than 12 significant digits are rounded to 12:
//     the CSV writes floats exactly, and "DB sessions" in the layers table is a sum over a
//     map (internal/report LayersTable), whose last bits change with map order.
//
// Everything else is a pure function of the recorded files, and the test fails if two
// renderings of one result differ (map order) or if the output depends on the time zone.
//
// renderCommandOutput recomputes the closing analysis with analyze.FromResult and the options
// the command passes to analyze.Attach (the stored analysis is what `agbench report` shows),
// and the result path of the last line with result.RunDir from the run's --results/--out
// and start time, so that the line follows the one place that names results folders rather
// than a copy of its rule.
//
// Not rendered, because a result.json does not hold what they need: the commands' stderr
// progress (live ticks, per-phase timings while seeding, readahead's per-run lines), the
// "made table" / "tpcc run: N warehouses" announcements on stderr, `tpcc run --check`
// (it queries the database) and `seed --init-size` (it measures the database as it grows).

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/result/diskrun"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/seed"
	"github.com/agbench/agbench/internal/workload/readahead"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt from the recorded results")

// recordedRuns are the names of testdata/recorded/<name>.json.gz, in the order a report of
// all of them lists them.
var recordedRuns = []string{"stress", "stress-rerun", "scan", "tpcc-run", "disk", "seed", "seed-compare", "readahead"}

// renderCommandOutput renders what the command that made res printed on stdout after its
// run, from the result alone, with the command's own printing functions. After a refactor
// of cmd/agbench, this is the one function to adapt.
func renderCommandOutput(t *testing.T, res *result.Result) string {
	t.Helper()
	var b strings.Builder
	// resultDir is where the command wrote the result: its --results (or --out) folder and
	// the run's folder name, both in the result's meta.
	resultDir := func(folderFlag, def string) string {
		base, ok := argOf(res.Meta.Args, folderFlag)
		if !ok {
			base = def
		}
		return result.RunDir(base, res.Meta.Started, res.Meta.Command)
	}
	switch res.Meta.Command {
	case "stress", "scan":
		// runStress / runScan: table, analysis (of every run that measured steps), footer.
		cols, unit := render.StressColumns, "it/s"
		if res.Meta.Command == "scan" {
			cols, unit = render.ScanColumns, "reads/s"
		}
		var an *analyze.Run
		if len(res.Steps) > 0 {
			an = fromResult(t, res, analyze.Options{LoadName: "threads", Unit: unit})
		}
		stale, _ := res.Meta.Config["stale_probe"].(string)
		render.Load(&b, res, an, filepath.Join(resultDir("--results", "results"), result.FileName), cols, stale)

	case "tpcc run":
		// runTPCC: the articles' table and each step, the analysis, the result's path.
		var cfg struct {
			Warehouses int    `json:"warehouses"`
			Mode       string `json:"mode"`
			Compare    string `json:"compare"`
		}
		remarshal(t, res.Meta.Config, &cfg)
		mode, err := tpcc.ParseMode(cfg.Mode)
		if err != nil {
			t.Fatal(err)
		}
		sw := runner.Sweep{Repeat: 1}
		if s, ok := argOf(res.Meta.Args, "--repeat"); ok {
			if sw.Repeat, err = strconv.Atoi(s); err != nil {
				t.Fatal(err)
			}
		}
		if cfg.Compare != "" {
			if sw.Compare, err = runner.ParseCompare(cfg.Compare); err != nil {
				t.Fatal(err)
			}
		}
		var slos []analyze.SLO
		if s, ok := argOf(res.Meta.Args, "--slo"); ok {
			if slos, err = analyze.ParseSLOs(s); err != nil {
				t.Fatal(err)
			}
		}
		render.TPCC(&b, render.TPCCSetup{Warehouses: cfg.Warehouses, Mode: string(mode), Variants: sw.Compare.Variants(), Repeat: sw.Repeat}, res.Steps)
		render.Analysis(&b, fromResult(t, res, analyze.Options{LoadName: "VUs", Unit: "tx/s", SLOs: slos}))
		fmt.Fprintf(&b, "result: %s\n", filepath.Join(resultDir("--results", "results"), result.FileName))

	case "disk":
		// runDisk: the report made again from the run's and the steps' disk sections, given
		// the analysis's findings (Little's law, marks) as runDisk gives them, then the
		// analysis.
		rep, err := diskrun.FromResult(res)
		if err != nil {
			t.Fatal(err)
		}
		var run *analyze.Run
		if len(rep.Steps) > 0 {
			run = fromResult(t, res, experiment.DiskAnalysis)
			experiment.DiskAnalysed(rep, run)
		}
		if len(rep.Steps) > 0 || rep.Verify != nil {
			render.Disk(&b, rep)
		}
		render.Analysis(&b, run)
		fmt.Fprintf(&b, "\nresults: %s\n", filepath.Join(resultDir("--results", "results"), result.FileName))

	case "seed":
		// runSeed: each seeding's report (its Report is the step's Extra["seed"]), or with
		// --compare the article's table over the variants, then the result's path.
		compares := argsOf(res.Meta.Args, "--compare")
		if len(compares) == 0 {
			for i, st := range res.Steps {
				var rep seed.Report
				if err := json.Unmarshal(st.Extra["seed"], &rep); err != nil {
					t.Fatalf("step %d Extra[seed]: %v", i, err)
				}
				render.Seeding(&b, &rep.Seeding)
			}
		} else {
			var cfg struct {
				Method   string `json:"method"`
				Compress string `json:"compress"`
			}
			remarshal(t, res.Meta.Config, &cfg)
			comp, err := seed.ParseCompression(cfg.Compress)
			if err != nil {
				t.Fatal(err)
			}
			variants, err := seed.ParseCompare(compares, seed.Variant{Method: cfg.Method, Compress: comp})
			if err != nil {
				t.Fatal(err)
			}
			render.SeedCompare(&b, res, seed.Labels(variants))
		}
		fmt.Fprintf(&b, "\nresult: %s\n", filepath.Join(resultDir("--results", "results"), result.FileName))

	case "readahead":
		// runReadahead: the STATISTICS IO table from Extra["readahead"], the run's warnings,
		// the result's folder.
		var ex readahead.RunExtra
		if err := json.Unmarshal(res.Extra[readahead.ExtraKey], &ex); err != nil {
			t.Fatalf("Extra[%s]: %v", readahead.ExtraKey, err)
		}
		render.Readahead(&b, ex.Conditions, ex.Table, res.Warnings)
		fmt.Fprintf(&b, "\nresult: %s\n", resultDir("--out", "results"))

	default:
		t.Fatalf("renderCommandOutput: no rendering for command %q", res.Meta.Command)
	}
	return b.String()
}

// argOf returns the last value of a flag in a command line ("--f v" or "--f=v").
func argOf(args []string, name string) (string, bool) {
	vs := argsOf(args, name)
	if len(vs) == 0 {
		return "", false
	}
	return vs[len(vs)-1], true
}

// argsOf returns every value of a repeatable flag in a command line.
func argsOf(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if v, ok := strings.CutPrefix(args[i], name+"="); ok {
			out = append(out, v)
		} else if args[i] == name && i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
	}
	return out
}

// remarshal copies a decoded JSON value into a typed one.
func remarshal(t *testing.T, from any, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatal(err)
	}
}

// unpackRecorded writes every recorded result as dir/<name>/result.json and returns dir.
func unpackRecorded(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range recordedRuns {
		f, err := os.Open(filepath.Join("testdata", "recorded", name+".json.gz"))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, result.FileName), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var generatedAt = regexp.MustCompile(`generated \d{4}-\d\d-\d\d \d\d:\d\d UTC`)

// longFloat is a number written with Go's shortest exact form and 13 or more significant
// digits, as the CSV tables write them.
var longFloat = regexp.MustCompile(`-?\d+\.\d{6,}`)

// roundFloats writes every long number with 12 significant digits. The CSV tables print
// floats exactly, and the layers table's "DB sessions" is a sum over a map of wait events
// (internal/report LayersTable), so its last bits follow map order from run to run.
func roundFloats(s string) string {
	return longFloat.ReplaceAllStringFunc(s, func(x string) string {
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return x
		}
		return strconv.FormatFloat(f, 'g', 12, 64)
	})
}

// normaliser replaces what depends on the test's machine and time (see the file comment).
func normaliser(tmp string) func(string) string {
	dirs := []string{tmp}
	if real, err := filepath.EvalSymlinks(tmp); err == nil && real != tmp {
		dirs = append(dirs, real)
	}
	return func(s string) string {
		for _, d := range dirs {
			s = strings.ReplaceAll(s, d, "$TMP")
		}
		return generatedAt.ReplaceAllString(s, "generated <TIME>")
	}
}

// cliOutput runs agbench in-process and renders what a user sees: stdout, then stderr and
// the exit status when there is anything to say.
func cliOutput(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := runCLI(t, nil, args...)
	if errs != "" {
		out += "--- stderr\n" + errs
	}
	if code != 0 {
		out += fmt.Sprintf("--- exit status %d\n", code)
	}
	return out
}

// reportOutputs runs `agbench report ARGS -o out/NAME.html --csv out/NAME-csv` and returns
// the text, the HTML page and the CSV tables.
func reportOutputs(t *testing.T, name string, args ...string) (text, page, csv string) {
	t.Helper()
	html := filepath.Join("out", name+".html")
	csvDir := filepath.Join("out", name+"-csv")
	if err := os.MkdirAll("out", 0o755); err != nil {
		t.Fatal(err)
	}
	text = cliOutput(t, append(append([]string{"report"}, args...), "-o", html, "--csv", csvDir)...)
	if b, err := os.ReadFile(html); err == nil {
		page = string(b)
	} else {
		page = "no page: " + err.Error() + "\n"
	}
	ents, _ := os.ReadDir(csvDir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		c, err := os.ReadFile(filepath.Join(csvDir, n))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "== %s ==\n%s", n, c)
	}
	return text, page, b.String()
}

// renderAll renders every golden kind of every recorded result, keyed by golden name.
func renderAll(t *testing.T, tmp string) map[string]string {
	t.Helper()
	norm := normaliser(tmp)
	out := map[string]string{}
	for _, name := range recordedRuns {
		res, err := result.Read(filepath.Join(name, result.FileName))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name+".command"] = renderCommandOutput(t, res)
		text, page, csv := reportOutputs(t, name, name)
		out[name+".report"], out[name+".report-html"], out[name+".report-csv"] = text, page, roundFloats(csv)
		out[name+".compare"] = cliOutput(t, "compare", filepath.Join(name, result.FileName))
	}
	out["compare.stress-vs-rerun"] = cliOutput(t, "compare", filepath.Join("stress", result.FileName), filepath.Join("stress-rerun", result.FileName))
	text, page, csv := reportOutputs(t, "pair", "stress", "stress-rerun")
	out["report-pair.stress.report"], out["report-pair.stress.report-html"], out["report-pair.stress.report-csv"] = text, page, roundFloats(csv)
	text, page, csv = reportOutputs(t, "all", recordedRuns...)
	out["report-all.report"], out["report-all.report-html"], out["report-all.report-csv"] = text, page, roundFloats(csv)
	for k, v := range out {
		out[k] = norm(v)
	}
	return out
}

func TestRenderRecorded(t *testing.T) {
	tmp := unpackRecorded(t)
	t.Chdir(tmp)
	got := renderAll(t, tmp)

	// Deterministic: a second rendering in another time zone gives the same bytes.
	local := time.Local
	t.Cleanup(func() { time.Local = local })
	time.Local = time.FixedZone("golden-test", 9*3600+30*60)
	if err := os.RemoveAll("out"); err != nil {
		t.Fatal(err)
	}
	again := renderAll(t, tmp)
	time.Local = local
	for k, v := range got {
		if again[k] != v {
			t.Errorf("%s: two renderings differ (map order, time zone or time): %s", k, firstDiff(v, again[k]))
		}
	}

	goldenDir := filepath.Join(testSourceDir(t), "testdata", "golden")
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
		for _, p := range old {
			os.Remove(p)
		}
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := filepath.Join(goldenDir, k+".txt")
		if *update {
			if err := os.WriteFile(p, []byte(got[k]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v (write the goldens with -update)", k, err)
			continue
		}
		if string(want) != got[k] {
			t.Errorf("%s differs from testdata/golden/%s.txt: %s", k, k, firstDiff(string(want), got[k]))
		}
	}
	if !*update {
		files, _ := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
		for _, f := range files {
			if _, ok := got[strings.TrimSuffix(filepath.Base(f), ".txt")]; !ok {
				t.Errorf("testdata/golden/%s: nothing renders it any more", filepath.Base(f))
			}
		}
	}

	// The command golden is what the command really printed when it made the result.
	for _, name := range recordedRuns {
		want, err := os.ReadFile(filepath.Join(testSourceDir(t), "testdata", "recorded", name+".stdout.txt"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if g := got[name+".command"]; g != string(want) {
			t.Errorf("%s: renderCommandOutput differs from the command's recorded stdout: %s", name, firstDiff(string(want), g))
		}
	}

	// A result read and written again holds the same JSON as the recorded file (compared as
	// values: Meta.Config is a map, so typed config written by a command comes back with
	// its keys sorted).
	for _, name := range recordedRuns {
		p := filepath.Join(name, result.FileName)
		res, err := result.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := os.ReadFile(p)
		dir := filepath.Join("rewritten", name)
		wp, err := result.Write(dir, res)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := os.ReadFile(wp)
		if a, b := canonicalJSON(t, orig), canonicalJSON(t, again); a != b {
			t.Errorf("%s: result.Read then result.Write changes the file: %s", name, firstDiff(a, b))
		}
	}
}

// canonicalJSON re-encodes JSON with sorted keys.
func canonicalJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// testSourceDir is this package's folder (the test changes into a temporary folder).
var sourceDir, _ = os.Getwd()

func testSourceDir(t *testing.T) string {
	t.Helper()
	if sourceDir == "" {
		t.Fatal("no working directory at start")
	}
	return sourceDir
}

// firstDiff names the first line where want and got differ.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g || i >= len(wl) || i >= len(gl) {
			return fmt.Sprintf("line %d\n  want %q\n  got  %q\n(rewrite with: go test ./cmd/agbench -run TestRenderRecorded -update, after checking the change is intended)", i+1, w, g)
		}
	}
	return "same lines"
}

// fromResult is analyze.FromResult for a result that must be readable.
func fromResult(t *testing.T, res *result.Result, o analyze.Options) *analyze.Run {
	t.Helper()
	run, err := analyze.FromResult(res, o)
	if err != nil {
		t.Fatalf("analyse %s: %v", res.Meta.Command, err)
	}
	return run
}
