package experiment

import (
	"time"

	"github.com/agbench/agbench/internal/cluster"
)

// A study's progress, in the order a study sends it. Each experiment's own progress goes
// through Study.Experiment, not through the study's stream.

// StudyBegun is sent once the study has its folder, before anything is made.
type StudyBegun struct {
	Name        string
	Experiments int
	// Target is the plan's target in one line (plan.Target.Summary).
	Target string
	Dir    string
}

// ClusterCreating is sent before the study creates its cluster: Args is the cluster create
// command line that makes the same cluster (logged in CommandsFile).
type ClusterCreating struct{ Args []string }

// ClusterCreated is sent when the study's cluster was created in Took, or could not be
// (Err; nothing else runs then).
type ClusterCreated struct {
	Topology *cluster.Topology
	Took     time.Duration
	Err      error
}

// ExperimentBegun is sent before experiment I of N runs, with its command line.
type ExperimentBegun struct {
	I, N  int
	Label string
	Args  []string
}

// ExperimentEnded is sent when experiment I of N has ended after Took: done, or failed
// with Err (the study stops then).
type ExperimentEnded struct {
	I, N  int
	Label string
	Took  time.Duration
	Err   error
}

// StudyEnded is sent when the commands and the report are written; Took is the study's
// time so far.
type StudyEnded struct {
	Name string
	Took time.Duration
}

// ClusterDestroying is sent before the study destroys the cluster it created.
type ClusterDestroying struct{ Name string }

// ClusterDestroyed is sent when the study's cluster was destroyed in Took, or could not be
// (Err). The study destroys it after Ctrl-C too: Err is never an interruption.
type ClusterDestroyed struct {
	Name string
	Took time.Duration
	Err  error
}
