package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agbench/agbench/bench/harness"
	"github.com/agbench/agbench/internal/stats"
)

// report prints, per client count and path, the medians, the ratio of the medians to
// direct's and the median of each round's own ratio to direct, then the target's verdict,
// the failed runs and the raw runs.
func report(runs []runResult, failed map[string]int, clients []int, paths []string) {
	fmt.Printf("%-8s %-13s %12s %12s %10s %10s %16s %18s %5s\n", "clients", "path", "TPS (median)", "latency ms", "x direct",
		"per-round", "proxy CPU us/tx", "machine CPU us/tx", "runs")
	perRound := map[string]float64{}
	for _, c := range clients {
		direct := pick(runs, c, "direct")
		d := harness.Median(direct, runResult.TPS)
		for _, p := range paths {
			rs := pick(runs, c, p)
			if len(rs) == 0 {
				fmt.Printf("%-8d %-13s %12s\n", c, p, "no run succeeded")
				continue
			}
			t := harness.Median(rs, runResult.TPS)
			// each round's own ratio to direct (the two ran minutes apart at most), then their median
			var ratios []float64
			for _, r := range rs {
				if i := slices.IndexFunc(direct, func(x runResult) bool { return x.round == r.round }); i >= 0 && direct[i].tps > 0 {
					ratios = append(ratios, r.tps/direct[i].tps)
				}
			}
			q := stats.Median(ratios)
			xDirect := 0.0
			if d > 0 {
				xDirect = t / d
			}
			fmt.Printf("%-8d %-13s %12.0f %12.3f %9.2fx %9.2fx %16.1f %18.1f %5d\n", c, p, t, harness.Median(rs, runResult.Latency),
				xDirect, q, harness.Median(rs, runResult.ProxyCPU), harness.Median(rs, runResult.MachineCPU), len(rs))
			perRound[fmt.Sprintf("%d/%s", c, p)] = q
		}
	}
	verdict(perRound)
	if len(failed) > 0 {
		fmt.Println("runs that failed (no figures; left out of the medians):")
		keys := make([]string, 0, len(failed))
		for k := range failed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Printf("%7d %s failed\n", failed[k], k)
		}
	}
	fmt.Println("x direct: ratio of the medians; per-round: median of each round's ratio to direct in that round")
	fmt.Println("(raw runs: clients path tps latency_ms proxy_cpu_us_per_tx machine_cpu_us_per_tx round)")
	raw := slices.Clone(runs)
	sort.SliceStable(raw, func(i, j int) bool {
		if raw[i].clients != raw[j].clients {
			return raw[i].clients < raw[j].clients
		}
		return raw[i].path < raw[j].path
	})
	for _, r := range raw {
		fmt.Printf("  %d %s %.6f %.3f %.2f %.2f %d\n", r.clients, r.path, r.tps, r.latencyMs, r.proxyUs, r.machineUs, r.round)
	}
}

// verdict prints the target's verdict at each of targetClients that was measured.
func verdict(perRound map[string]float64) {
	if words := verdictWords(perRound); words != "" {
		fmt.Printf("target (agbench >= %.2fx direct per round, ahead of pgbouncer and haproxy) at 8 and 32 clients: %s\n",
			minDirectRatio, words)
	}
}

// verdictWords is "8:met 32:missed" for the client counts of the target that were measured.
func verdictWords(perRound map[string]float64) string {
	var parts []string
	for _, c := range targetClients {
		a, ok := perRound[fmt.Sprintf("%d/agbench", c)]
		if !ok {
			continue
		}
		met := a >= minDirectRatio
		for _, other := range []string{"pgbouncer", "haproxy"} {
			if o, ok := perRound[fmt.Sprintf("%d/%s", c, other)]; ok {
				met = met && a > o
			}
		}
		word := "missed"
		if met {
			word = "met"
		}
		parts = append(parts, fmt.Sprintf("%d:%s", c, word))
	}
	return strings.Join(parts, " ")
}

func pick(runs []runResult, clients int, path string) []runResult {
	var out []runResult
	for _, r := range runs {
		if r.clients == clients && r.path == path {
			out = append(out, r)
		}
	}
	return out
}

func (r runResult) TPS() float64        { return r.tps }
func (r runResult) Latency() float64    { return r.latencyMs }
func (r runResult) ProxyCPU() float64   { return r.proxyUs }
func (r runResult) MachineCPU() float64 { return r.machineUs }
