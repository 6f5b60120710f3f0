#!/usr/bin/env bash
# The main job on a fresh machine: a local availability group with two standbys, a write on
# the primary, shown replicated with `cluster status` and read back on each standby, then a
# failover and the cluster removed again.
set -euo pipefail
bin=${1:-bin/agbench}
name=${AGBENCH_DEMO_NAME:-demo}
port=${AGBENCH_DEMO_PORT:-6500}
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

cleanup() { "$bin" cluster destroy --name "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT

say "agbench cluster create --name $name --standbys 2 --commit sync --base-port $port"
"$bin" cluster create --name "$name" --standbys 2 --commit sync --base-port "$port"

say "write on the primary"
eval "$("$bin" cluster env --name "$name")"
psql -q -c "CREATE TABLE demo (id int primary key, at timestamptz default now());
            INSERT INTO demo (id) SELECT generate_series(1, 10000);"
psql -Atc "SELECT 'primary: ' || count(*) || ' rows, in recovery: ' || pg_is_in_recovery() FROM demo"

say "agbench cluster status --name $name"
"$bin" cluster status --name "$name"

say "read it back on each standby"
for node in standby1 standby2; do
  eval "$("$bin" cluster env --name "$name" --node "$node")"
  psql -Atc "SELECT '$node: ' || count(*) || ' rows, in recovery: ' || pg_is_in_recovery() FROM demo"
done

say "agbench cluster failover --name $name"
"$bin" cluster failover --name "$name"

say "agbench cluster destroy --name $name"
"$bin" cluster destroy --name "$name"
trap - EXIT
