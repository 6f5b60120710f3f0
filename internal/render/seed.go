package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// Seeding prints one seeding: how long it took and by which method, its phases with the
// resources each used, the bytes streamed and on the wire, what the sender waited on, and
// its warnings.
func Seeding(w io.Writer, r *result.Seeding) {
	fmt.Fprintf(w, "\nseeded %s (port %d) by %s, compression %s, in %.1fs", r.Standby, r.Port, r.Method, r.Compression, r.TotalSeconds)
	if r.Attempts > 1 {
		fmt.Fprintf(w, " (%d attempts)", r.Attempts)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	tw := table.NewWriter(w, table.Right)
	fmt.Fprintln(tw, "phase\tseconds\tsender CPU s\treceiver CPU s\tdisk read MB\tdisk write MB\t")
	for _, p := range r.Phases {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t\n", p.Name, p.Seconds, p.SenderCPUSeconds, p.ReceiverCPUSeconds, units.MB(p.DiskReadBytes), units.MB(p.DiskWriteBytes))
	}
	fmt.Fprintf(tw, "total\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t\n", r.TotalSeconds, r.SenderCPUSeconds, r.ReceiverCPUSeconds, units.MB(r.DiskReadBytes), units.MB(r.DiskWriteBytes))
	tw.Flush()
	fmt.Fprintf(w, "\n%s streamed (server's estimate %s) at %.1f MB/s", units.FormatBytesShort(r.StreamedBytes), units.FormatBytesShort(r.EstimatedBytes), r.MBps)
	if r.WireBytes > 0 {
		fmt.Fprintf(w, "; %s on the wire (compression ratio %.2f), plus %s of WAL", units.FormatBytesShort(r.WireBytes), r.CompressionRatio, units.FormatBytesShort(r.WALWireBytes))
	}
	if r.BackupFileBytes > 0 {
		fmt.Fprintf(w, "; backup files %s", units.FormatBytesShort(r.BackupFileBytes))
	}
	fmt.Fprintln(w)
	if ws := waitShares(r.Waits); ws != "" {
		fmt.Fprintf(w, "the primary's walsender waited on: %s\n", ws)
	}
	for _, x := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", x)
	}
}

// waitShares writes wait categories by share of readings, largest first.
func waitShares(waits map[string]int) string {
	total := 0
	var keys []string
	for k, n := range waits {
		total += n
		keys = append(keys, k)
	}
	if total == 0 {
		return ""
	}
	sort.Slice(keys, func(i, j int) bool {
		return waits[keys[i]] > waits[keys[j]] || waits[keys[i]] == waits[keys[j]] && keys[i] < keys[j]
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*float64(waits[k])/float64(total)))
	}
	return strings.Join(parts, ", ")
}

// seedCompareRows are the rows of the comparison table after the phases: a label, a counter
// and its format.
var seedCompareRows = []struct{ label, counter, format string }{
	{"total", "total_seconds", "%.1fs"},
	{"MB/s", "mb_per_s", "%.1f"},
	{"sender CPU s", "sender_cpu_seconds", "%.1f"},
	{"receiver CPU s", "receiver_cpu_seconds", "%.1f"},
	{"wire MB", "wire_bytes", "mb"},
	{"compression ratio", "compression_ratio", "%.2f"},
	{"device write MB (all)", "disk_write_bytes", "mb"},
}

// SeedCompare prints the article's table: one row per phase, one column per variant (its
// label, "direct/lz4": the median of its repeats), then rate, CPU and bytes on the wire.
func SeedCompare(w io.Writer, res *result.Result, variants []string) {
	phases := result.SeedPhases
	byVariant := map[string][]*result.Step{}
	for i := range res.Steps {
		st := &res.Steps[i]
		byVariant[st.Variant] = append(byVariant[st.Variant], st)
	}
	medianOf := func(label, counter string) (float64, bool) {
		var xs []float64
		for _, st := range byVariant[label] {
			if v, ok := st.Counters[counter]; ok {
				xs = append(xs, v)
			}
		}
		if len(xs) == 0 {
			return 0, false
		}
		return stats.Median(xs), true
	}
	fmt.Fprintln(w)
	tw := table.NewWriter(w, table.Right)
	fmt.Fprint(tw, "step\t")
	for _, v := range variants {
		fmt.Fprintf(tw, "%s\t", v)
	}
	fmt.Fprintln(tw)
	for _, ph := range phases {
		key := "seconds_" + strings.ReplaceAll(ph, "-", "_")
		has := false
		for _, v := range variants {
			if _, ok := medianOf(v, key); ok {
				has = true
			}
		}
		if !has {
			continue
		}
		fmt.Fprintf(tw, "%s\t", ph)
		for _, v := range variants {
			if x, ok := medianOf(v, key); ok {
				fmt.Fprintf(tw, "%.1fs\t", x)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	for _, row := range seedCompareRows {
		fmt.Fprintf(tw, "%s\t", row.label)
		for _, v := range variants {
			x, ok := medianOf(v, row.counter)
			switch {
			case !ok:
				fmt.Fprint(tw, "-\t")
			case row.format == "mb":
				fmt.Fprintf(tw, "%.0f\t", x/1e6)
			default:
				fmt.Fprintf(tw, row.format+"\t", x)
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if n := len(res.Steps); n > 0 {
		if v, ok := res.Steps[0].Counters["streamed_bytes"]; ok {
			fmt.Fprintf(w, "\ndatabase files streamed per seeding: %s; medians of %d run(s) per variant\n", units.FormatBytesShort(int64(v)), n/len(variants))
		}
	}
}

// SeedHistory prints the cluster's seedings, one row each, as `seed history` shows them.
func SeedHistory(w io.Writer, recs []result.SeedRecord) {
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "id\tstandby\tmethod\tcompress\tstart (UTC)\tend\tseconds\tsize\twire\tMB/s\tstate\tattempts\tfailure reason")
	for _, r := range recs {
		end := "-"
		if !r.End.IsZero() {
			end = r.End.Format("15:04:05")
		}
		reason := r.Reason
		if len(reason) > 60 {
			reason = reason[:57] + "..."
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%.1f\t%s\t%d\t%s\n", r.ID, r.Standby, r.Method, r.Compression,
			r.Start.Format("2006-01-02 15:04:05"), end, r.Seconds, units.FormatBytesShort(r.SizeBytes), units.FormatBytesShort(r.WireBytes), r.MBps,
			r.State, r.Attempts, strings.ReplaceAll(reason, "\n", " "))
	}
	tw.Flush()
}
