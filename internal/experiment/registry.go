package experiment

import (
	"fmt"
	"sort"
	"sync"

	"github.com/agbench/agbench/internal/workload/readahead"
	"github.com/agbench/agbench/internal/workload/scan"
	"github.com/agbench/agbench/internal/workload/stress"
)

// Meta describes a kind of experiment in the registry, from which the command layer makes
// its commands.
type Meta struct {
	// Name is the kind's name and its command's words ("stress", "tpcc run").
	Name string
	// Description is the command's one-line help.
	Description string
	// New returns an empty spec of the kind, for the command layer to fill.
	New func() Experiment
}

var (
	registryMu sync.Mutex
	registry   = map[string]Meta{}
)

// Register adds a kind to the registry; a duplicate or empty name is a programming error
// found at start-up, and panics.
func Register(m Meta) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if m.Name == "" || m.New == nil {
		panic("experiment.Register: a name and New are required")
	}
	if _, dup := registry[m.Name]; dup {
		panic(fmt.Sprintf("experiment.Register: %q registered twice", m.Name))
	}
	registry[m.Name] = m
}

// Lookup returns the named kind.
func Lookup(name string) (Meta, bool) {
	registryMu.Lock()
	defer registryMu.Unlock()
	m, ok := registry[name]
	return m, ok
}

// Registered lists the registered kinds, sorted by name.
func Registered() []Meta {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]Meta, 0, len(registry))
	for _, m := range registry {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func init() {
	load := func(kind string) func() Experiment { return func() Experiment { return &Load{Command: kind} } }
	Register(Meta{Name: stress.Name, Description: "SQLQueryStress: threads × iterations of a query, with routing off and on", New: load(stress.Name)})
	Register(Meta{Name: scan.Name, Description: "Time reading N rows of a table to the client (the articles' OLAP read), warm or cold", New: load(scan.Name)})
	Register(Meta{Name: "tpcc run", Description: "Run the TPC-C mix with a sweep of virtual users; NOPM, TPM and latency per transaction", New: load("tpcc run")})
	Register(Meta{Name: "disk", Description: "Storage load test (DiskSpd/fio-like) that walks up the load curve to the knee", New: func() Experiment { return &Disk{} }})
	Register(Meta{Name: "seed", Description: "Add a standby by direct seeding or by backup and restore, timed phase by phase", New: func() Experiment { return &Seed{} }})
	Register(Meta{Name: readahead.Name, Description: "Cold-cache prefetch experiment: the read-ahead article's queries with prefetch off and on", New: func() Experiment { return &Readahead{} }})
	Register(Meta{Name: "drill", Description: "Failover drill: acknowledged commits lost and time without writes, per failover", New: func() Experiment { return &Drill{} }})
}
