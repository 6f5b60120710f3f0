#!/usr/bin/env bash
# Issue 17's bullets, run by hand against a cluster built WITHOUT agbench's cluster code,
# as the issue's reporter built it: PostgreSQL 15, initdb with SCRAM, a superuser `admin`
# and an ordinary login `app` (no pg_monitor) owning database `app`, two standbys made by
# `pg_basebackup -R -X stream`, no cluster_name, everything on 127.0.0.1 (ports >= 21000).
#
#   scripts/issue17-before-after.sh BINARY [BULLET...]     (all bullets, 1..12, by default)
#
# Run as root (the servers run as the `postgres` OS user through runuser). Each bullet prints
# the command lines as a user would type them ("agbench" standing for BINARY), their output
# (long outputs cut to their head and tail) and their exit status. The cluster is built when
# a bullet needs it and built afresh after a bullet that failed it over or stopped a node;
# everything is stopped and removed at the end (also on Ctrl-C).
set -u
[ -n "${TRACE:-}" ] && { PS4='+ $(date +%T) '; set -x; }

BIN=${1:?usage: $0 BINARY [BULLET...]}
BIN=$(readlink -f "$BIN")
shift
BULLETS=("$@")
[ ${#BULLETS[@]} -eq 0 ] && BULLETS=(1 2 3 4 5 6 7 8 9 10 11 12)

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
ADMINPW=adminpw
APPPW=apppw
MAXLINES=${MAXLINES:-45}

unset PGHOST PGPORT PGUSER PGDATABASE PGPASSWORD PGSERVICE PGOPTIONS
export PGCONNECT_TIMEOUT=5

WORK=$(mktemp -d /tmp/issue17.XXXXXX)
chmod 755 "$WORK"
RES=$WORK/results
mkdir -p "$RES"
BGPIDS=()

agbench() { "$BIN" "$@"; }
pg() { runuser -u postgres -- "$@"; }

say() { printf '%s\n' "$*"; }
hdr() { printf "\n==================== bullet %s: %s\n" "$1" "$2"; printf "(%s)\n" "$(date +%T)" >&2; }

# run CMD: print the command line, run it (eval, so quotes work as typed), print its output
# (cut to MAXLINES: head and tail) and its exit status. The status is left in $RC.
run() {
	local cmd=$1 out=$WORK/out.$$ n
	printf '$ %s\n' "$cmd"
	eval "$cmd" >"$out" 2>&1
	RC=$?
	# drop progress-bar redraws, keep the last state of a line
	sed -i 's/.*\r//' "$out"
	n=$(wc -l <"$out")
	if [ "$n" -le "$MAXLINES" ]; then
		sed 's/^/  | /' "$out"
	else
		head -n $((MAXLINES - 15)) "$out" | sed 's/^/  | /'
		printf '  | … (%d lines cut)\n' $((n - MAXLINES + 0))
		tail -n 15 "$out" | sed 's/^/  | /'
	fi
	printf '  -> exit status %d\n' "$RC"
	rm -f "$out"
}

freeport() {
	python3 - "$@" <<'EOF'
import random, socket, sys
taken = set(int(a) for a in sys.argv[1:])
for _ in range(2000):
    p = random.randint(21000, 29999)
    if p in taken:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
EOF
}

waitport() { # port [seconds]
	local i
	for i in $(seq 1 $((${2:-10} * 10))); do
		(exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

url() { printf 'postgres://%s:%s@127.0.0.1:%s/app' "${2:-app}" "$([ "${2:-app}" = admin ] && echo $ADMINPW || echo $APPPW)" "$1"; }

# sql PORT SQL...: run SQL as admin on a node (database app)
sql() { local p=$1; shift; PGPASSWORD=$ADMINPW psql -X -q -A -t -h 127.0.0.1 -p "$p" -U admin -d app -c "$*"; }

CL=""       # the cluster's folder
DIRTY=1     # the cluster must be (re)built before the next bullet
P=0 S1=0 S2=0

pgctl() { pg "$PGBIN/pg_ctl" "$@"; }

stop_cluster() {
	[ -n "$CL" ] || return 0
	local n
	for n in primary standby1 standby2; do
		[ -f "$CL/$n/postmaster.pid" ] && pgctl -D "$CL/$n" stop -m immediate -w >/dev/null 2>&1
	done
	rm -rf "$CL"
	CL=""
}

build_cluster() {
	stop_cluster
	CL=$WORK/cluster.$RANDOM
	mkdir -p "$CL" && chown postgres "$CL"
	P=$(freeport); S1=$(freeport "$P"); S2=$(freeport "$P" "$S1")
	echo "$ADMINPW" >"$CL/pw" && chown postgres "$CL/pw"
	pg "$PGBIN/initdb" -D "$CL/primary" -U admin --auth=scram-sha-256 --pwfile="$CL/pw" >"$CL/initdb.log" 2>&1 || { cat "$CL/initdb.log"; return 1; }
	cat >>"$CL/primary/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $P
unix_socket_directories = '$CL'
shared_buffers = 64MB
max_connections = 60
EOF
	pgctl -D "$CL/primary" -l "$CL/primary.log" -w start >/dev/null || return 1
	PGPASSWORD=$ADMINPW psql -X -q -h 127.0.0.1 -p "$P" -U admin -d postgres \
		-c "CREATE ROLE app LOGIN PASSWORD '$APPPW'" -c "CREATE DATABASE app OWNER app" || return 1
	local n port
	for n in standby1 standby2; do
		port=$S1; [ $n = standby2 ] && port=$S2
		pg "$PGBIN/pg_basebackup" -d "host=127.0.0.1 port=$P user=admin password=$ADMINPW" -D "$CL/$n" -R -X stream -c fast >"$CL/$n.bb.log" 2>&1 || { cat "$CL/$n.bb.log"; return 1; }
		echo "port = $port" >>"$CL/$n/postgresql.conf"
		pgctl -D "$CL/$n" -l "$CL/$n.log" -w start >/dev/null || return 1
	done
	DIRTY=0
	say "(cluster: primary 127.0.0.1:$P, standby1 127.0.0.1:$S1, standby2 127.0.0.1:$S2; superuser admin, login app without pg_monitor)"
}

ensure_cluster() {
	if [ "$DIRTY" = 1 ] || [ -z "$CL" ]; then
		build_cluster || { say "cluster build failed"; exit 1; }
	fi
}

start_listener() { # LOGFILE ARGS... : start `agbench listener ARGS` in the background, print its command
	local log=$1; shift
	local a line="agbench listener"
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./:=@,+-]+$ ]]; then line+=" $a"
		elif [[ $a != *\"* ]]; then line+=" \"$a\""
		else line+=" '$a'"; fi
	done
	printf '$ %s &\n' "$line"
	"$BIN" listener "$@" >"$log" 2>&1 &
	LPID=$!
	BGPIDS+=("$LPID")
}
stop_listener() {
	[ -n "${LPID:-}" ] && kill "$LPID" 2>/dev/null && wait "$LPID" 2>/dev/null
	LPID=""
}
show_log() { # FILE [grep]: the listener's log, cut
	say "  listener's log:"
	if [ -n "${2:-}" ]; then grep -E "$2" "$1"; else cat "$1"; fi | head -n 25 | sed 's/^/  | /'
}

latest() { ls -td "$1"/*/ 2>/dev/null | head -n 1; }

# what admin made in database app, granted to app (every schema but the system's)
grant_app() {
	local n
	for n in $(sql "$P" "select nspname from pg_namespace where nspname !~ '^pg_' and nspname <> 'information_schema'"); do
		sql "$P" "GRANT ALL ON SCHEMA $n TO app; GRANT ALL ON ALL TABLES IN SCHEMA $n TO app; GRANT ALL ON ALL SEQUENCES IN SCHEMA $n TO app; GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA $n TO app" >/dev/null
	done
}

# tpcc's tables for bullets that need them: built by app if this binary can, else by admin
# (then granted to app)
tpcc_prebuild() {
	local out
	if out=$("$BIN" tpcc build --primary "$(url $P)" --warehouses 1 2>&1); then
		say "(tpcc built with 1 warehouse by the app login)"
	else
		say "(tpcc build by the app login failed here: $(printf '%s' "$out" | tail -n 1); built by admin and granted to app)"
		"$BIN" tpcc build --primary "$(url $P admin)" --warehouses 1 >/dev/null 2>&1
		grant_app
	fi
	sleep 1 # the standbys replay it
}

cleanup() {
	local p
	for p in "${BGPIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	stop_cluster
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --------------------------------------------------------------------------------------------

b1() {
	hdr 1 "--primary pointing at a standby"
	ensure_cluster
	tpcc_prebuild
	run "agbench stress --primary $(url $S1) -q 'SELECT 1' --iterations 10 --results $RES/b1"
	run "agbench tpcc run --primary $(url $S1) --duration 2s --rampup 0s --results $RES/b1"
	run "agbench tpcc build --primary $(url $S1)"
}

b2() {
	hdr 2 "-d nosuchdb with a connection string"
	ensure_cluster
	run "agbench stress --primary $(url $P) -d nosuchdb -q 'SELECT 1' --iterations 10 --results $RES/b2"
	local r; r=$(latest "$RES/b2")
	[ -n "$r" ] && say "  result written: ${r#$RES/}" || say "  no result written"
}

b3() {
	hdr 3 "NAME=URL for the workloads"
	ensure_cluster
	run "agbench stress --primary east=$(url $P) --standby west=$(url $S1) --intent ro -q 'SELECT 1' --iterations 10 --results $RES/b3"
	[ "$RC" = 2 ] && run "agbench stress --primary east=$(url $P) --standby west=$(url $S1) --intent read-only -q 'SELECT 1' --iterations 10 --results $RES/b3"
	local r; r=$(latest "$RES/b3")
	if [ -n "$r" ] && [ -f "$r/result.json" ]; then
		run "jq -c '.meta.topology.nodes' $r/result.json"
		say "  other node names in result.json (application_name / cluster_name / per-node figures):"
		jq -r '[.. | objects | (.node?, .application_name?, .cluster_name?) | strings] | unique | join(", ")' "$r/result.json" | sed 's/^/  | /'
	else
		say "  no result.json"
	fi
}

failover_after() { # SECONDS: stop the primary, promote standby1
	sleep "$1"
	pgctl -D "$CL/primary" stop -m fast -w >/dev/null 2>&1
	pgctl -D "$CL/standby1" promote -w >/dev/null 2>&1
	say "  (at ${1}s: pg_ctl stop -m fast on the primary; pg_ctl promote on standby1)" >>"$WORK/failover.note"
}

b4() {
	hdr 4 "a failover during tpcc run"
	DIRTY=1
	ensure_cluster
	local L; L=$(freeport "$P" "$S1" "$S2")
	start_listener "$WORK/l4.log" --primary primary=$(url $P) --standby standby1=$(url $S1) --standby standby2=$(url $S2) --listen 127.0.0.1:$L --metrics ''
	waitport "$L" || { say "listener did not start"; show_log "$WORK/l4.log"; }
	run "agbench tpcc build --primary $(url $P) --warehouses 1"
	if [ "$RC" != 0 ]; then
		say "  (build by app failed: building as admin and granting to app so that the run can be shown)"
		run "agbench tpcc build --primary $(url $P admin) --warehouses 1"
		grant_app
	fi
	sleep 1
	rm -f "$WORK/failover.note"
	failover_after 3 &
	local f=$!
	say "  (3 s into the run: pg_ctl stop -m fast on the primary, pg_ctl promote on standby1)"
	run "agbench tpcc run --listener postgres://app:$APPPW@127.0.0.1:$L/app --vus 2 --rampup 0s --duration 10s --max-errors 0 --results $RES/b4"
	wait "$f"
	local r; r=$(latest "$RES/b4")
	[ -n "$r" ] && [ -f "$r/result.json" ] && say "  result.json: incomplete: $(jq -c '[.. | .incomplete_reason? // empty] | if length == 0 then "no" else . end' "$r/result.json" | cut -c1-300) counters=$(jq -c '[.steps[]?.counters | with_entries(select(.key|test("nopm|tpm|error|reconnect")))]' "$r/result.json" | cut -c1-300)"
	show_log "$WORK/l4.log" 'primary|promot|role|timeline|failover|ended'
	stop_listener
	DIRTY=1
}

b5() {
	hdr 5 "a failover during stress through the listener"
	ensure_cluster
	local L; L=$(freeport "$P" "$S1" "$S2")
	start_listener "$WORK/l5.log" --primary primary=$(url $P) --standby standby1=$(url $S1) --standby standby2=$(url $S2) --listen 127.0.0.1:$L --metrics ''
	waitport "$L" || say "listener did not start"
	sleep 1
	failover_after 3 &
	local f=$!
	say "  (3 s into the run: pg_ctl stop -m fast on the primary, pg_ctl promote on standby1)"
	run "agbench stress --listener postgres://app:$APPPW@127.0.0.1:$L/app --duration 8s --iterations 0 --threads 2 -q 'SELECT 1' --results $RES/b5"
	wait "$f"
	local r; r=$(latest "$RES/b5")
	[ -n "$r" ] && [ -f "$r/result.json" ] && say "  result.json: incomplete: $(jq -c '[.. | .incomplete_reason? // empty] | if length == 0 then "no" else . end' "$r/result.json" | cut -c1-300)"
	show_log "$WORK/l5.log" 'primary|promot|role|timeline|failover|ended'
	stop_listener
	DIRTY=1
}

b6() {
	hdr 6 "a fresh listener facing two writable nodes"
	ensure_cluster
	say "$ pg_ctl -D primary stop -m fast; pg_ctl -D standby1 promote; pg_ctl -D primary start   # the old primary was never a standby: writable"
	pgctl -D "$CL/primary" stop -m fast -w >/dev/null
	pgctl -D "$CL/standby1" promote -w >/dev/null
	pgctl -D "$CL/primary" -l "$CL/primary.log" -w start >/dev/null
	say "  primary  (:$P)  in recovery: $(sql $P 'select pg_is_in_recovery()'), timeline $(sql $P 'select timeline_id from pg_control_checkpoint()')"
	say "  standby1 (:$S1) in recovery: $(sql $S1 'select pg_is_in_recovery()'), timeline $(sql $S1 'select timeline_id from pg_control_checkpoint()')"
	local L M; L=$(freeport "$P" "$S1" "$S2"); M=$(freeport "$P" "$S1" "$S2" "$L")
	start_listener "$WORK/l6.log" --primary primary=$(url $P) --standby standby1=$(url $S1) --standby standby2=$(url $S2) --listen 127.0.0.1:$L --metrics 127.0.0.1:$M
	waitport "$L"; waitport "$M"; sleep 2
	run "PGPASSWORD=$APPPW psql \"host=127.0.0.1 port=$L user=app dbname=app\" -c \"select inet_server_port(), pg_is_in_recovery()\""
	run "curl -s 127.0.0.1:$M/status | jq -c '.nodes // .'"
	show_log "$WORK/l6.log" 'primary|writable|timeline|conflict|stale|warn'
	stop_listener
	DIRTY=1
}

b7() {
	hdr 7 "a standby shutting down"
	ensure_cluster
	local L; L=$(freeport "$P" "$S1" "$S2")
	start_listener "$WORK/l7.log" --primary primary=$(url $P) --standby standby1=$(url $S1) --standby standby2=$(url $S2) --listen 127.0.0.1:$L --metrics '' --routing-list "(('standby1','standby2'),'primary')"
	waitport "$L"; sleep 1.5
	say "$ PGPASSWORD=$APPPW psql \"host=127.0.0.1 port=$S1 user=app dbname=app\" -c 'select pg_sleep(30)' &"
	PGPASSWORD=$APPPW psql "host=127.0.0.1 port=$S1 user=app dbname=app" -c 'select pg_sleep(30)' >/dev/null 2>&1 &
	local hold=$!
	BGPIDS+=("$hold")
	sleep 0.5
	say "$ pg_ctl -D standby1 stop -m smart -W    # standby1 stays 'shutting down' while the session lasts"
	pgctl -D "$CL/standby1" stop -m smart -W >/dev/null 2>&1
	sleep 0.2
	say "  (six read-intent sessions through the listener, within the probe interval of 1 s)"
	run "for i in 1 2 3 4 5 6; do PGPASSWORD=$APPPW psql -X -A -t \"host=127.0.0.1 port=$L user=app dbname=app options='-c agbench.intent=read-only'\" -c 'select inet_server_port()' 2>&1; done"
	say "  (standby1 is :$S1, standby2 :$S2, primary :$P)"
	kill "$hold" 2>/dev/null
	show_log "$WORK/l7.log" 'standby1|shutting|retr|refus'
	stop_listener
	DIRTY=1
}

b8() {
	hdr 8 "three stress runs started in the same second, one --results folder"
	ensure_cluster
	run "for i in 1 2 3; do agbench stress --primary $(url $P) -q 'SELECT 1' --iterations 10 --sample=false --results $RES/b8 >/dev/null 2>&1 & done; wait; find $RES/b8 -name result.json | wc -l"
	say "  result.json files: $(find "$RES/b8" -name result.json | wc -l) in $(ls "$RES/b8" | wc -l) folder(s): $(ls "$RES/b8" | tr '\n' ' ')"
}

b9() {
	hdr 9 "a plan that passes run --check and fails later"
	ensure_cluster
	cat >"$WORK/plan.yaml" <<EOF
name: i17
target:
  connect: {primary: "$(url $P)"}
experiments:
  - {name: stress, command: stress, flags: {query: SELECT 1, iterations: 10}}
  - {name: scan, command: scan, flags: {cold: true, init: 1000, rows: 1000}}
  - {name: readahead, command: readahead, flags: {rows: 10000, repeat: 1}}
  - {name: seed, command: seed}
EOF
	say "  plan.yaml:"; sed 's/^/  | /' "$WORK/plan.yaml"
	run "agbench run --check $WORK/plan.yaml"
	cat >"$WORK/plan2.yaml" <<EOF
name: i17b
target:
  connect: {primary: "$(url $P)"}
experiments:
  - {name: stress, command: stress, flags: {query: SELECT 1, iterations: 10, sample: false}}
  - {name: readahead, command: readahead, flags: {rows: 10000, repeat: 1, device: none}}
  - {name: scan, command: scan, flags: {cold: true, init: 1000, rows: 1000}}
EOF
	say "  plan2.yaml, the same without seed (readahead before scan):"; sed 's/^/  | /' "$WORK/plan2.yaml"
	run "agbench run --check $WORK/plan2.yaml"
	if [ "$RC" = 0 ]; then
		say "  (the check passed: the plan is run)"
		run "(cd $WORK && agbench run $WORK/plan2.yaml)"
	fi
}

b10() {
	hdr 10 "the recorded command line pastes"
	ensure_cluster
	run "agbench stress --primary $(url $P) -q 'SELECT 1' --iterations 10 --sample=false --results $RES/b10"
	local r; r=$(latest "$RES/b10")
	if [ -n "$r" ] && [ -f "$r/result.json" ]; then
		run "jq -c .meta.args $r/result.json"
		local line
		line=$(python3 -c 'import json,shlex,sys; print(shlex.join(json.load(open(sys.argv[1]))["meta"]["args"]))' "$r/result.json")
		say "  (the password is removed from the recorded args: the paste runs with PGPASSWORD=$APPPW)"
		run "PGPASSWORD=$APPPW agbench $line"
		if [[ $line == *xxxxx* ]]; then
			say "  (the recorded URL carries a placeholder password that wins over PGPASSWORD: the same paste with the password put back)"
			run "agbench ${line//xxxxx/$APPPW}"
		fi
	fi
	run "agbench stress --primary $(url $P) -q 'SELECT 1' --duration 3s --sample=false --results $RES/b10"
	run "agbench stress --primary $(url $P) -q 'SELECT 1' --duration 3s --iterations 0 --sample=false --results $RES/b10"
}

b11() {
	hdr 11 "lag with an ordinary login while standby1's replay is paused"
	ensure_cluster
	sql "$P" "CREATE TABLE IF NOT EXISTS lagt(x int, pad text)"
	say "$ psql -U admin -p $S1 -c 'SELECT pg_wal_replay_pause()'   # and, on the primary as admin, inserts in a loop"
	sql "$S1" "SELECT pg_wal_replay_pause()" >/dev/null
	(for i in $(seq 1 40); do sql "$P" "INSERT INTO lagt SELECT g, repeat('x', 200) FROM generate_series(1, 5000) g" >/dev/null; sleep 0.2; done) &
	local w=$!
	BGPIDS+=("$w")
	sleep 1
	run "agbench stress --primary $(url $P) --standby $(url $S1) --intent read-only -q 'SELECT 1' --duration 5s --iterations 0 --results $RES/b11"
	kill "$w" 2>/dev/null; wait "$w" 2>/dev/null
	say "  replay lag seen by admin on the primary: $(sql $P "select application_name||' replay_lag='||coalesce(replay_lag::text,'NULL')||' bytes='||pg_wal_lsn_diff(sent_lsn, replay_lsn) from pg_stat_replication" | tr '\n' ';')"
	sql "$S1" "SELECT pg_wal_replay_resume()" >/dev/null
	local r; r=$(latest "$RES/b11")
	if [ -n "$r" ] && [ -f "$r/result.json" ]; then
		say "  lag in result.json (series and counters whose name has 'lag'; warnings/absent reasons):"
		jq -r '
		  [paths(type == "object") as $p | getpath($p) | to_entries[] | select(.key|test("lag";"i"))
		   | "\(.key) = \(.value|tostring|.[0:160])"] | unique | .[]' "$r/result.json" | head -n 20 | sed 's/^/  | /'
		jq -r '[.. | strings | select(test("lag|pg_monitor|pg_read_all_stats";"i"))] | unique | .[] ' "$r/result.json" | head -n 10 | cut -c1-200 | sed 's/^/  | /'
	fi
}

b12() {
	hdr 12 "MB/s through a listener: headline, compare, report"
	ensure_cluster
	local L; L=$(freeport "$P" "$S1" "$S2")
	start_listener "$WORK/l12.log" --primary primary=$(url $P) --standby standby1=$(url $S1) --standby standby2=$(url $S2) --listen 127.0.0.1:$L --metrics ''
	waitport "$L"; sleep 1
	local LU="postgres://app:$APPPW@127.0.0.1:$L/app"
	run "agbench stress --listener $LU --intent read-only -q 'SELECT 1' --duration 3s --iterations 0 --compare routing=off,on --results $RES/b12x"
	run "agbench stress --primary $(url $P) --standby $(url $S1) --intent read-only -q 'SELECT 1' --duration 3s --iterations 0 --results $RES/b12a"
	local A; A=$(latest "$RES/b12a")
	run "agbench stress --listener $LU --intent read-only -q 'SELECT 1' --duration 3s --iterations 0 --results $RES/b12b"
	local B; B=$(latest "$RES/b12b")
	stop_listener
	if [ -n "$A" ] && [ -n "$B" ]; then
		say "  A = the --primary run, B = the --listener run"
		run "agbench compare $A $B"
		run "agbench report $A $B -o $WORK/report.html | grep -i -E 'MB/s|peak|headline|%'"
		[ -f "$WORK/report.html" ] && say "  report.html, text around 'MB/s':" &&
			python3 - "$WORK/report.html" <<'EOF' | head -n 12 | sed 's/^/  | /'
import re, sys, html
t = html.unescape(re.sub(r'<script.*?</script>|<style.*?</style>', ' ', open(sys.argv[1]).read(), flags=re.S))
t = re.sub(r'<[^>]+>', ' ', t); t = re.sub(r'\s+', ' ', t)
seen = set()
for m in re.finditer(r'MB/s', t):
    s = t[max(0, m.start()-70): m.end()+40].strip()
    if s not in seen:
        seen.add(s); print('…' + s + '…')
EOF
	fi
}

say "binary: $BIN ($("$BIN" --version 2>/dev/null | head -n 1))"
say "bullets: ${BULLETS[*]}"
for b in "${BULLETS[@]}"; do
	case $b in
	1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12) "b$b" ;;
	*) say "unknown bullet $b (1..12)" ;;
	esac
done
