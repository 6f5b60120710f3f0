package live

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/seed"
)

// Off a terminal, a seeding's display names each phase as it begins, then a line every
// lineEvery with the bytes, rate and time left; the database's growth before it is a line
// every initLineEvery and one at its end, and its size is said on stdout.
func TestSeedLines(t *testing.T) {
	var out, errs bytes.Buffer
	s := &Seed{Stdout: &out, Stderr: &errs}
	s.Event(experiment.SeedInit{Done: 1 << 20, Target: 64 << 20})
	s.Event(experiment.SeedInit{Done: 2 << 20, Target: 64 << 20}) // within initLineEvery: no line
	s.Event(experiment.SeedInit{Done: 64 << 20, Target: 64 << 20})
	s.Event(experiment.SeedInitDone{Database: "postgres", Size: 64 << 20, Took: 1500 * time.Millisecond})
	s.Event(experiment.SeedBegin{Run: seed.Run{Variant: seed.Variant{Method: seed.MethodDirect}}, Compare: true})
	p := seed.Progress{Elapsed: 2 * time.Second, Phase: seed.PhaseTransfer, Done: 10 << 20, Total: 40 << 20, Rate: 5e6, ETA: 6 * time.Second, Wait: "network"}
	s.Event(p)
	s.Event(p) // within lineEvery of the phase's line: no line
	s.last = time.Time{}
	s.Event(p)
	lag := int64(1 << 20)
	s.Event(seed.Progress{Elapsed: 9 * time.Second, Phase: seed.PhaseCatchUp, ServerPhase: "streaming", LagBytes: &lag})
	s.last = time.Time{}
	s.Event(seed.Progress{Elapsed: 9 * time.Second, Phase: seed.PhaseCatchUp, ServerPhase: "streaming", LagBytes: &lag})
	s.Event(experiment.SeedEnded{})
	want := []string{"init: database 1M of 64M", "init: database 64M of 64M", "seeding direct/none (repeat 1)",
		"     2.0s  " + seed.PhaseTransfer, "     2.0s  " + pad(seed.PhaseTransfer) + " 10M of 40M (25%)  5.0 MB/s  ETA 6s  waits on network",
		"     9.0s  " + seed.PhaseCatchUp, "     9.0s  " + pad(seed.PhaseCatchUp) + " streaming  replay lag 1M"}
	if got := strings.Split(strings.TrimSpace(errs.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr:\n%s\nwant:\n%s", errs.String(), strings.Join(want, "\n"))
	}
	if !strings.HasPrefix(out.String(), "database postgres is 64M (table "+seed.DataTable+": 28% random bytes, the rest repetitive text), made in 1.5s\n") {
		t.Errorf("stdout: %q", out.String())
	}
}

func pad(phase string) string { return phase + strings.Repeat(" ", max(0, 9-len(phase))) }
