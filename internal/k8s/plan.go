package k8s

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/segment"
)

// PlanKey is the plan's key in the ConfigMap, and its file's name in the pod.
const PlanKey = "plan.json"

// maxPlanBytes bounds a plan file: a command line, not a data set.
const maxPlanBytes = 1 << 20

// Plan is what every segment of the Job runs: agbench's command line (its words and flags,
// without --segment and --results, which each pod is given), the number of segments and
// the name of the run they share (their barrier's key).
type Plan struct {
	Command  []string `json:"command"`
	Segments int      `json:"segments"`
	Run      string   `json:"run"`
}

// Marshal is the plan as the ConfigMap holds it.
func (p Plan) Marshal() ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	return append(b, '\n'), err
}

// Args is the command line a segment runs: the plan's command as segment of Segments of
// the run Run, writing into results.
func (p Plan) Args(results string) []string {
	out := append([]string(nil), p.Command...)
	return append(out, "--segments", fmt.Sprint(p.Segments), "--segment-run", p.Run, "--results", results)
}

// ParsePlan reads a plan file (a pod's ConfigMap key): strict JSON of Plan's fields only;
// anything else is bad input naming what is wrong.
func ParsePlan(b []byte) (Plan, error) {
	var p Plan
	if len(b) > maxPlanBytes {
		return p, agerr.BadInputf("plan: %d bytes, more than %d", len(b), maxPlanBytes)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return Plan{}, agerr.BadInputf("plan: %v", err)
	}
	if d.More() {
		return Plan{}, agerr.BadInputf("plan: more after the plan's object")
	}
	if err := p.check(); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// check says what is wrong with a plan, every problem at once.
func (p Plan) check() error {
	var errs []error
	if len(p.Command) == 0 || strings.HasPrefix(p.Command[0], "-") {
		errs = append(errs, agerr.BadInputf("plan: command: no agbench command (stress, scan, tpcc run …)"))
	}
	for _, a := range p.Command {
		switch name, _, _ := strings.Cut(a, "="); name {
		case "--segment", "--segments", "--segment-run", "--results":
			errs = append(errs, agerr.BadInputf("plan: command: %s is each segment's, set by the Job", name))
		}
	}
	if _, err := segment.New(0, p.Segments); err != nil {
		errs = append(errs, agerr.BadInputf("plan: segments: %v", err))
	}
	if p.Run == "" || strings.ContainsAny(p.Run, "\x00\n") {
		errs = append(errs, agerr.BadInputf("plan: run: a name on one line is needed"))
	}
	return agerr.Join(errs...)
}
