// Package k8s owns the Kubernetes objects that run a measuring run as N segments on N load
// generators: an Indexed Job (batch/v1, completionMode Indexed, completions and parallelism
// N), whose pods each run one segment numbered by their completion index, and the ConfigMap
// holding the plan they run (plan.go). They are made from Kubernetes' own API types and
// written as YAML by apimachinery's serializer, so that what it writes is what the API
// server reads; it talks to no cluster.
//
// It must not import the runner, workloads, experiments or the command layer.
//
// Imports from agbench: only internal/agerr, internal/segment.
package k8s

import (
	"bytes"
	"fmt"
	"io"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/utils/ptr"

	"github.com/agbench/agbench/internal/agerr"
)

// Where a pod finds its plan and writes its results.
const (
	PlanDir     = "/etc/agbench"
	PlanFile    = PlanDir + "/" + PlanKey
	ResultsDir  = "/results"
	IndexEnv    = "JOB_COMPLETION_INDEX"
	indexAnnot  = "batch.kubernetes.io/job-completion-index"
	nameLabel   = "app.kubernetes.io/name"
	runLabel    = "agbench.io/run"
	planVolume  = "plan"
	resultsVolm = "results"
)

// JobOptions are what the Job is made of besides its plan.
type JobOptions struct {
	// Name names the Job and its ConfigMap (NAME-plan); Namespace is theirs ("": the
	// namespace kubectl applies them to).
	Name, Namespace string
	// Image is the container image with agbench as its entry on PATH.
	Image string
	// ResultsClaim is a PersistentVolumeClaim every pod mounts at ResultsDir (a volume many
	// nodes can write, ReadWriteMany). It is required: a pod is Completed when its segment
	// ends, and a Completed pod's own volumes cannot be copied out (kubectl cp needs a
	// running container).
	ResultsClaim string
	// Secret, when set, gives the pods its keys as their environment (PGPASSWORD, PGUSER …):
	// credentials stay out of the plan.
	Secret string
}

// Objects returns the ConfigMap holding the plan and the Indexed Job that runs it.
func Objects(p Plan, o JobOptions) (*corev1.ConfigMap, *batchv1.Job, error) {
	planJSON, err := p.Marshal()
	if err != nil {
		return nil, nil, err
	}
	if o.ResultsClaim == "" {
		return nil, nil, agerr.BadInputf("k8s: a results claim is needed: a Completed pod's own files cannot be copied out")
	}
	labels := map[string]string{nameLabel: "agbench", runLabel: p.Run}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-plan", Namespace: o.Namespace, Labels: labels},
		Data:       map[string]string{PlanKey: string(planJSON)},
	}
	n := int32(p.Segments)
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Completions:    &n,
			Parallelism:    &n,
			// A segment started again would find the others past the barrier: a failed
			// segment fails the run, and the merge says which.
			BackoffLimit: ptr.To(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       podSpec(cm.Name, o, labels),
			},
		},
	}
	return cm, job, nil
}

// podSpec is a segment's pod: agbench running the plan as the segment of its completion
// index, writing into ResultsDir/<index>, one pod per node where the scheduler can.
func podSpec(planCM string, o JobOptions, labels map[string]string) corev1.PodSpec {
	c := corev1.Container{
		Name:    "agbench",
		Image:   o.Image,
		Command: []string{"agbench"},
		Args:    []string{"k8s", "segment", PlanFile, "--results", ResultsDir + "/$(" + IndexEnv + ")"},
		// Kubernetes sets it in an Indexed Job's pods; named here from the pod's annotation
		// too, so that the args above may use it.
		Env: []corev1.EnvVar{{Name: IndexEnv, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + indexAnnot + "']"}}}},
		VolumeMounts: []corev1.VolumeMount{{Name: planVolume, MountPath: PlanDir, ReadOnly: true}, {Name: resultsVolm, MountPath: ResultsDir}},
	}
	if o.Secret != "" {
		c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: o.Secret}}}}
	}
	results := corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.ResultsClaim}}
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{c},
		Volumes: []corev1.Volume{
			{Name: planVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: planCM}}}},
			{Name: resultsVolm, VolumeSource: results},
		},
		// Load generators on machines of their own: two segments on one node share its CPU.
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100,
				PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
					LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}}}}},
	}
}

// Scheme knows the objects Objects makes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := batchv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Serializer writes and reads the objects as YAML; strict, it refuses a field the API types
// do not have and a field given twice.
func Serializer(strict bool) *json.Serializer {
	s := Scheme()
	return json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s, json.SerializerOptions{Yaml: true, Strict: strict})
}

// Write writes the objects to w as one YAML stream, kubectl apply -f's input.
func Write(w io.Writer, objs ...runtime.Object) error {
	ser := Serializer(false)
	var buf bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		if err := ser.Encode(o, &buf); err != nil {
			return fmt.Errorf("k8s: encode %s: %w", o.GetObjectKind().GroupVersionKind().Kind, err)
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}
