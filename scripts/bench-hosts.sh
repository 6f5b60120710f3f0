#!/usr/bin/env bash
# make bench-hosts: read-only routing on modelled hosts, and what the budgets cost.
# A throwaway local cluster of a primary and one standby on this machine, each node a host of
# its own: HOSTS_CPUS cores (0.6) with a CPU weight in proportion (--host-cpu-shares auto),
# HOSTS_MEMORY (128M, page cache included), reads held to HOSTS_READ_BPS (200M) and
# HOSTS_READ_IOPS (2500) on the disk that holds the data, in control groups (needs root);
# routing list (('standby1','primary')): routing on spreads read intent over the standby and
# the primary. The same cluster is measured in two states, one after the other in every round:
#   on      the budgets enforced
#   lifted  the budgets lifted (agbench cluster hosts --budgets off): each node still in its
#           group, which only counts, on every CPU without limits: the same cluster, data and
#           counting, so that on vs lifted is what the budgets themselves cost
# Optional further clusters (HOSTS_CLUSTERS): kweight, the modelled cluster with the kernel's
# default CPU weight (--host-cpu-shares kernel), and shared, a cluster without control groups.
# Queries (agbench stress, --compare routing=off,on, interleaved): point, a point select on a
# table larger than a node's memory budget (IO-bound on a modelled host); count, count(*) on
# it (IO-bound: each host reads at its read budget; synchronize_seqscans is off, else
# concurrent scans share one pass and a node's scans per second are not held by its IO);
# small, count(*) on a table that fits in a node's memory (CPU-bound). Every round runs every
# query in every state; a figure is the median over the rounds of its whole-window rate
# (operations / window), its spread the lowest to highest round ("apart" when the spreads of
# routing off and on do not overlap; 3 rounds or more). The target: routing on >= 1.5x off at
# 8 threads and above with budgets on, spreads apart. Beside it: routing's cost at 1 thread,
# and the budgets' cost: it/s and the nodes' CPU per operation (their groups' CPU time over
# the window / operations) with budgets on vs lifted. Before each state's queries both nodes
# read both tables once, so that a state does not start with the cache the other left. The
# load average is printed per round. The results stay in HOSTS_OUT (default: a new folder
# /tmp/agbench-bench-hosts-results.*, named at the end).
#
# Knobs (environment): HOSTS_CPUS (0.6), HOSTS_MEMORY (128M), HOSTS_READ_BPS (200M),
# HOSTS_READ_IOPS (2500), HOSTS_ROWS (400000 rows, 208 MB), HOSTS_SMALL_ROWS (50000 rows,
# 26 MB), HOSTS_THREADS (1,8,12), HOSTS_DURATION (10s), HOSTS_COUNT_DURATION (45s: a scan
# takes seconds), HOSTS_RAMPUP (2s), HOSTS_ROUNDS (3), HOSTS_CLUSTERS (modelled; also
# kweight, shared), HOSTS_STATES (on lifted), HOSTS_QUERIES (point count small), HOSTS_OUT.
set -euo pipefail
BIN=${1:-bin/agbench}
CPUS=${HOSTS_CPUS:-0.6}
MEM=${HOSTS_MEMORY:-128M}
RBPS=${HOSTS_READ_BPS:-200M}
RIOPS=${HOSTS_READ_IOPS:-2500}
ROWS=${HOSTS_ROWS:-400000}
SMALL=${HOSTS_SMALL_ROWS:-50000}
THREADS=${HOSTS_THREADS:-1,8,12}
CLUSTERS=${HOSTS_CLUSTERS:-modelled}
STATES=${HOSTS_STATES:-on lifted}
QUERIES=${HOSTS_QUERIES:-point count small}
DURATION=${HOSTS_DURATION:-10s}
LONG=${HOSTS_COUNT_DURATION:-45s}
RAMPUP=${HOSTS_RAMPUP:-2s}
ROUNDS=${HOSTS_ROUNDS:-3}
LIST="(('standby1','primary'))"

for q in $QUERIES; do
	case $q in point | count | small) ;; *) echo "HOSTS_QUERIES: unknown query $q (point, count, small)" >&2; exit 2 ;; esac
done
for s in $STATES; do
	case $s in on | lifted) ;; *) echo "HOSTS_STATES: unknown state $s (on, lifted)" >&2; exit 2 ;; esac
done
for c in $CLUSTERS; do
	case $c in modelled | kweight | shared) ;; *) echo "HOSTS_CLUSTERS: unknown cluster $c (modelled, kweight, shared)" >&2; exit 2 ;; esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "HOSTS_ROUNDS: want a whole number above 0, not $ROUNDS" >&2; exit 2; }

home=$(mktemp -d /tmp/agbench-bench-hosts.XXXXXX)
chmod 755 "$home"
export AGBENCH_HOME=$home
out=${HOSTS_OUT:-$(mktemp -d /tmp/agbench-bench-hosts-results.XXXXXX)}
mkdir -p "$out"
cleanup() {
	for c in $CLUSTERS; do "$BIN" cluster destroy --name "$c" >/dev/null 2>&1 || true; done
	rm -rf "$home"
}
trap cleanup EXIT

port=$((20000 + RANDOM % 30000))
for c in $CLUSTERS; do
	case $c in
	modelled) model=(--host-cpus "$CPUS" --host-cpu-shares auto --host-memory "$MEM" --host-read-bps "$RBPS" --host-read-iops "$RIOPS") ;;
	kweight) model=(--host-cpus "$CPUS" --host-cpu-shares kernel --host-memory "$MEM" --host-read-bps "$RBPS" --host-read-iops "$RIOPS") ;;
	shared) model=() ;;
	esac
	"$BIN" cluster create --name "$c" --standbys 1 --base-port "$port" --routing-list "$LIST" \
		"${model[@]}" --set shared_buffers=32MB --set synchronize_seqscans=off >/dev/null
	port=$((port + 5))
	"$BIN" stress --cluster "$c" --init "$ROWS" --query "SELECT 1" --iterations 1 --sample=false --results "$out/init" >/dev/null
	"$BIN" stress --cluster "$c" --init "$SMALL" --init-table small --query "SELECT 1" --iterations 1 --sample=false --results "$out/init" >/dev/null
	"$BIN" cluster status --name "$c" >"$out/$c-status.txt"
done

states() { # the states a cluster is measured in
	if [ "$1" = shared ]; then echo none; else echo "$STATES"; fi
}
run() { # cluster state round query
	local c=$1 s=$2 r=$3 q=$4 d=$DURATION args
	case $q in
	point) args=(--query 'SELECT c_balance FROM customer WHERE c_id = $1' --param-range "1:$ROWS") ;;
	count) args=(--query 'SELECT count(*) FROM customer') d=$LONG ;;
	small) args=(--query 'SELECT count(*) FROM small') ;;
	esac
	"$BIN" stress --cluster "$c" "${args[@]}" --threads "$THREADS" --duration "$d" --rampup "$RAMPUP" \
		--compare routing=off,on --results "$out/$c-$s-$q-r$r" >"$out/$c-$s-$q-r$r.txt" 2>&1 || true
}
warm() { # each node reads both tables once, so that no state starts with a cache the last one left
	local c=$1 n
	for n in primary standby1; do
		(eval "$("$BIN" cluster env --name "$c" --node "$n")" && psql -qAt -c 'SELECT count(*) FROM customer' -c 'SELECT count(*) FROM small') >/dev/null
	done
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/load.txt"
for r in $(seq 1 "$ROUNDS"); do
	for c in $CLUSTERS; do
		for s in $(states "$c"); do
			case $s in on) "$BIN" cluster hosts --name "$c" --budgets on >/dev/null ;; lifted) "$BIN" cluster hosts --name "$c" --budgets off >/dev/null ;; esac
			warm "$c"
			echo "round $r, $c ($s): $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"
			for q in $QUERIES; do run "$c" "$s" "$r" "$q"; done
			"$BIN" cluster status --name "$c" >"$out/$c-$s-status-r$r.txt" 2>&1 || true
		done
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"

QUERIES=$QUERIES python3 scripts/bench-hosts-summary.py "$out" $(for c in $CLUSTERS; do for s in $(states "$c"); do echo "$c:$s"; done; done)
for c in $CLUSTERS; do
	[ "$c" = shared ] && continue
	echo
	echo "$c, budgets on, after its last round:"
	sed -n '/^hosts:/,$p' "$out/$c-on-status-r$ROUNDS.txt" 2>/dev/null || true
done
echo
echo "results: $out"
