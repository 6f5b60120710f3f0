package experiment

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/plan"
)

// A study's experiment becomes the spec its command makes from the same line: the plan's
// flags, its target and its results folder set through the kind's own flags.
func TestStudyMakesTheCommandsSpecs(t *testing.T) {
	p, err := plan.Parse("s.yaml", []byte(`name: s
target:
  cluster: {name: lab, standbys: 1}
experiments:
  - command: stress
    flags: {threads: [1, 2], duration: 5s, query: SELECT 1}
  - command: tpcc run
    flags: {vus: [1, 4], check: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(Catalog{}); err != nil {
		t.Fatal(err)
	}
	s := NewStudy(p, "dir")
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	st, ok := s.Runs[0].Spec.(*Stress)
	if !ok || st.Threads != "1,2" || st.Iterations != 0 || st.Target.Cluster != "lab" || st.Results != filepath.Join("dir", "01-stress") {
		t.Errorf("stress spec %+v", s.Runs[0].Spec)
	}
	if got := strings.Join(s.Runs[0].Args, " "); got != "stress --threads=1,2 --duration=5s --query=SELECT 1 --cluster=lab --results=dir/01-stress" {
		t.Errorf("stress line %q", got)
	}
	tr, ok := s.Runs[1].Spec.(*TPCCRun)
	if !ok || tr.VUs != "1,4" || !tr.Check || tr.Steps() != 2 {
		t.Errorf("tpcc run spec %+v", s.Runs[1].Spec)
	}
}

// Every problem of every experiment's spec is reported at once, each with the place of
// its experiment in the plan file; an experiment of an unknown kind or flag is left to
// plan.Check.
func TestStudyValidatePlacesEveryProblem(t *testing.T) {
	p, err := plan.Parse("s.yaml", []byte(`target:
  connect: {primary: host=127.0.0.1}
experiments:
  - command: scan
    flags: {cold: true, intent: sideways}
  - command: stress
    args: [extra]
    flags: {query: SELECT 1}
  - command: stress
    name: other
    flags: {threds: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = NewStudy(p, "dir").Validate()
	if agerr.ExitCode(err) != agerr.ExitBadInput {
		t.Fatalf("exit %d: %v", agerr.ExitCode(err), err)
	}
	want := `s.yaml:4:5: experiments[1] (scan): --intent "sideways": want read-only (readonly, ro) or read-write (readwrite, rw)
s.yaml:4:5: experiments[1] (scan): --cold restarts the servers: it needs --cluster
s.yaml:6:5: experiments[2] (stress): agbench stress takes no arguments, got "extra"`
	if err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

// A study prints and logs its commands without passwords, quoted so that they paste.
func TestStudyShowsCommandsWithoutPasswords(t *testing.T) {
	t.Parallel()
	got := ShownCommand([]string{"stress", "--primary=postgres://app:s3cret@127.0.0.1:5432/app", "--query=SELECT 1"})
	if want := "agbench stress --primary=postgres://app@127.0.0.1:5432/app '--query=SELECT 1'"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
