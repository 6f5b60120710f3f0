package diskio

import (
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/agerr"
)

const kib = 1 << 10

// Preset is a named database IO shape. The sizes follow the storage article's "SQL Server
// doesn't do 8K IO" figures, read for PostgreSQL: OLTP reads in the mid-30s KB and writes
// in the mid-teens, OLAP reads 100-512 KB, log flushes 512 B-60 KB made durable, backups
// in MB-sized reads, checkpoints as scattered writes of a page to a few hundred KB.
type Preset struct {
	Name        string
	Description string
	Apply       func(w *Workload)
}

var presets = map[string]Preset{
	"oltp": {"oltp", "8K-64K random reads with 20% writes, 4 threads x QD 8", func(w *Workload) {
		w.BlockSizes = []int64{8 * kib, 16 * kib, 32 * kib, 64 * kib}
		w.Align, w.Random, w.WritePct, w.Threads, w.QD = 8*kib, true, 20, 4, 8
	}},
	"olap": {"olap", "128K-512K sequential reads, 2 threads x QD 8", func(w *Workload) {
		w.BlockSizes = []int64{128 * kib, 256 * kib, 512 * kib}
		w.Align, w.Random, w.WritePct, w.Threads, w.QD = 128*kib, false, 0, 2, 8
	}},
	"log": {"log", "8K-64K sequential writes, each made durable (O_DSYNC), 1 thread x QD 1, as WAL flushes", func(w *Workload) {
		w.BlockSizes = []int64{8 * kib, 16 * kib, 32 * kib, 64 * kib}
		w.Align, w.Random, w.WritePct, w.Threads, w.QD, w.Dsync = 8*kib, false, 100, 1, 1, true
	}},
	"backup": {"backup", "1M sequential reads, 1 thread x QD 4", func(w *Workload) {
		w.BlockSizes = []int64{1 << 20}
		w.Align, w.Random, w.WritePct, w.Threads, w.QD = 1<<20, false, 0, 1, 4
	}},
	"checkpoint": {"checkpoint", "8K-256K random writes, 2 threads x QD 16", func(w *Workload) {
		w.BlockSizes = []int64{8 * kib, 32 * kib, 64 * kib, 128 * kib, 256 * kib}
		w.Align, w.Random, w.WritePct, w.Threads, w.QD = 8*kib, true, 100, 2, 16
	}},
}

// PresetNames lists the presets in order.
func PresetNames() []string {
	var n []string
	for k := range presets {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// LookupPreset finds a preset by name.
func LookupPreset(name string) (Preset, error) {
	p, ok := presets[strings.ToLower(name)]
	if !ok {
		return Preset{}, agerr.BadInputf("--preset %q: one of %s", name, strings.Join(PresetNames(), ", "))
	}
	return p, nil
}
