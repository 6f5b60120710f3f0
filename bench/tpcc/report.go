package main

import (
	"fmt"
	"os"

	"github.com/agbench/agbench/bench/harness"
)

func optional(v float64, format string) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

const rowFormat = "%-5s %-23s %7s %7s %8s %8s %6s %6s %8s %8s %8s %6s %6s %6s %6s\n"

func printRowHeader(first string) {
	fmt.Printf(rowFormat, first, "side", "NOPM", "TPM", "srvNOPM", "srvTPM", "st/tx", "own", "drv µs", "srv µs", "CPU µs",
		"samp%", "OL/NO", "rows", "errs")
}

func printRow(first, name string, s sample) {
	f := func(format string, v float64) string { return fmt.Sprintf(format, v) }
	samp := "–"
	if s.samplerCPU > 0 {
		samp = f("%.2f", 100*s.samplerShare)
	}
	fmt.Printf(rowFormat, first, name, f("%.0f", s.nopm), f("%.0f", s.tpm), f("%.0f", s.srvNOPM), f("%.0f", s.srvTPM),
		f("%.1f", s.stmtsPerTx), optional(s.ownStmts, "%.1f"), f("%.0f", s.driverUs), f("%.0f", s.serverUs), f("%.0f", s.totalUs()),
		samp, f("%.2f", s.linesPerNO), f("%.2f", s.rowsPerNO), f("%.0f", s.errors))
}

// report prints the medians, the before/new comparison per mode and the samplers' cost.
func report(sides []side, samples map[string][]sample, rounds int) {
	fmt.Printf("\nmedians of %d rounds (NOPM/TPM: the tool's own count; srv: the server's, over the tool's whole run;\n", rounds)
	fmt.Println("per transaction: per transaction the tool completed (its own count);")
	fmt.Println("statements: pg_stat_statements calls (function bodies not counted), agbench's own count beside (BEGIN/COMMIT included);")
	fmt.Println("CPU: the driver process's and all PostgreSQL processes' user+system time; samp%: the samplers' backends' share of it;")
	fmt.Println("OL/NO: order lines inserted per New-Order; rows: all rows changed per New-Order (pg_stat_user_tables))")
	printRowHeader("")
	for _, sd := range sides {
		ss := samples[sd.name]
		med := func(f func(sample) float64) float64 { return harness.Median(ss, f) }
		m := sample{nopm: med(func(s sample) float64 { return s.nopm }), tpm: med(func(s sample) float64 { return s.tpm }),
			srvNOPM: med(func(s sample) float64 { return s.srvNOPM }), srvTPM: med(func(s sample) float64 { return s.srvTPM }),
			stmtsPerTx: med(func(s sample) float64 { return s.stmtsPerTx }), ownStmts: med(func(s sample) float64 { return s.ownStmts }),
			driverUs: med(func(s sample) float64 { return s.driverUs }), serverUs: med(func(s sample) float64 { return s.serverUs }),
			samplerShare: med(func(s sample) float64 { return s.samplerShare }), linesPerNO: med(func(s sample) float64 { return s.linesPerNO }),
			rowsPerNO: med(func(s sample) float64 { return s.rowsPerNO }), errors: med(func(s sample) float64 { return s.errors })}
		m.samplerCPU = ss[0].samplerCPU // only whether it was measured
		// The median of the sums, not the sum of the medians.
		fmt.Printf(rowFormat, "", sd.name, optional(m.nopm, "%.0f"), fmt.Sprintf("%.0f", m.tpm), fmt.Sprintf("%.0f", m.srvNOPM),
			fmt.Sprintf("%.0f", m.srvTPM), fmt.Sprintf("%.1f", m.stmtsPerTx), optional(m.ownStmts, "%.1f"), fmt.Sprintf("%.0f", m.driverUs),
			fmt.Sprintf("%.0f", m.serverUs), fmt.Sprintf("%.0f", harness.Median(ss, sample.totalUs)), sampled(m),
			fmt.Sprintf("%.2f", m.linesPerNO), fmt.Sprintf("%.2f", m.rowsPerNO), fmt.Sprintf("%.0f", m.errors))
	}
	compare(samples)
	samplersCost(samples)
	if _, ok := samples[goTPC]; ok {
		againstGoTPC(samples)
	}
}

func sampled(m sample) string {
	if m.samplerCPU == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", 100*m.samplerShare)
}

// compare prints, per mode, the before and new binaries' CPU per transaction and the median
// of the per-round ratios before/new (how many times fewer µs), with the equal-work check.
func compare(samples map[string][]sample) {
	fmt.Println("\nCPU per transaction, before against new (×fewer: the median of the per-round ratios before/new;")
	fmt.Println("work: the new binary's rows changed per New-Order over the before binary's, median of the rounds)")
	fmt.Printf("%-10s %10s %10s %10s %10s | %8s %8s %8s | %7s\n", "mode", "before drv", "before srv", "new drv", "new srv",
		"×drv", "×srv", "×total", "work")
	for _, mode := range []struct{ name, before, after string }{{"functions", beforeFunc, newFunc}, {"client", beforeCli, newCli}} {
		bs, ns := samples[mode.before], samples[mode.after]
		gain := func(f func(sample) float64) float64 {
			r, _ := harness.RoundRatio(bs, ns, f)
			return r
		}
		work, _ := harness.RoundRatio(ns, bs, func(s sample) float64 { return s.rowsPerNO })
		total := gain(sample.totalUs)
		fmt.Printf("%-10s %10.0f %10.0f %10.0f %10.0f | %7.2f× %7.2f× %7.2f× | %7.4f\n", mode.name,
			harness.Median(bs, func(s sample) float64 { return s.driverUs }), harness.Median(bs, func(s sample) float64 { return s.serverUs }),
			harness.Median(ns, func(s sample) float64 { return s.driverUs }), harness.Median(ns, func(s sample) float64 { return s.serverUs }),
			gain(func(s sample) float64 { return s.driverUs }), gain(func(s sample) float64 { return s.serverUs }), total, work)
		equal := work >= 1-maxWorkDiff && work <= 1+maxWorkDiff
		fmt.Printf("  target %s: ≥ %.2f× fewer CPU µs per transaction: %s (%.2f×); equal work within %.0f%%: %s\n", mode.name,
			minCPUGain, harness.Met(total >= minCPUGain), total, 100*maxWorkDiff, harness.Met(equal))
	}
}

// samplersCost prints what the samplers cost the new binary in functions mode: the change
// in CPU per transaction against the same binary without them (median of the per-round
// ratios), and their backends' share of the server's CPU.
func samplersCost(samples map[string][]sample) {
	on, off := samples[newFuncSamp], samples[newFunc]
	if len(on) == 0 {
		return
	}
	ratio := func(f func(sample) float64) float64 {
		r, _ := harness.RoundRatio(on, off, f)
		return r
	}
	share := harness.Median(on, func(s sample) float64 { return s.samplerShare })
	fmt.Println("\nthe samplers under tpcc (new binary, functions mode; with/without: median of the per-round ratios)")
	fmt.Printf("  server µs/tx %.0f with, %.0f without: %.3f×; driver µs/tx %.0f with, %.0f without: %.3f×; total %.3f×\n",
		harness.Median(on, func(s sample) float64 { return s.serverUs }), harness.Median(off, func(s sample) float64 { return s.serverUs }),
		ratio(func(s sample) float64 { return s.serverUs }),
		harness.Median(on, func(s sample) float64 { return s.driverUs }), harness.Median(off, func(s sample) float64 { return s.driverUs }),
		ratio(func(s sample) float64 { return s.driverUs }), ratio(sample.totalUs))
	fmt.Printf("  the samplers' backends used %.2f%% of the server's CPU (median; per round %s)\n", 100*share, shares(on))
	fmt.Printf("  target: the samplers' share of server CPU ≤ %.0f%%: %s\n", 100*maxSamplerShare, harness.Met(share <= maxSamplerShare))
}

func shares(ss []sample) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%.2f%%", 100*s.samplerShare)
	}
	return out
}

// againstGoTPC prints the new binary's ratios to go-tpc of the same round.
func againstGoTPC(samples map[string][]sample) {
	fmt.Fprintln(os.Stdout, "\nagainst go-tpc (median of the per-round ratios new/go-tpc)")
	fmt.Printf("%-14s %8s %8s %8s\n", "mode", "×srvNOPM", "×drvCPU", "×srvCPU")
	for _, name := range []string{newFunc, newCli} {
		r := func(f func(sample) float64) float64 {
			v, _ := harness.RoundRatio(samples[name], samples[goTPC], f)
			return v
		}
		fmt.Printf("%-14s %7.2f× %7.2f× %7.2f×\n", name, r(func(s sample) float64 { return s.srvNOPM }),
			r(func(s sample) float64 { return s.driverUs }), r(func(s sample) float64 { return s.serverUs }))
	}
}
