#!/usr/bin/env bash
# make bench-tpcc: agbench tpcc on a throwaway local cluster (a lone primary): build 2 and 10
# warehouses (the 2-warehouse build repeated, median), run 1, 2, 4 VUs in short windows
# (repeated, medians), in functions mode and, at 2 warehouses, in client mode; report build
# time, NOPM, TPM and the client's CPU per transaction beside the figures the team measured
# for HammerDB 4.12 and go-tpc on this kind of machine (neither is installable here).
#
# The machine may be shared: besides the measured figures, the table gives the CPU each
# transaction cost the client (agbench) and the server (all PostgreSQL processes, per server
# transaction), and NOPM@2cpu, the NOPM that cost would allow if the run had both cores to
# itself (2 cores / CPU per transaction × the New-Order share): an estimate, not a measurement.
#
# Knobs (environment): TPCC_BENCH_RAMPUP (10s), TPCC_BENCH_DURATION (30s),
# TPCC_BENCH_REPEAT (3), TPCC_BENCH_BIG (10 warehouses; 0 skips the big build).
set -euo pipefail
BIN=${1:-bin/agbench}
RAMPUP=${TPCC_BENCH_RAMPUP:-10s}
DURATION=${TPCC_BENCH_DURATION:-30s}
REPEAT=${TPCC_BENCH_REPEAT:-3}
BIG=${TPCC_BENCH_BIG:-10}
NAME=benchtpcc

home=$(mktemp -d /tmp/agbench-bench-tpcc.XXXXXX)
chmod 755 "$home"
export AGBENCH_HOME=$home
out=$home/out
mkdir -p "$out"
cleanup() {
	"$BIN" cluster destroy --name "$NAME" >/dev/null 2>&1 || true
	rm -rf "$home"
}
trap cleanup EXIT

# Settings for a benchmark rather than a laptop: the data set (~100 MB per warehouse) in
# shared buffers at 2 warehouses, and no forced checkpoint in the middle of a build.
port=$((20000 + RANDOM % 30000))
"$BIN" cluster create --name "$NAME" --standbys 0 --base-port "$port" \
	--set shared_buffers=1GB --set max_wal_size=8GB --set checkpoint_timeout=30min >/dev/null
target=(--cluster "$NAME")
datadir=$(jq -r '.nodes[0].data_dir' "$home/clusters/$NAME/topology.json")
eval "$("$BIN" cluster env --name "$NAME")"

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }

build() { # warehouses -> seconds
	"$BIN" tpcc drop "${target[@]}" >/dev/null
	"$BIN" tpcc build "${target[@]}" --warehouses "$1" 2>/dev/null | tee -a "$out/builds.txt" |
		sed -E 's/^built [0-9]+ warehouses in ([0-9.]+)s.*/\1/'
}

# The server's CPU seconds so far: every backend that exited (the postmaster's reaped
# children) plus the processes still running (the postmaster and its children).
server_cpu() {
	local pm ticks total=0 pid
	pm=$(head -1 "$datadir/postmaster.pid")
	ticks=$(getconf CLK_TCK)
	for pid in "$pm" $(pgrep -P "$pm"); do
		# fields after "(comm)": utime 14, stime 15, cutime 16, cstime 17 (1-based, whole line)
		total=$((total + $(sed -E 's/^[0-9]+ \([^)]*\) //' "/proc/$pid/stat" 2>/dev/null |
			awk -v self="$([ "$pid" = "$pm" ] && echo 1 || echo 0)" '{s = $12 + $13; if (self) s += $14 + $15; print s}' || echo 0)))
	done
	awk -v t="$total" -v hz="$ticks" 'BEGIN {printf "%.3f\n", t / hz}'
}

server_xacts() {
	psql -XAtc "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
}

run() { # label, vus, extra args...
	local label=$1 vus=$2
	shift 2
	local cpu0 x0 cpu1 x1 f
	cpu0=$(server_cpu)
	x0=$(server_xacts)
	"$BIN" tpcc run "${target[@]}" --rampup "$RAMPUP" --duration "$DURATION" --repeat "$REPEAT" --vus "$vus" \
		--results "$out/$label-$vus" "$@" >"$out/$label-$vus.txt" 2>/dev/null
	cpu1=$(server_cpu)
	x1=$(server_xacts)
	f=$(ls "$out/$label-$vus"/*/result.json)
	# Medians over the repeats of NOPM, TPM, server NOPM/TPM, client µs CPU/tx, NEWORD p95;
	# server µs CPU per server transaction over the whole command (ramp-ups included).
	jq -r '.steps | [
		([.[].counters.nopm] | sort | .[length/2|floor]),
		([.[].counters.tpm] | sort | .[length/2|floor]),
		([.[].counters.server_nopm] | sort | .[length/2|floor]),
		([.[].counters.server_tpm] | sort | .[length/2|floor]),
		([.[].client.per_op_us] | sort | .[length/2|floor]),
		([.[].ops.NEWORD.latency.p95] | sort | .[length/2|floor])] | @tsv' "$f" |
		while IFS=$'\t' read -r nopm tpm snopm stpm cpu p95; do
			awk -v l="$label" -v v="$vus" -v nopm="$nopm" -v tpm="$tpm" -v snopm="$snopm" -v stpm="$stpm" -v cpu="$cpu" \
				-v p95="$p95" -v scpu="$(awk -v a="$cpu0" -v b="$cpu1" -v x="$x0" -v y="$x1" 'BEGIN {print (b - a) * 1e6 / (y - x)}')" \
				'BEGIN {printf "%-16s %4s %8.0f %8.0f %8.0f %8.0f %9.1f %9.0f %9.0f %9.0f\n", l, v, nopm, tpm, snopm, stpm, p95 / 1000, cpu, scpu,
					nopm / tpm * 2 * 60e6 / (cpu + scpu)}'
		done
}

echo "agbench tpcc bench · $(nproc) cores · load average $(cut -d' ' -f1-3 /proc/loadavg) · $(date -u +%FT%TZ)"
echo "server: PostgreSQL $("$BIN" cluster status --name "$NAME" | head -1 | sed -E 's/.*PostgreSQL ([0-9.]+).*/\1/'), shared_buffers=1GB, max_wal_size=8GB, fsync on, lone primary"
echo
builds=()
for i in $(seq "$REPEAT"); do
	builds+=("$(build 2)")
done
b2=$(printf '%s\n' "${builds[@]}" | median)
echo "build 2 warehouses:  median ${b2}s (runs: ${builds[*]}s)"
echo "  HammerDB 4.12 (same machine kind): 41.8s procedures / 57.4s functions; go-tpc 127s"
awk -v b="$b2" 'BEGIN {printf "  agbench is %.1fx faster than HammerDB'"'"'s best build (target 2x)\n", 41.8 / b}'
echo
header() {
	printf "%-16s %4s %8s %8s %8s %8s %9s %9s %9s %9s\n" "run" "VUs" "NOPM" "TPM" "srvNOPM" "srvTPM" "NO p95ms" \
		"cli µs/tx" "srv µs/tx" "NOPM@2cpu"
}
header
for v in 1 2 4; do run "2wh-functions" "$v" --mode functions; done
run "2wh-client" 2 --mode client
echo "  HammerDB 4.12, 2 warehouses, 2 VUs: NOPM 29,000 / 25,700, TPM 67,000 / 58,900 (procedures / functions)"
echo "  go-tpc, 2 warehouses, 2 threads: tpmC 14,500"
"$BIN" tpcc check "${target[@]}" | tail -1

if [ "$BIG" -gt 0 ]; then
	echo
	bb=$(build "$BIG")
	echo "build $BIG warehouses: ${bb}s"
	header
	for v in 1 2 4; do run "${BIG}wh-functions" "$v" --mode functions; done
fi
