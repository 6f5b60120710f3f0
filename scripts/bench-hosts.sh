#!/usr/bin/env bash
# make bench-hosts: read-only routing on modelled hosts (issue 19). Two throwaway local
# clusters of a primary and one standby on this machine, the same in all but one thing:
#   modelled  each node a host of its own: HOSTS_CPUS cores (0.6) and HOSTS_MEMORY (256M,
#             page cache included), in control groups (needs root)
#   shared    the nodes share the machine's CPUs, memory and page cache (no budgets)
# Both have the routing list (('standby1','primary')): routing on spreads read intent over
# the standby and the primary. On each, agbench stress runs a point select and count(*) on
# a table larger than one node's memory budget, threads 1..12, routing off vs on,
# interleaved, and count(*) on a table that fits in a node's memory (CPU-bound: where the
# CPU budgets are what gives). The summary gives, per query and threads, it/s off and on, their ratio, and
# whether the spreads (10th-90th percentile of per-second throughput) are apart; the target
# is routing on >= 1.5x off at 8 threads and above on modelled hosts, with spreads apart.
# The shared cluster's figures beside them show what the budgets themselves cost.
#
# Knobs (environment): HOSTS_CPUS (0.6), HOSTS_MEMORY (256M), HOSTS_ROWS (500000 rows,
# about 420 MB), HOSTS_SMALL_ROWS (50000 rows, about 42 MB), HOSTS_THREADS (1,2,4,8,12),
# HOSTS_DURATION (10s; count(*) on the big table runs 4 times as long: a scan takes seconds),
# HOSTS_RAMPUP (2s).
set -euo pipefail
BIN=${1:-bin/agbench}
CPUS=${HOSTS_CPUS:-0.6}
MEM=${HOSTS_MEMORY:-256M}
ROWS=${HOSTS_ROWS:-500000}
SMALL=${HOSTS_SMALL_ROWS:-50000}
THREADS=${HOSTS_THREADS:-1,2,4,8,12}
DURATION=${HOSTS_DURATION:-10s}
RAMPUP=${HOSTS_RAMPUP:-2s}
LIST="(('standby1','primary'))"

home=$(mktemp -d /tmp/agbench-bench-hosts.XXXXXX)
chmod 755 "$home"
export AGBENCH_HOME=$home
out=${HOSTS_OUT:-$home/results}
mkdir -p "$out"
cleanup() {
	for c in modelled shared; do "$BIN" cluster destroy --name "$c" >/dev/null 2>&1 || true; done
	[ -n "${HOSTS_OUT:-}" ] || rm -rf "$home"
}
trap cleanup EXIT

port=$((20000 + RANDOM % 30000))
"$BIN" cluster create --name modelled --standbys 1 --base-port "$port" --routing-list "$LIST" \
	--host-cpus "$CPUS" --host-memory "$MEM" --set shared_buffers=32MB >/dev/null
"$BIN" cluster create --name shared --standbys 1 --base-port $((port + 5)) --routing-list "$LIST" \
	--set shared_buffers=32MB >/dev/null

run() { # cluster name duration query extra-args...
	local c=$1 name=$2 d=$3 q=$4
	shift 4
	"$BIN" stress --cluster "$c" --query "$q" "$@" --threads "$THREADS" --duration "$d" \
		--rampup "$RAMPUP" --compare routing=off,on --results "$out/$c-$name" >"$out/$c-$name.txt" 2>&1 || true
}
long=$(python3 -c "import re,sys; m=re.fullmatch(r'([0-9.]+)(ms|s|m)', sys.argv[1]); print(str(float(m[1])*4)+m[2])" "$DURATION")
for c in modelled shared; do
	"$BIN" stress --cluster "$c" --init "$ROWS" --query "SELECT 1" --iterations 1 --sample=false \
		--results "$out/init" >/dev/null
	"$BIN" stress --cluster "$c" --init "$SMALL" --init-table small --query "SELECT 1" --iterations 1 --sample=false \
		--results "$out/init" >/dev/null
	"$BIN" cluster status --name "$c" >"$out/$c-status.txt"
done
for c in modelled shared; do
	run "$c" point "$DURATION" 'SELECT c_balance FROM customer WHERE c_id = $1' --param-range "1:$ROWS"
	run "$c" count "$long" 'SELECT count(*) FROM customer'
	run "$c" small "$DURATION" 'SELECT count(*) FROM small'
done

python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
print("read-only routing, off vs on, on modelled hosts and on one shared host (it/s, medians of per-second throughput)")
for name, what in (("point", "point select on a table larger than a node's memory"),
                   ("count", "count(*) on a table larger than a node's memory"),
                   ("small", "count(*) on a table that fits in a node's memory (CPU-bound)")):
    print(f"\n{what}")
    print(f"{'threads':>7}  {'modelled off':>12} {'on':>8} {'on/off':>6}  {'shared off':>10} {'on':>8} {'on/off':>6}")
    rows, notes = {}, {}
    for c in ("modelled", "shared"):
        files = glob.glob(os.path.join(out, f"{c}-{name}", "*", "result.json"))
        if not files:
            notes[c] = ["no result (see " + os.path.join(out, f"{c}-{name}.txt") + ")"]
            continue
        r = json.load(open(files[0]))
        for st in r["steps"]:
            v = st.get("variant", "")
            ts = st.get("throughput", {}).get("*", {}).get("v") or []
            s = sorted(ts)
            med = s[len(s) // 2] if s else None
            rows.setdefault(st["vus"], {})[(c, v)] = med
        a = r.get("analysis") or {}
        notes[c] = a.get("differences", []) + [x["code"] + ": " + x["message"] for x in a.get("comparisons", [])]
        for va in a.get("variants", []):
            sat = va["analysis"].get("saturated", {}).get("sentence")
            if sat:
                notes[c].append(f"[{va['variant']}] saturated: {sat}")
    def f(x):
        return "–" if x is None else f"{x:.0f}"
    for t in sorted(rows):
        cells = []
        for c in ("modelled", "shared"):
            off, on = rows[t].get((c, "routing=off")), rows[t].get((c, "routing=on"))
            ratio = f"{on / off:.2f}" if off and on else "–"
            cells.append((f(off), f(on), ratio))
        (a1, a2, a3), (b1, b2, b3) = cells
        print(f"{t:>7}  {a1:>12} {a2:>8} {a3:>6}  {b1:>10} {b2:>8} {b3:>6}")
    for c in ("modelled", "shared"):
        for n in notes.get(c, []):
            print(f"  {c}: {n}")
PY
echo
sed -n '/^hosts:/,$p' "$out/modelled-status.txt"
