package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/k8s"
	"github.com/agbench/agbench/internal/result"
)

func init() { register(newK8sCmd) }

func newK8sCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "k8s",
		Short: "Load from many machines: a run's segments as a Kubernetes Indexed Job, and their results merged",
	}
	c.AddCommand(newK8sJobCmd(a), newK8sSegmentCmd(a), newK8sCollectCmd(a))
	return c
}

func newK8sJobCmd(a *app) *cobra.Command {
	var segments int
	var o k8s.JobOptions
	var run string
	c := &cobra.Command{
		Use:   "job --segments N -- COMMAND FLAGS...",
		Short: "Write a Kubernetes Indexed Job that runs a measuring command as N segments, one per pod",
		Long: `Write to stdout a ConfigMap holding the plan (the command and its flags, the number of
segments, the run's name) and an Indexed Job (batch/v1, completionMode: Indexed,
completions and parallelism N) whose pod of completion index I runs the command as segment
I of N (agbench k8s segment), writing its result into /results/I of the PersistentVolumeClaim
--results-claim (required: the pods are Completed when their segments end, and a Completed
pod's files cannot be copied out); apply them with kubectl apply -f. The segments meet at a barrier in the target database and begin together;
agbench k8s collect merges what they wrote.

COMMAND is stress, scan or tpcc run with its flags, as it would run on one machine; the
pods reach the servers by --primary, --standby or --listener. Passwords go in a Secret
(--secret: its keys become the pods' environment, PGPASSWORD …), never in the plan, and a
connection string names no file of this machine (passfile, sslrootcert …): the pods have none.`,
		Example: `  agbench k8s job --segments 4 --name lab-1 --image registry/agbench:1.4 --results-claim agbench-results \
      --secret pg -- tpcc run --primary "host=db.bench user=bench" --vus 40 --duration 10m | kubectl apply -f -`,
		Args: func(c *cobra.Command, args []string) error {
			if c.ArgsLenAtDash() < 0 || len(args) == 0 {
				return agerr.BadInputf("%s: give the command after --: %s --segments N -- stress FLAGS...", c.CommandPath(), c.CommandPath())
			}
			if c.ArgsLenAtDash() > 0 {
				return agerr.BadInputf("%s: %q before --: the command goes after it", c.CommandPath(), strings.Join(args[:c.ArgsLenAtDash()], " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if run == "" {
				run = o.Name
			}
			p := k8s.Plan{Command: args, Segments: segments, Run: run}
			if err := checkJobPlan(p, o); err != nil {
				return err
			}
			cm, job, err := k8s.Objects(p, o)
			if err != nil {
				return err
			}
			return k8s.Write(a.stdout, cm, job)
		},
	}
	c.Flags().IntVar(&segments, "segments", 0, "number of segments, one pod each (the load generators)")
	c.Flags().StringVar(&o.Name, "name", "agbench", "name of the Job (and of its ConfigMap, NAME-plan)")
	c.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "namespace of the objects (default: kubectl's)")
	c.Flags().StringVar(&o.Image, "image", "agbench:"+version, "container image with agbench on its PATH")
	c.Flags().StringVar(&o.ResultsClaim, "results-claim", "", "PersistentVolumeClaim (ReadWriteMany) mounted at /results in every pod, where each writes /results/I (required: a Completed pod's own files cannot be copied out)")
	c.Flags().StringVar(&o.Secret, "secret", "", "Secret whose keys become the pods' environment (PGPASSWORD, PGUSER …)")
	c.Flags().StringVar(&run, "run", "", "name of the run the segments share at their barrier (default: --name)")
	return c
}

// checkJobPlan refuses, before anything is written, a Job whose pods would fail: a command
// that cannot run as segments, flags its kind refuses as segment 0 of N, a local cluster's
// name, a password in the plan.
func checkJobPlan(p k8s.Plan, o k8s.JobOptions) error {
	var errs []error
	if _, err := p.Marshal(); err != nil {
		errs = append(errs, err)
	}
	if o.ResultsClaim == "" {
		// An emptyDir dies with a Completed pod, and kubectl cp needs a running container:
		// the segments' results would be lost when they end.
		errs = append(errs, agerr.BadInputf("--results-claim: give a PersistentVolumeClaim (ReadWriteMany) for the pods' results: a pod is Completed when its segment ends, and kubectl cp cannot reach its files then"))
	}
	if o.Image == "" {
		errs = append(errs, agerr.BadInputf("--image: give the container image"))
	}
	// A Job's pods are named after it and their index: at most 63 characters less those.
	if msgs := validation.IsDNS1123Label(o.Name + "-plan"); len(msgs) > 0 {
		errs = append(errs, agerr.BadInputf("--name %q: %s", o.Name, strings.Join(msgs, "; ")))
	}
	for _, arg := range p.Command {
		if result.StripPassword(arg) != arg {
			errs = append(errs, agerr.BadInputf("%s: a password in the plan would be stored in the ConfigMap: give it in a Secret (--secret, key PGPASSWORD)", result.Redact(arg)))
		}
		for _, f := range localFileParams(arg) {
			errs = append(errs, agerr.BadInputf("%s: a file of this machine, which the pods do not have: give the password in a Secret (--secret, key PGPASSWORD) and leave the file out", f))
		}
	}
	if err := agerr.Join(errs...); err != nil || len(p.Command) == 0 {
		return err
	}
	words := p.Command[:1]
	if len(p.Command) > 1 && !strings.HasPrefix(p.Command[1], "-") {
		words = p.Command[:2]
	}
	fs, build, ok := experiment.RegistryKinds(words)
	if !ok || fs.Lookup("segment") == nil {
		return agerr.BadInputf("agbench %s: not a command that runs as segments (stress, scan, tpcc run)", strings.Join(words, " "))
	}
	if err := fs.Parse(append(p.Command[len(words):], "--segment", fmt.Sprintf("0/%d", p.Segments))); err != nil {
		return agerr.BadInputf("agbench %s: %v", strings.Join(words, " "), err)
	}
	if f := fs.Lookup("cluster"); f != nil && f.Changed {
		return agerr.BadInputf("--cluster %s names a cluster of this machine: the pods reach the servers by --primary, --standby or --listener", f.Value)
	}
	spec, err := build(fs.Args())
	if err != nil {
		return err
	}
	return spec.Validate()
}

// localFileKeyword is a libpq connection parameter naming a file of the machine that runs
// agbench, with its value ('quoted' or bare, in a keyword/value string or a URL's query).
var localFileKeyword = regexp.MustCompile(`(?i)(?:^|[\s?&])((?:passfile|sslcert|sslkey|sslrootcert|sslcrl|sslcrldir)\s*=\s*(?:'(?:[^'\\]|\\.)*'?|[^\s&']*))`)

// localFileParams are the connection parameters in arg that name a local file: a pod of the
// Job has none of this machine's files. sslrootcert=system names the system's CAs, no file.
func localFileParams(arg string) []string {
	var out []string
	for _, m := range localFileKeyword.FindAllStringSubmatch(arg, -1) {
		name, value, _ := strings.Cut(m[1], "=")
		if strings.EqualFold(strings.TrimSpace(name), "sslrootcert") && strings.TrimSpace(value) == "system" {
			continue
		}
		out = append(out, strings.ReplaceAll(m[1], " ", ""))
	}
	return out
}

func newK8sSegmentCmd(a *app) *cobra.Command {
	var results string
	c := &cobra.Command{
		Use:   "segment PLAN",
		Short: "Run a plan's command as this pod's segment (the Job's pods run it; $JOB_COMPLETION_INDEX numbers it)",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return agerr.BadInputf("%s: give the plan file", c.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := os.ReadFile(args[0])
			if err != nil {
				return agerr.BadInputf("plan %s: %v", args[0], err)
			}
			p, err := k8s.ParsePlan(b)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			root := newRoot(a)
			root.SetArgs(p.Args(results))
			return root.ExecuteContext(cmd.Context())
		},
	}
	c.Flags().StringVar(&results, "results", "results", "folder for the segment's result folder")
	return c
}

func newK8sCollectCmd(a *app) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "collect DIR...",
		Short: "Merge the results a Job's segments wrote (a shared volume's folder, or copied out) into one result",
		Long: `Merge the segments' results found in DIR (the Job's results claim, mounted where
agbench runs: one folder per completion index) into one result under --results, as agbench
merge does; a segment that wrote none makes the run incomplete, named.`,
		Example: `  agbench k8s collect /mnt/agbench-results --results results   # the claim, mounted here
  kubectl cp bench/reader:/results collected   # or from a running pod that mounts the claim
  agbench k8s collect collected --results results`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return agerr.BadInputf("%s: give the folder the segments wrote into", c.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return mergeSegments(a, args, out) },
	}
	c.Flags().StringVar(&out, "results", "results", "folder for the merged run's folder")
	return c
}
