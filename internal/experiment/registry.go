package experiment

import (
	"fmt"
	"sort"
	"sync"

	"github.com/spf13/pflag"
)

// Meta describes a kind of experiment in the registry, from which the command layer makes
// its commands and a study turns its experiments into specs.
type Meta struct {
	// Name is the kind's name and its command's words ("stress", "tpcc run").
	Name string
	// Description is the command's one-line help; Long and Example its full help.
	Description, Long, Example string
	// Use is the command's usage line when the kind takes arguments or refuses them in its
	// builder ("disk [FILE]"); "" names the command by its last word, and it takes none.
	Use string
	// Flags registers the kind's flags on fs, with their defaults and help, and returns the
	// builder that makes a spec from them once they are parsed: the command and a study's
	// experiment go through the same flags and the same builder.
	Flags func(fs *pflag.FlagSet) Builder
}

// Builder makes a spec of its kind from the flags Meta.Flags registered, once they are
// parsed, and the command's positional arguments. Checks that need no server are the
// spec's Validate; Builder fails only where no spec can be made.
type Builder func(args []string) (Experiment, error)

var (
	registryMu sync.Mutex
	registry   = map[string]Meta{}
)

// Register adds a kind to the registry; a duplicate or empty name is a programming error
// found at start-up, and panics.
func Register(m Meta) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if m.Name == "" || m.Flags == nil {
		panic("experiment.Register: a name and Flags are required")
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
