package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
)

// Readahead prints the experiment's conditions and its STATISTICS IO table (per query,
// prefetch off and on, and how many times faster prefetching made it), then its warnings.
func Readahead(w io.Writer, c result.ReadaheadConditions, rows []result.ReadaheadRow, warnings []string) {
	var rels []string
	for _, name := range []string{result.ReadaheadTable1, result.ReadaheadTable2} {
		rels = append(rels, fmt.Sprintf("%s %.0f MB", name, float64(c.Relations[name])/1e6))
	}
	fmt.Fprintf(w, "readahead · PostgreSQL %s · %d rows (%s)\n", c.ServerVersion, c.Rows, strings.Join(rels, ", "))
	fmt.Fprintf(w, "cold:          %s\n", c.ColdMethod)
	fmt.Fprintf(w, "device:        %s\n", c.Device)
	if c.Throttle != "" {
		fmt.Fprintf(w, "throttle:      %s\n", c.Throttle)
	}
	fmt.Fprintf(w, "prefetch off:  %s\nprefetch on:   %s\n", c.PrefetchOff, c.PrefetchOn)
	fmt.Fprintf(w, "sequential:    %s\nIO ops from:   %s\n\n", c.SequentialPrefetch, c.IOSource)
	tw := table.NewWriter(w, table.Left)
	fmt.Fprintln(tw, "QUERY\tPLAN NODE\tPREFETCH\tELAPSED ms\tHITS\tREADS\tIO OPS\tAVG IO kB\tIO READ ms\tDEVICE ms\tCOLD RUNS\tOFF/ON\t")
	for _, r := range rows {
		for i, side := range []result.ReadaheadFigures{r.Off, r.On} {
			q, node, name, ratio := "", "", "off", ""
			if i == 0 {
				q, node = r.Title, r.Node
				if !r.Off.NodeOK || !r.On.NodeOK {
					node += " (NOT ALWAYS)"
				}
			} else {
				name = "on"
				if r.Ratio > 0 {
					ratio = fmt.Sprintf("%.1fx", r.Ratio)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.0f\t%.0f\t%.0f\t%.1f\t%.1f\t%s\t%d/%d\t%s\t\n", q, node, name, side.ElapsedMs,
				side.SharedHit, side.Read, side.IOOps, side.AvgIOKB, side.IOReadMs, devMs(c, side), side.Cold, side.Runs, ratio)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "medians; HITS = shared buffer hits (logical reads), READS = pages read from storage (physical reads),")
	fmt.Fprintln(w, "IO READ ms = PostgreSQL's read time (track_io_timing), DEVICE ms = the device's own (/proc/diskstats; summed over concurrent IOs)")
	for _, s := range warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

// devMs is the device's read time, or "-" when the device is shared with other processes.
func devMs(c result.ReadaheadConditions, f result.ReadaheadFigures) string {
	if c.DeviceName == "" {
		return "-"
	}
	return fmt.Sprintf("%.1f", f.DeviceMs)
}
