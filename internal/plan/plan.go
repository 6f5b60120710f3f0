// Package plan owns plan files: a study written as YAML (a target — a local cluster to
// create with its settings, or connection strings — and experiments, each a kind of
// experiment with its command's flags), parsed and checked whole before anything runs,
// every error with the file, line and column it is about. It turns each experiment into
// the command line its kind's flags are parsed from (and a study shows).
//
// It knows commands only through the Catalog it is given; it must not import the command
// layer, the cluster, workloads or the report. It reads a cluster's numbers with the
// parsers cluster create's flags use, so that a plan that passes is one cluster create takes.
//
// Imports from agbench: only internal/agerr, internal/cgroup, internal/links, internal/units.
package plan

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Plan is a study: where it runs and what runs, in order.
type Plan struct {
	// File is the plan's path, as given (errors name it).
	File string
	// Name names the study's results folder (<results>/<name>-<time>); the file's base
	// name when not given.
	Name        string
	Description string
	// Results is the folder the study's folder is made in (default "results").
	Results string
	// Report is the HTML report's file name inside the study's folder (default report.html).
	Report      string
	Target      Target
	Experiments []Experiment
}

// Target is where every experiment connects: exactly one of Cluster and Connect; and
// where the nodes' host figures come from (HostMetrics, nil for their topology's or none).
type Target struct {
	Cluster     *Cluster
	Connect     *Connect
	HostMetrics *HostMetrics
}

// Cluster is a local cluster the study creates before its experiments and destroys after
// them (unless Keep), or uses as it is (Reuse).
type Cluster struct {
	Name     string
	Standbys int
	// Commit is "sync" or "async".
	Commit   string
	BasePort int
	// Listener is the listener's address ("" for none).
	Listener string
	// Settings are server settings for every node, in the file's order.
	Settings []Setting
	Keep     bool
	Reuse    bool
	// HostCPUs and HostMemory model each node as a host (cluster create --host-cpus,
	// --host-memory) when set; RoutingList is the cluster's routing list (--routing-list).
	HostCPUs    string
	HostMemory  string
	RoutingList string
	// HostCPUShares, HostReadBPS, HostWriteBPS, HostReadIOPS and HostWriteIOPS are the
	// host's CPU weight and IO limits (--host-cpu-shares, --host-read-bps, …), when set.
	HostCPUShares, HostReadBPS, HostWriteBPS, HostReadIOPS, HostWriteIOPS string
	// LinkLatency and LinkBandwidth put links in front of the nodes (--link-latency,
	// --link-bandwidth).
	LinkLatency, LinkBandwidth string
	// Netns puts each node in a network namespace of its own (cluster create --netns).
	Netns bool
}

// Setting is one server setting.
type Setting struct{ Key, Value string }

// Connect names an existing cluster by connection strings.
type Connect struct {
	Primary  string
	Standbys []string
	Listener string
}

// Experiment is one command of the study with its flags.
type Experiment struct {
	// Name labels the experiment (its results folder is NN-name); the command's when not given.
	Name string
	// Command is the command's words ("tpcc run").
	Command []string
	Flags   []Flag
	// Args are positional arguments after the flags (the disk tester's FILE).
	Args []string
	// Pos is where the experiment begins in the file.
	Pos Pos
}

// Flag is one flag of an experiment: a scalar, or a list (joined with commas, or given
// once per value for a repeatable flag).
type Flag struct {
	Name   string
	Values []string
	// List is true when the file gave a YAML list.
	List bool
	Pos  Pos
}

// Pos is a place in the plan file (1-based).
type Pos struct{ Line, Column int }

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// Defaults.
const (
	DefaultResults  = "results"
	DefaultReport   = "report.html"
	DefaultCommit   = "async"
	DefaultBasePort = 6600
	// MaxStandbys is the most standbys a local cluster has (ports base..base+9).
	MaxStandbys = 9
)

// Label returns the experiment's label: its name, or its command's words joined.
func (e Experiment) Label() string {
	if e.Name != "" {
		return e.Name
	}
	return strings.Join(e.Command, "-")
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// TargetFlags are the flags a target sets on every experiment whose command has them.
var TargetFlags = []string{"cluster", "primary", "standby", "listener"}

// StudyDir is the placeholder, in flag values and args, for the study's results folder
// (e.g. a test file: args: ["{study}/disk.dat"]).
const StudyDir = "{study}"

// Args returns the command line of experiment i: its command, its flags in the file's
// order, then the target's flags and results (when the command has those flags and the
// experiment did not set them), then its args. has says whether the command has a flag;
// studyDir replaces StudyDir.
func (p *Plan) Args(i int, studyDir, resultsDir string, has func(flag string) bool) []string {
	e := p.Experiments[i]
	args := append([]string(nil), e.Command...)
	set := map[string]bool{}
	expand := func(v string) string { return strings.ReplaceAll(v, StudyDir, studyDir) }
	for _, f := range e.Flags {
		set[f.Name] = true
		if f.List && repeatable(f.Name) {
			for _, v := range f.Values {
				args = append(args, "--"+f.Name+"="+expand(v))
			}
			continue
		}
		args = append(args, "--"+f.Name+"="+expand(strings.Join(f.Values, ",")))
	}
	targetSet := false
	for _, t := range TargetFlags {
		targetSet = targetSet || set[t]
	}
	if !targetSet {
		switch t := p.Target; {
		case t.Cluster != nil && has("cluster"):
			args = append(args, "--cluster="+t.Cluster.Name)
		case t.Connect != nil:
			if has("primary") {
				args = append(args, "--primary="+t.Connect.Primary)
			}
			if has("standby") {
				for _, s := range t.Connect.Standbys {
					args = append(args, "--standby="+s)
				}
			}
			if t.Connect.Listener != "" && has("listener") && !set["compare"] {
				args = append(args, "--listener="+t.Connect.Listener)
			}
		}
	}
	if h := p.Target.HostMetrics; h != nil && has("host-metrics") && !anySet(set, hostMetricsFlags) {
		args = append(args, h.args()...)
	}
	if resultsDir != "" && has("results") && !set["results"] {
		args = append(args, "--results="+resultsDir)
	}
	for _, a := range e.Args {
		args = append(args, expand(a))
	}
	return args
}

// repeatable flags take one value per occurrence (--standby A --standby B, --set k=v).
func repeatable(name string) bool {
	return name == "standby" || name == "set" || name == "routing-list" || name == "host-metrics" || name == "prometheus-instance"
}

func anySet(set map[string]bool, names []string) bool {
	for _, n := range names {
		if set[n] {
			return true
		}
	}
	return false
}

// ClusterCreateArgs is the `cluster create` command line of a cluster target.
func (c *Cluster) CreateArgs() []string {
	args := []string{"cluster", "create", "--name=" + c.Name, "--standbys=" + strconv.Itoa(c.Standbys),
		"--commit=" + c.Commit, "--base-port=" + strconv.Itoa(c.BasePort)}
	if c.Listener != "" {
		args = append(args, "--listener="+c.Listener)
	}
	for _, s := range c.Settings {
		args = append(args, "--set="+s.Key+"="+s.Value)
	}
	if c.HostCPUs != "" {
		args = append(args, "--host-cpus="+c.HostCPUs)
	}
	if c.HostMemory != "" {
		args = append(args, "--host-memory="+c.HostMemory)
	}
	for _, f := range []struct{ flag, v string }{{"--host-cpu-shares", c.HostCPUShares}, {"--host-read-bps", c.HostReadBPS},
		{"--host-write-bps", c.HostWriteBPS}, {"--host-read-iops", c.HostReadIOPS}, {"--host-write-iops", c.HostWriteIOPS}} {
		if f.v != "" {
			args = append(args, f.flag+"="+f.v)
		}
	}
	if c.RoutingList != "" {
		args = append(args, "--routing-list="+c.RoutingList)
	}
	if c.Netns {
		args = append(args, "--netns")
	}
	if c.LinkLatency != "" {
		args = append(args, "--link-latency="+c.LinkLatency)
	}
	if c.LinkBandwidth != "" {
		args = append(args, "--link-bandwidth="+c.LinkBandwidth)
	}
	return args
}

// Summary is one line describing the target, credentials left out.
func (t Target) Summary() string {
	if c := t.Cluster; c != nil {
		s := fmt.Sprintf("local cluster %s: primary + %d standby(s), %s commit, port %d", c.Name, c.Standbys, c.Commit, c.BasePort)
		if c.Listener != "" {
			s += ", listener " + c.Listener
		}
		if len(c.Settings) > 0 {
			var kv []string
			for _, x := range c.Settings {
				kv = append(kv, x.Key+"="+x.Value)
			}
			s += ", " + strings.Join(kv, " ")
		}
		if c.HostCPUs != "" || c.HostMemory != "" || c.HostReadBPS != "" || c.HostWriteBPS != "" || c.HostReadIOPS != "" || c.HostWriteIOPS != "" {
			var parts []string
			for _, p := range []string{ifSet("cpus ", c.HostCPUs), ifSet("cpu shares ", c.HostCPUShares), ifSet("memory ", c.HostMemory),
				ifSet("read B/s ", c.HostReadBPS), ifSet("write B/s ", c.HostWriteBPS),
				ifSet("read IOPS ", c.HostReadIOPS), ifSet("write IOPS ", c.HostWriteIOPS)} {
				if p != "" {
					parts = append(parts, p)
				}
			}
			s += ", each node a modelled host (" + strings.Join(parts, " ") + ")"
		} else {
			s += ", nodes sharing this machine (no host budgets)"
		}
		if c.RoutingList != "" {
			s += ", routing list " + c.RoutingList
		}
		if c.LinkLatency != "" {
			s += ", links with " + c.LinkLatency + " latency"
		}
		if c.LinkBandwidth != "" {
			s += ", links of " + c.LinkBandwidth + "/s each way"
		}
		return s
	}
	if c := t.Connect; c != nil {
		return fmt.Sprintf("existing cluster: a primary and %d standby(s) by connection string", len(c.Standbys))
	}
	return "no target"
}

func ifSet(label, v string) string {
	if v == "" {
		return ""
	}
	return label + v
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
