#!/usr/bin/env bash
# make bench-tpcc: agbench tpcc (--mode functions and --mode client) against go-tpc on one
# PostgreSQL server that the bench starts itself (a throwaway lone primary on a loopback
# port), interleaved, 3 rounds, medians and the median of the per-round ratios
# (scripts/benchtpcc does the measuring; see docs/tpcc.md).
#
# go-tpc is built from its source, fetched from the Go module proxy with go's own client into
# a cache folder (once; later runs reuse the binary). The proxy's checksum database does not
# list go-tpc v1.0.9, so its module zip is checked against the hash pinned below instead.
#
# Knobs (environment): TPCC_BENCH_ROUNDS (3), TPCC_BENCH_SECS (60 s per run),
# TPCC_BENCH_WAREHOUSES (2), TPCC_BENCH_VUS (2), TPCC_BENCH_COMMIT (on,off: the synchronous_commit
# settings measured in turn on the same server and data), TPCC_BENCH_SET (more server settings,
# space-separated key=value), AGBENCH_CACHE (the cache folder).
set -euo pipefail
BIN=${1:-bin/agbench}
GOTPC_VERSION=v1.0.9
GOTPC_SUM=h1:DeFrlVnNzC+SxiRIihNhD9fWHnHhMZWDSFNfUVq67Ys=
cache=${AGBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agbench}/go-tpc-$GOTPC_VERSION
gotpc=$cache/go-tpc

if [ ! -x "$gotpc" ]; then
	echo "building go-tpc $GOTPC_VERSION from its source (Go module proxy) into $cache" >&2
	mkdir -p "$cache"
	json=$(GOMODCACHE=$cache/mod GOFLAGS=-mod=mod GOSUMDB=off go mod download -json "github.com/pingcap/go-tpc@$GOTPC_VERSION")
	sum=$(jq -r .Sum <<<"$json")
	dir=$(jq -r .Dir <<<"$json")
	if [ "$sum" != "$GOTPC_SUM" ]; then
		echo "go-tpc $GOTPC_VERSION: module hash $sum, want $GOTPC_SUM: not built" >&2
		exit 1
	fi
	(cd "$dir" && GOMODCACHE=$cache/mod GOFLAGS=-mod=mod GOSUMDB=off go build -o "$gotpc.tmp" ./cmd/go-tpc)
	mv "$gotpc.tmp" "$gotpc"
fi

sets=()
for kv in ${TPCC_BENCH_SET:-}; do
	sets+=(-set "$kv")
done
exec go run ./scripts/benchtpcc -agbench "$BIN" -gotpc "$gotpc" -rounds "${TPCC_BENCH_ROUNDS:-3}" \
	-secs "${TPCC_BENCH_SECS:-60}" -warehouses "${TPCC_BENCH_WAREHOUSES:-2}" -vus "${TPCC_BENCH_VUS:-2}" \
	-commit "${TPCC_BENCH_COMMIT:-on,off}" "${sets[@]}"
