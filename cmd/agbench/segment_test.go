package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSegmentBadInput checks that a segment the flags or the environment put out of range,
// or a split that leaves a segment without load, is refused before anything is made.
func TestSegmentBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	primary := []string{"--primary", "postgres://127.0.0.1:1/x", "--results", res}
	wantRefused(t, nil, filepath.Join(res, "*"), []badInput{
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segment", "3/3"}, "--segment \"3/3\": index 3 out of range"},
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segment", "1"}, "want INDEX/SEGMENTS"},
		{[]string{"stress", "-q", "SELECT 1", "--threads", "2", "--segment", "0/3"}, "--threads 2 with --segment 0/3: every segment needs at least one"},
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segment", "0/3", "--segments", "2"}, "not the same number of segments"},
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segments", "3"}, "give --segment I/3 or set $JOB_COMPLETION_INDEX"},
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segment", "0/3", "--init", "10"}, "--init with --segment"},
		{[]string{"scan", "--threads", "3", "--segment", "0/3", "--segment-timeout", "0s"}, "--segment-timeout 0s"},
		{[]string{"tpcc", "run", "--vus", "4,2", "--segment", "1/3"}, "--vus 2 with --segment 1/3"},
		{[]string{"tpcc", "run", "--vus", "3", "--segment", "1/3", "--check"}, "--check with --segment"},
	}, primary...)
	// A pod's index comes from its environment, not a flag: the message names the variable.
	wantRefused(t, map[string]string{"JOB_COMPLETION_INDEX": "5"}, filepath.Join(res, "*"), []badInput{
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segments", "3"}, "$JOB_COMPLETION_INDEX=\"5\" with --segments 3: index 5 out of range"},
	}, primary...)
	wantRefused(t, map[string]string{"JOB_COMPLETION_INDEX": "x"}, filepath.Join(res, "*"), []badInput{
		{[]string{"stress", "-q", "SELECT 1", "--threads", "3", "--segments", "3"}, "$JOB_COMPLETION_INDEX=\"x\" with --segments 3: index \"x\" is not a whole number"},
	}, primary...)
}

// TestK8sJobBadInput checks that a Job whose pods would fail is refused before anything is
// written: the plan's command is checked as segment 0 of N without connecting.
func TestK8sJobBadInput(t *testing.T) {
	t.Parallel()
	job := []string{"k8s", "job", "--segments", "3", "--results-claim", "agbench-results"}
	stress := []string{"--", "stress", "--primary", "host=db", "-q", "SELECT 1"}
	for _, c := range []badInput{
		// A pod of a Job is Completed when its segment ends: kubectl cp cannot reach an
		// emptyDir then, and its results would be lost.
		{[]string{"k8s", "job", "--segments", "3", "--", "stress", "--primary", "host=db", "-q", "SELECT 1", "--threads", "3"}, "--results-claim: give a PersistentVolumeClaim"},
		{append(job, "--", "stress", "--primary", "host=db passfile=/tmp/pgpass", "-q", "SELECT 1", "--threads", "3"), "passfile=/tmp/pgpass: a file of this machine"},
		{append(job, "--", "stress", "--primary", "postgres://db/x?sslmode=verify-full&sslrootcert=/etc/ca.pem", "-q", "SELECT 1", "--threads", "3"), "sslrootcert=/etc/ca.pem: a file of this machine"},
		{append(job, "stress"), "give the command after --"},
		{append(job, "--", "drill", "--primary", "host=db"), "agbench drill: not a command that runs as segments"},
		{append(append(job, stress...), "--threads", "2"), "--threads 2 with --segment 0/3"},
		{append(append(job, stress...), "--threads", "3", "--segment", "1/3"), "--segment is each segment's"},
		{append(job, "--", "stress", "--primary", "postgres://u:secret@db/x", "-q", "SELECT 1", "--threads", "3"), "a password in the plan"},
		{append(job, "--", "stress", "--cluster", "lab", "-q", "SELECT 1", "--threads", "3"), "--cluster lab names a cluster of this machine"},
		{append(append(job, "--name", "Lab_1"), stress...), "--name \"Lab_1\""},
		{[]string{"k8s", "job", "--segments", "0", "--", "stress", "--primary", "host=db", "-q", "SELECT 1"}, "plan: segments: segments 0"},
	} {
		code, out, errs := runCLI(t, nil, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 naming %q and nothing written", c.args, code, out, errs, c.want)
		}
	}
}
