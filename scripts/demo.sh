#!/usr/bin/env bash
# The main job on a fresh machine, in one command. As root (control groups), `make demo`
# runs the quick read-only-routing study of the articles twice on this machine:
#   plans/ror-hosts.yaml  on modelled hosts: the primary and the standby each a host of its
#                         own (0.6 of a core with a CPU weight to get it, 512 MiB, reads of
#                         40 MiB/s and 1000 IOPS), routing list (('standby1','primary'))
#   plans/ror-quick.yaml  the same study with the nodes sharing the machine (no budgets)
# Each creates its local availability group, runs SQLQueryStress-style reads, a scan and
# TPC-C with routing off vs on, prints its tables and removes its cluster (also when
# interrupted); one report.html then shows both studies side by side. Without root the
# modelled-host study cannot run, and the demo says so and runs the shared study alone.
#   AGBENCH_DEMO_PLAN=plans/storage-quick.yaml make demo   # one other study instead
set -euo pipefail
bin=${1:-bin/agbench}
start=$(date +%s)
plans=()
if [ -n "${AGBENCH_DEMO_PLAN:-}" ]; then
	plans=("$AGBENCH_DEMO_PLAN")
elif [ "$(id -u)" = 0 ]; then
	plans=(plans/ror-hosts.yaml plans/ror-quick.yaml)
else
	echo "demo: not root, so no modelled hosts (control groups): running plans/ror-quick.yaml on one shared machine;"
	echo "      its routing comparison can move work but not add capacity (see the shared-host verdict)"
	plans=(plans/ror-quick.yaml)
fi
dirs=()
notes=""
for plan in "${plans[@]}"; do
	log=$(mktemp)
	status=0
	"$bin" run "$plan" | tee "$log" || status=$?
	dirs+=("$(sed -n 's/^== results: //p' "$log" | head -1)")
	# The closing note: each experiment's routing headline, and the shared-host verdict.
	notes+=$'\n'"$plan ($(sed -n 's/^== study [^:]*: [0-9]* experiment(s) against //p' "$log" | head -1)):"$'\n'
	notes+=$(awk '/^[a-z][a-z ]*: throughput and latency per / {name=$0; sub(/: throughput.*/, "", name)}
		/^  routing=on vs routing=off:/ {sub(/^  /, ""); print "  " name ": " $0}' "$log")
	if grep -q '^! shared-host:' "$log"; then
		notes+=$'\n'"  ! shared-host: the nodes share this machine without budgets: routing can move work but not add capacity here"
	fi
	notes+=$'\n'
	rm -f "$log"
	[ "$status" = 0 ] || exit "$status"
done
if [ "${#dirs[@]}" -gt 1 ]; then
	out=$(dirname "${dirs[0]}")/ror-hosts-vs-shared.html
	printf '\n== one report of both studies (modelled hosts beside one shared host)\n'
	"$bin" report "${dirs[@]}" -o "$out" | tail -1
fi
printf '\n== routing off vs on, study by study%s' "$notes"
took=$(( $(date +%s) - start ))
printf '\ndemo: %s ran in %dm%02ds; open the report.html printed above in any browser (it works offline)\n' \
	"${plans[*]}" $((took / 60)) $((took % 60))
