#!/usr/bin/env bash
# make bench-tpcc: agbench tpcc on a throwaway local cluster (a lone primary): build 2 and 10
# warehouses (the 2-warehouse build repeated, median), run 1, 2, 4 VUs in short windows
# (repeated, medians), in functions mode and, at 2 warehouses, in client mode; report build
# time, NOPM, TPM and the client's CPU per transaction beside the figures the team measured
# for HammerDB 4.12 and go-tpc on this kind of machine (neither is installable here).
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

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }

build() { # warehouses -> seconds
	"$BIN" tpcc drop "${target[@]}" >/dev/null
	"$BIN" tpcc build "${target[@]}" --warehouses "$1" 2>/dev/null | tee -a "$out/builds.txt" |
		sed -E 's/^built [0-9]+ warehouses in ([0-9.]+)s.*/\1/'
}

run() { # label, extra args...
	local label=$1
	shift
	"$BIN" tpcc run "${target[@]}" --rampup "$RAMPUP" --duration "$DURATION" --repeat "$REPEAT" \
		--results "$out/$label" "$@" >"$out/$label.txt" 2>/dev/null
	local f
	f=$(ls "$out/$label"/*/result.json)
	# One line per VU count: medians over the repeats of NOPM, TPM, server NOPM/TPM, µs CPU/tx.
	jq -r '.steps | group_by(.vus)[] | [.[0].vus,
		([.[].counters.nopm] | sort | .[length/2|floor]),
		([.[].counters.tpm] | sort | .[length/2|floor]),
		([.[].counters.server_nopm] | sort | .[length/2|floor]),
		([.[].counters.server_tpm] | sort | .[length/2|floor]),
		([.[].client.per_op_us] | sort | .[length/2|floor]),
		([.[].ops.NEWORD.latency.p95] | sort | .[length/2|floor])] | @tsv' "$f" |
		while IFS=$'\t' read -r vus nopm tpm snopm stpm cpu p95; do
			printf "%-22s %4s %9.0f %9.0f %12.0f %11.0f %10.0f %9.1f\n" "$label" "$vus" "$nopm" "$tpm" "$snopm" "$stpm" "$cpu" \
				"$(echo "$p95" | awk '{print $1/1000}')"
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
printf "%-22s %4s %9s %9s %12s %11s %10s %9s\n" "run" "VUs" "NOPM" "TPM" "server NOPM" "server TPM" "µs CPU/tx" "NO p95ms"
run "2wh-functions" --vus 1,2,4 --mode functions
run "2wh-client" --vus 2 --mode client
echo "  HammerDB 4.12, 2 warehouses, 2 VUs: NOPM 29,000 / 25,700, TPM 67,000 / 58,900 (procedures / functions)"
echo "  go-tpc, 2 warehouses, 2 threads: tpmC 14,500"
"$BIN" tpcc check "${target[@]}" | tail -1

if [ "$BIG" -gt 0 ]; then
	echo
	bb=$(build "$BIG")
	echo "build $BIG warehouses: ${bb}s"
	run "${BIG}wh-functions" --vus 1,2,4 --mode functions
fi
