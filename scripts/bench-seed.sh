#!/bin/sh
# The seeding article's experiment (reference/ag-direct-seeding-2016) on this machine: a
# throwaway cluster with a ~1 GB database (SEED_SIZE), seeded by direct and backup-restore,
# none vs lz4 vs zstd, REPEAT rounds interleaved, medians; the machine's load is printed
# before and after because other work on it changes the figures.
set -eu
BIN=${1:-bin/agbench}
SIZE=${SEED_SIZE:-1G}
REPEAT=${REPEAT:-1}
PORT=${SEED_PORT:-6790}
HOME_DIR=$(mktemp -d /var/tmp/agbench-bench-seed.XXXXXX)
chmod 755 "$HOME_DIR"
export AGBENCH_HOME="$HOME_DIR"
trap '"$BIN" cluster destroy --name seedbench >/dev/null 2>&1 || true; rm -rf "$HOME_DIR"' EXIT INT TERM
"$BIN" cluster create --name seedbench --standbys 0 --base-port "$PORT" >/dev/null
"$BIN" seed --cluster seedbench --init-size "$SIZE" --init-only
echo "load before: $(uptime)"
"$BIN" seed --cluster seedbench --repeat "$REPEAT" --results "${RESULTS:-results}" \
	--compare method=direct,backup-restore compress=none,lz4,zstd
echo "load after:  $(uptime)"
"$BIN" seed history --cluster seedbench
