#!/usr/bin/env bash
# The main job on a fresh machine, in one command: `agbench run plans/ror-quick.yaml` creates
# a local availability group (a primary, one hot standby, a listener), runs the quick
# read-only-routing study of the articles (SQLQueryStress-style reads, a scan, TPC-C; each
# with routing off vs on, threads/VUs 1..12), prints the tables, writes report.html, and
# removes the cluster again (also when interrupted).
#   AGBENCH_DEMO_PLAN=plans/storage-quick.yaml make demo   # the storage study instead
set -euo pipefail
bin=${1:-bin/agbench}
plan=${AGBENCH_DEMO_PLAN:-plans/ror-quick.yaml}
start=$(date +%s)
"$bin" run "$plan"
took=$(( $(date +%s) - start ))
printf '\ndemo: %s ran in %dm%02ds; open the report.html printed above in any browser (it works offline)\n' \
  "$plan" $((took / 60)) $((took % 60))
