package k8s

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/agbench/agbench/internal/agerr"
)

func manifest(t *testing.T, p Plan, o JobOptions) []byte {
	t.Helper()
	cm, job, err := Objects(p, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, cm, job); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// decodeStrict decodes every document of a YAML stream with the API types' strict
// serializer: a field the types do not have is an error.
func decodeStrict(t *testing.T, y []byte) ([]runtime.Object, error) {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(y)))
	ser := Serializer(true)
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		obj, _, err := ser.Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
}

// TestJobDecodesStrictly checks that the manifest is a ConfigMap holding the plan and an
// Indexed batch/v1 Job of N completions run N at a time, each pod the segment of its
// completion index, as the API server's own types read it strictly.
func TestJobDecodesStrictly(t *testing.T) {
	t.Parallel()
	p := Plan{Command: []string{"stress", "--primary", "host=db port=5432", "--threads", "30", "--duration", "1m"}, Segments: 3, Run: "lab-1"}
	y := manifest(t, p, JobOptions{Name: "lab-1", Namespace: "bench", Image: "agbench:test", ResultsClaim: "agbench-results", Secret: "pg"})
	objs, err := decodeStrict(t, y)
	if err != nil || len(objs) != 2 {
		t.Fatalf("%d objects, %v\n%s", len(objs), err, y)
	}
	cm, ok := objs[0].(*corev1.ConfigMap)
	if !ok || cm.Name != "lab-1-plan" {
		t.Fatalf("first object %T %v", objs[0], objs[0])
	}
	back, err := ParsePlan([]byte(cm.Data[PlanKey]))
	if err != nil || strings.Join(back.Command, " ") != strings.Join(p.Command, " ") || back.Segments != 3 || back.Run != "lab-1" {
		t.Fatalf("plan in the ConfigMap %+v, %v", back, err)
	}
	job, ok := objs[1].(*batchv1.Job)
	if !ok || job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Fatalf("second object %T %+v", objs[1], objs[1])
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 3 || *s.Parallelism != 3 || *s.BackoffLimit != 0 {
		t.Fatalf("job spec %+v", s)
	}
	pod := s.Template.Spec
	c := pod.Containers[0]
	if got := strings.Join(c.Args, " "); got != "k8s segment /etc/agbench/plan.json --results /results/$(JOB_COMPLETION_INDEX)" {
		t.Fatalf("args %q", got)
	}
	if c.Env[0].Name != IndexEnv || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" ||
		c.EnvFrom[0].SecretRef.Name != "pg" || pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("container %+v", c)
	}
	if pod.Volumes[0].ConfigMap.Name != "lab-1-plan" || pod.Volumes[1].PersistentVolumeClaim.ClaimName != "agbench-results" {
		t.Fatalf("volumes %+v", pod.Volumes)
	}

	bad := bytes.Replace(y, []byte("completionMode: Indexed"), []byte("completionMode: Indexed\n  completionz: 3"), 1)
	if _, err := decodeStrict(t, bad); err == nil || !strings.Contains(err.Error(), "completionz") {
		t.Fatalf("an unknown field decoded strictly: %v", err)
	}
}

func TestPlanBadInput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"command":["stress"],"segments":3,"run":"r","extra":1}`:         `unknown field "extra"`,
		`{"command":[],"segments":3,"run":"r"}`:                           "no agbench command",
		`{"command":["stress","--segment","1/3"],"segments":3,"run":"r"}`: "--segment is each segment's",
		`{"command":["stress"],"segments":0,"run":"r"}`:                   "segments: segments 0",
		`{"command":["stress"],"segments":2,"run":""}`:                    "run: a name",
		`{"command":["stress"],"segments":2,"run":"r"} {}`:                "more after",
		`{"command":["stress","--results=x"],"segments":2,"run":"r"}`:     "--results is each segment's",
	} {
		_, err := ParsePlan([]byte(in))
		if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePlan(%s): %v, want bad input naming %q", in, err, want)
		}
	}
	p, err := ParsePlan([]byte(`{"command":["tpcc","run","--vus","6"],"segments":3,"run":"r"}`))
	if err != nil || strings.Join(p.Args("/results/2"), " ") != "tpcc run --vus 6 --segments 3 --segment-run r --results /results/2" {
		t.Fatalf("plan %+v args %q, %v", p, p.Args("/results/2"), err)
	}
}

// FuzzParsePlan checks that a plan file of any bytes is refused as bad input or read as a
// plan that writes back to itself.
func FuzzParsePlan(f *testing.F) {
	f.Add([]byte(`{"command":["stress","--threads","3"],"segments":3,"run":"r"}`))
	f.Add([]byte(`{"command":["stress"],"segments":10001,"run":"r"}`))
	f.Add([]byte(`{"command":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePlan(b)
		if err != nil {
			if !agerr.IsBadInput(err) {
				t.Fatalf("not bad input: %v", err)
			}
			return
		}
		out, err := p.Marshal()
		if err != nil {
			t.Fatalf("a plan read back does not write: %v", err)
		}
		again, err := ParsePlan(out)
		if err != nil || strings.Join(again.Command, "\x00") != strings.Join(p.Command, "\x00") || again.Segments != p.Segments || again.Run != p.Run {
			t.Fatalf("plan %+v wrote %s, read back %+v, %v", p, out, again, err)
		}
	})
}

// TestJobNeedsResultsClaim checks that no Job is made whose pods would write their results
// where nobody can read them once the pods are Completed.
func TestJobNeedsResultsClaim(t *testing.T) {
	t.Parallel()
	p := Plan{Command: []string{"stress", "--threads", "3"}, Segments: 3, Run: "lab-1"}
	if _, _, err := Objects(p, JobOptions{Name: "lab-1", Image: "agbench:test"}); !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "results claim") {
		t.Fatalf("a Job without a results claim: %v", err)
	}
}
