package commands

import (
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// Two studies of the same routing comparison, as `make demo` runs them, on two clusters of
// their own: "hl-listed", whose routing list (('standby1','primary')) spreads read intent
// over the standby and the primary on purpose, and "hl-default", with the default list.
// One report of both compares routing off and on within each study only: a card per study,
// naming it and its cluster, and no headline that sets one cluster's variant against the
// other's. The listed study's read intent on the primary (stress's sessions, tpcc's read
// transactions) is what its list asks for, so read-intent-on-primary does not fire there.
func TestReportOfTwoStudiesComparesWithinEach(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	home := clustertest.Home(t)
	env := map[string]string{"AGBENCH_HOME": home}
	dir := t.TempDir()
	var folders []string
	for _, s := range []struct {
		name, list string
		tpcc       bool
	}{{"hl-listed", `"(('standby1','primary'))"`, true}, {"hl-default", "", false}} {
		code, out, errs := e2etest.Run(t, env, "run", studyPlan(t, dir, s.name, s.list, s.tpcc))
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", s.name, code, out, errs)
		}
		m := regexp.MustCompile(`(?m)^== results: (\S+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: no results folder in the output:\n%s", s.name, out)
		}
		folders = append(folders, m[1])
	}

	stress, tpcc := studyResult(t, folders[0], "01-stress"), studyResult(t, folders[0], "03-tpcc")
	if !landedOnPrimary(stress, "routing=on") {
		t.Fatalf("hl-listed: no routing=on session landed on the primary; the case is not made: %+v", stress.Steps)
	}
	if !readOnPrimary(tpcc, "routing=on") {
		t.Fatalf("hl-listed: no routing=on read transaction ran on the primary; the case is not made")
	}
	for _, r := range []*result.Result{stress, tpcc} {
		if codes := e2etest.FiredVerdicts(t, r); slices.Contains(codes, analyze.VReadIntent) {
			t.Errorf("hl-listed %s: %s fired although its routing list asks for the primary: %v", r.Meta.Command, analyze.VReadIntent, codes)
		}
	}

	page := filepath.Join(dir, "both.html")
	code, out, errs := e2etest.Run(t, env, append(append([]string{"report"}, folders...), "-o", page)...)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	titles, headlines := summaryCards(string(b))
	t.Logf("cards:\n%s", strings.Join(cardLines(titles, headlines), "\n"))
	for _, study := range []struct{ name, cluster string }{{"hl-listed", "cluster hllisted"}, {"hl-default", "cluster hldefault"}} {
		if !slices.ContainsFunc(titles, func(s string) bool { return strings.Contains(s, study.name) && strings.Contains(s, study.cluster) }) {
			t.Errorf("no card names study %s and its %s: %q", study.name, study.cluster, titles)
		}
	}
	for _, h := range append(headlines, headlineLines(out)...) {
		if strings.Contains(h, "hl-listed") && strings.Contains(h, "hl-default") {
			t.Errorf("a headline compares across the two studies' clusters: %q", h)
		}
	}
	if len(headlines) != 3 { // stress of each study, tpcc of the listed one
		t.Errorf("%d cards, want one per study and experiment: %q", len(headlines), headlines)
	}
}

// studyPlan writes a study of a stress routing comparison (and with tpcc, a tpcc one) on a
// cluster of its own (named the study's name without its dash), with routing list list (""
// for the default).
func studyPlan(t *testing.T, dir, name, list string, tpcc bool) string {
	t.Helper()
	base, err := clustertest.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	routing := ""
	if list != "" {
		routing = "\n    routing_list: " + list
	}
	text := `name: ` + name + `
results: ` + filepath.Join(dir, "results") + `
target:
  cluster:
    name: ` + strings.ReplaceAll(name, "-", "") + `
    standbys: 1
    base_port: ` + strconv.Itoa(base) + routing + `
    settings: {fsync: "off"}
experiments:
  - name: stress
    command: stress
    flags: {query: SELECT 1, threads: [1, 2], iterations: 0, duration: 2s, compare: "routing=off,on"}
`
	if tpcc {
		text += `  - {name: tpcc-build, command: tpcc build, flags: {warehouses: 1}}
  - {name: tpcc, command: tpcc run, flags: {vus: [2], duration: 2s, rampup: 0s, compare: "routing=off,on"}}
`
	}
	p := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// studyResult reads the result of a study's experiment (its folder's name, "01-stress").
func studyResult(t *testing.T, folder, experiment string) *result.Result {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(folder, experiment, "*", result.FileName))
	if len(files) != 1 {
		t.Fatalf("%s: want one result, found %v", folder, files)
	}
	r, err := result.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readOnPrimary reports whether the variant ran a read-intent transaction on a primary.
func readOnPrimary(r *result.Result, variant string) bool {
	for _, st := range r.Steps {
		if st.Variant == variant && st.Counters[result.ReadTxOnPrimary] > 0 {
			return true
		}
	}
	return false
}

// landedOnPrimary reports whether a session of the variant found itself on a primary.
func landedOnPrimary(r *result.Result, variant string) bool {
	for _, st := range r.Steps {
		for _, s := range st.Sessions {
			if st.Variant == variant && !s.InRecovery && s.Count > 0 {
				return true
			}
		}
	}
	return false
}

var (
	cardTitleRE    = regexp.MustCompile(`<div class="sum-head"><span class="cmd">([^<]*)</span>`)
	cardHeadlineRE = regexp.MustCompile(`<div class="headline">([^<]*)</div>`)
)

// summaryCards are the titles and headlines of the report's summary cards, as a reader sees
// them.
func summaryCards(page string) (titles, headlines []string) {
	for _, m := range cardTitleRE.FindAllStringSubmatch(page, -1) {
		titles = append(titles, html.UnescapeString(m[1]))
	}
	for _, m := range cardHeadlineRE.FindAllStringSubmatch(page, -1) {
		headlines = append(headlines, html.UnescapeString(m[1]))
	}
	return titles, headlines
}

func cardLines(titles, headlines []string) []string {
	var out []string
	for i := range titles {
		h := ""
		if i < len(headlines) {
			h = headlines[i]
		}
		out = append(out, "  "+titles[i]+" | "+h)
	}
	return out
}

// headlineLines are the lines of `agbench report`'s terminal output that compare variants.
func headlineLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " vs ") {
			lines = append(lines, l)
		}
	}
	return lines
}
