package workload

import (
	"fmt"
	"sort"
	"sync"
)

var (
	mu       sync.Mutex
	registry = map[string]Meta{}
)

// Register adds a workload to the registry; it panics on a duplicate or empty name, which
// is a programming error found at start-up.
func Register(m Meta) {
	mu.Lock()
	defer mu.Unlock()
	if m.Name == "" {
		panic("workload.Register: a name is required")
	}
	if _, dup := registry[m.Name]; dup {
		panic(fmt.Sprintf("workload.Register: %q registered twice", m.Name))
	}
	registry[m.Name] = m
}

// Get returns the named workload's Meta.
func Get(name string) (Meta, bool) {
	mu.Lock()
	defer mu.Unlock()
	m, ok := registry[name]
	return m, ok
}

// Registered lists the registered workloads, sorted by name.
func Registered() []Meta {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Meta, 0, len(registry))
	for _, m := range registry {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
