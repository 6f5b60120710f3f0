package seed

import (
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// Step turns a seeding's report into a result step: the phases' durations and the figures
// as counters ("seconds_transfer", "mb_per_s", "compression_ratio", ...), the progress and
// device series, and the whole report under Extra["seed"] (result.Seeding).
func (r *Report) Step(index, point, repeat int, variant string, params map[string]string) result.Step {
	st := result.Step{
		Index: index, Point: point, Repeat: repeat, Variant: variant, Params: params, VUs: 1,
		Window:   result.Window{Start: r.Started, End: r.Ended},
		Ops:      map[string]*result.Op{},
		Counters: r.Counters(),
		Series:   r.Series,
		Warnings: r.Warnings,
		Complete: true,
	}
	if err := st.SetExtra(result.ExtraSeed, r); err != nil {
		// A figure JSON cannot hold (NaN, ±Inf): the step says so rather than lose it quietly.
		st.Warnings = append(slices.Clip(st.Warnings), err.Error())
	}
	return st
}

// Counters are the report's figures by name, units in the names.
func (r *Report) Counters() map[string]float64 {
	c := map[string]float64{
		"total_seconds":        r.TotalSeconds,
		"estimated_bytes":      float64(r.EstimatedBytes),
		"streamed_bytes":       float64(r.StreamedBytes),
		"wire_bytes":           float64(r.WireBytes),
		"wal_wire_bytes":       float64(r.WALWireBytes),
		"compression_ratio":    r.CompressionRatio,
		result.MBps:            r.MBps,
		"sender_cpu_seconds":   r.SenderCPUSeconds,
		"receiver_cpu_seconds": r.ReceiverCPUSeconds,
		"disk_read_bytes":      float64(r.DiskReadBytes),
		"disk_write_bytes":     float64(r.DiskWriteBytes),
		"attempts":             float64(r.Attempts),
	}
	if r.BackupFileBytes > 0 {
		c["backup_file_bytes"] = float64(r.BackupFileBytes)
	}
	for _, p := range r.Phases {
		k := strings.ReplaceAll(p.Name, "-", "_")
		c["seconds_"+k] = p.Seconds
		c["sender_cpu_seconds_"+k] = p.SenderCPUSeconds
		c["receiver_cpu_seconds_"+k] = p.ReceiverCPUSeconds
	}
	return c
}
