#!/usr/bin/env bash
# Passes `go test -v` output through and ends with a count of the tests that ran, so a
# reader (and CI) sees which tests ran and how many passed. Fails when any test failed
# or a package did not build.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
tee "$log"
pass=$(grep -cE '^\s*--- PASS' "$log")
fail=$(grep -cE '^\s*--- FAIL' "$log")
skip=$(grep -cE '^\s*--- SKIP' "$log")
pkgfail=$(grep -cE '^(FAIL|---.FAIL|panic:)|\[build failed\]|\[setup failed\]' "$log")
echo
echo "tests: $pass passed, $fail failed, $skip skipped"
if [ "$fail" -gt 0 ] || [ "$pkgfail" -gt 0 ]; then
  grep -E '^\s*--- FAIL|^FAIL|build failed|setup failed' "$log" | sort -u
  exit 1
fi
