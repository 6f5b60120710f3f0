#!/usr/bin/env bash
# make bench-hosts: read-only routing on modelled hosts (issue 19). Three throwaway local
# clusters of a primary and one standby on this machine, the same in all but the host model:
#   modelled  each node a host of its own: HOSTS_CPUS cores (0.6) with a CPU weight in
#             proportion (--host-cpu-shares auto), HOSTS_MEMORY (128M, page cache included),
#             and reads held to HOSTS_READ_BPS (80M) and HOSTS_READ_IOPS (1000) on the disk
#             that holds the data, in control groups (needs root)
#   kweight   the same with the kernel's default CPU weight (--host-cpu-shares kernel): what
#             the weight does for a host's budget on a busy machine (a quota is a maximum)
#   shared    the nodes share the machine's CPUs, memory, page cache and disk (no budgets):
#             what the budgets' enforcement costs, and routing on one shared host
# All have the routing list (('standby1','primary')): routing on spreads read intent over
# the standby and the primary. On each, agbench stress runs a point select and count(*) on
# a table larger than one node's memory budget (IO-bound on a modelled host: its scans read
# at the host's read budget; synchronize_seqscans is off on every cluster, else concurrent
# scans of one table share one pass over it and a node's scans per second are not held by
# its IO at all), threads 1..12, routing off vs on, interleaved, and count(*) on
# a table that fits in a node's memory (CPU-bound). The summary gives, per query and threads,
# it/s off and on (whole-window rates: operations / window), their ratio, and whether the
# spreads (10th-90th percentile of throughput per second, per 5 s for the IO-bound scan) are
# apart; the target is routing on >= 1.5x off at 8 threads and above on modelled hosts, with
# spreads apart. The load average is printed before and after, and the hosts' CPU use in the
# modelled clusters (cluster status and the samplers' "what saturated").
#
# Knobs (environment): HOSTS_CPUS (0.6), HOSTS_MEMORY (128M), HOSTS_READ_BPS (80M),
# HOSTS_READ_IOPS (1000), HOSTS_ROWS (400000 rows, 208 MB), HOSTS_SMALL_ROWS (50000 rows,
# 26 MB), HOSTS_THREADS (1,4,8,12), HOSTS_DURATION (10s; count(*) on the big table
# runs HOSTS_COUNT_DURATION, 3 times as long: a scan takes seconds), HOSTS_RAMPUP (2s),
# HOSTS_CLUSTERS (modelled kweight shared), HOSTS_QUERIES (point count small), HOSTS_OUT (keep
# the results there).
set -euo pipefail
BIN=${1:-bin/agbench}
CPUS=${HOSTS_CPUS:-0.6}
MEM=${HOSTS_MEMORY:-128M}
RBPS=${HOSTS_READ_BPS:-80M}
RIOPS=${HOSTS_READ_IOPS:-1000}
ROWS=${HOSTS_ROWS:-400000}
SMALL=${HOSTS_SMALL_ROWS:-50000}
THREADS=${HOSTS_THREADS:-1,4,8,12}
CLUSTERS=${HOSTS_CLUSTERS:-modelled kweight shared}
QUERIES=${HOSTS_QUERIES:-point count small}
DURATION=${HOSTS_DURATION:-10s}
RAMPUP=${HOSTS_RAMPUP:-2s}
LIST="(('standby1','primary'))"

home=$(mktemp -d /tmp/agbench-bench-hosts.XXXXXX)
chmod 755 "$home"
export AGBENCH_HOME=$home
out=${HOSTS_OUT:-$home/results}
mkdir -p "$out"
cleanup() {
	for c in $CLUSTERS; do "$BIN" cluster destroy --name "$c" >/dev/null 2>&1 || true; done
	[ -n "${HOSTS_OUT:-}" ] || rm -rf "$home"
}
trap cleanup EXIT

port=$((20000 + RANDOM % 30000))
for c in $CLUSTERS; do
	case $c in
	modelled) model=(--host-cpus "$CPUS" --host-cpu-shares auto --host-memory "$MEM" --host-read-bps "$RBPS" --host-read-iops "$RIOPS") ;;
	kweight) model=(--host-cpus "$CPUS" --host-cpu-shares kernel --host-memory "$MEM" --host-read-bps "$RBPS" --host-read-iops "$RIOPS") ;;
	shared) model=() ;;
	*) echo "HOSTS_CLUSTERS: unknown cluster $c (modelled, kweight, shared)" >&2; exit 2 ;;
	esac
	"$BIN" cluster create --name "$c" --standbys 1 --base-port "$port" --routing-list "$LIST" \
		"${model[@]}" --set shared_buffers=32MB --set synchronize_seqscans=off >/dev/null
	port=$((port + 5))
done

run() { # cluster name duration query extra-args...
	local c=$1 name=$2 d=$3 q=$4
	shift 4
	"$BIN" stress --cluster "$c" --query "$q" "$@" --threads "$THREADS" --duration "$d" \
		--rampup "$RAMPUP" --compare routing=off,on --results "$out/$c-$name" >"$out/$c-$name.txt" 2>&1 || true
}
long=${HOSTS_COUNT_DURATION:-}
[ -n "$long" ] || long=$(python3 -c "import re,sys; m=re.fullmatch(r'([0-9.]+)(ms|s|m)', sys.argv[1]); print(str(float(m[1])*3)+m[2])" "$DURATION")
for c in $CLUSTERS; do
	"$BIN" stress --cluster "$c" --init "$ROWS" --query "SELECT 1" --iterations 1 --sample=false \
		--results "$out/init" >/dev/null
	"$BIN" stress --cluster "$c" --init "$SMALL" --init-table small --query "SELECT 1" --iterations 1 --sample=false \
		--results "$out/init" >/dev/null
	"$BIN" cluster status --name "$c" >"$out/$c-status.txt"
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/load.txt"
for c in $CLUSTERS; do
	echo "$c start: $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"
	for q in $QUERIES; do
		case $q in
		point) run "$c" point "$DURATION" 'SELECT c_balance FROM customer WHERE c_id = $1' --param-range "1:$ROWS" ;;
		count) run "$c" count "$long" 'SELECT count(*) FROM customer' ;;
		small) run "$c" small "$DURATION" 'SELECT count(*) FROM small' ;;
		*) echo "HOSTS_QUERIES: unknown query $q (point, count, small)" >&2; exit 2 ;;
		esac
	done
	"$BIN" cluster status --name "$c" >"$out/$c-status-after.txt" 2>&1 || true
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"

QUERIES=$QUERIES python3 - "$out" $CLUSTERS <<'PY'
import glob, json, os, sys
from datetime import datetime
out, clusters = sys.argv[1], sys.argv[2:]
print("read-only routing, off vs on (it/s over each whole window; spreads: 10th-90th percentile of per-second")
print("throughput, per 5 s for the IO-bound scan; 'apart' when the spreads do not overlap)")
print(open(os.path.join(out, "load.txt")).read().rstrip())

def when(s):
    s = s.rstrip("Z")
    whole, _, frac = s.partition(".")
    return datetime.fromisoformat(whole).timestamp() + (float("0." + frac) if frac else 0)

def secs(w):
    return when(w["end"]) - when(w["start"])

def pctl(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None

def figures(st, bucket):
    n = sum(o.get("count", 0) for o in st.get("ops", {}).values())
    rate = n / secs(st["window"]) if secs(st["window"]) > 0 else None
    v = st.get("throughput", {}).get("*", {}).get("v") or []
    if bucket > 1:
        v = [sum(v[i:i + bucket]) / bucket for i in range(0, len(v) - bucket + 1, bucket)]
    return rate, (pctl(v, 0.1), pctl(v, 0.9))

for name, what, bucket in (("point", "point select on a table larger than a node's memory", 1),
                           ("count", "count(*) on a table larger than a node's memory (IO-bound on a modelled host)", 5),
                           ("small", "count(*) on a table that fits in a node's memory (CPU-bound)", 1)):
    if name not in os.environ.get("QUERIES", name).split():
        continue
    print(f"\n{what}")
    print(f"{'threads':>7}" + "".join(f"  {c + ' off':>13} {'on':>7} {'on/off':>6} {'':>5}" for c in clusters))
    rows, notes = {}, {}
    for c in clusters:
        files = glob.glob(os.path.join(out, f"{c}-{name}", "*", "result.json"))
        if not files:
            notes[c] = ["no result (see " + os.path.join(out, f"{c}-{name}.txt") + ")"]
            continue
        r = json.load(open(files[0]))
        for st in r["steps"]:
            rows.setdefault(st["vus"], {})[(c, st.get("variant", ""))] = figures(st, bucket)
        a = r.get("analysis") or {}
        notes[c] = a.get("differences", []) + [x["code"] + ": " + x["message"] for x in a.get("comparisons", [])]
        for va in a.get("variants", []):
            sat = va["analysis"].get("saturated", {}).get("sentence")
            if sat:
                notes[c].append(f"[{va['variant']}] saturated: {sat}")
    f = lambda x: "–" if x is None else (f"{x:.0f}" if x >= 10 else f"{x:.2f}")
    for t in sorted(rows):
        line = f"{t:>7}"
        for c in clusters:
            off, on = rows[t].get((c, "routing=off")), rows[t].get((c, "routing=on"))
            ratio = apart = "–"
            if off and on and off[0] and on[0]:
                ratio = f"{on[0] / off[0]:.2f}"
                (a1, a2), (b1, b2) = off[1], on[1]
                if None not in (a1, a2, b1, b2):
                    apart = "apart" if (b1 > a2 or a1 > b2) else "overl"
            line += f"  {f(off and off[0]):>13} {f(on and on[0]):>7} {ratio:>6} {apart:>5}"
        print(line)
    for c in clusters:
        for n in notes.get(c, []):
            print(f"  {c}: {n}")
PY
for c in $CLUSTERS; do
	[ "$c" = shared ] && continue
	echo
	echo "$c, after its runs:"
	sed -n '/^hosts:/,$p' "$out/$c-status-after.txt"
done
