#!/usr/bin/env bash
# bench/listener.sh BIN — `make bench-listener`: pgbench select-only (-S, prepared) straight to
# the primary and through four paths to it, at 1, 8 and 32 clients, interleaved (the order of
# the paths rotates each round) so a drifting machine favours no one; medians of REPS runs of
# SECS seconds each. Every path ends on the same primary of a throwaway agbench cluster:
#   direct     pgbench -> primary
#   agbench    pgbench -> agbench listener (proxied: startup parsed, then forwarded in the
#              kernel by its BPF sockhash) -> primary
#   agbench-user  the same listener with --forward user (its own copy loops move the bytes)
#   redirect   pgbench -> the address agbench's /route answers (asked once per pgbench run;
#              each session would ask once at login), i.e. the redirect path: routing costs
#              one HTTP round trip per session and nothing per query
#   pgbouncer  pgbench -> pgbouncer (pool_mode=session) -> primary
#   haproxy    pgbench -> HAProxy (mode tcp) -> primary
# Besides TPS and latency it reports each proxy's own CPU time per transaction (utime+stime
# of its process over the run): on a shared, busy machine TPS swings with the neighbours,
# while CPU per transaction is what a proxy costs when the machine is the limit. Bytes the
# kernel forwards are moved by kernel worker threads, not the listener process, so for the
# agbench path that column understates; the machine column (all CPUs' busy time per
# transaction, from /proc/stat: server, pgbench, proxy and kernel alike) compares every path.
# Knobs (environment): REPS=7 SECS=4 CLIENTS="1 8 32" SCALE=10 PATHS="direct agbench agbench-user redirect pgbouncer haproxy"
# Everything runs on loopback and is removed at the end.
set -euo pipefail
BIN=${1:-bin/agbench}
BIN=$(readlink -f "$BIN")
REPS=${REPS:-7}
SECS=${SECS:-4}
CLIENTS=${CLIENTS:-"1 8 32"}
SCALE=${SCALE:-10}
PATHS=${PATHS:-"direct agbench agbench-user redirect pgbouncer haproxy"}
PGBENCH=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench | tail -1)
PGBOUNCER=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)

WORK=$(mktemp -d /tmp/agbench-bench-listener.XXXXXX)
chmod 755 "$WORK"
export AGBENCH_HOME=$WORK/home
mkdir -p "$AGBENCH_HOME"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	"$BIN" cluster destroy --name bench >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT

freeport() { # a free loopback port base with n consecutive free ports
	local n=$1 p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 12000)) # below the ephemeral range
		local ok=1
		for i in $(seq 0 $((n - 1))); do
			if (exec 3<>/dev/tcp/127.0.0.1/$((p + i))) 2>/dev/null; then ok=0; break; fi
		done
		if [ $ok = 1 ]; then echo "$p"; return; fi
	done
	echo "no free port" >&2; exit 1
}

BASE=$(freeport 1)
echo "== cluster: a lone primary on 127.0.0.1:$BASE (fsync=off), pgbench scale $SCALE"
"$BIN" cluster create --name bench --standbys 0 --base-port "$BASE" --set fsync=off --set max_connections=200 >/dev/null
eval "$("$BIN" cluster env --name bench)"
PASSWORD=$(awk -F: 'NR==1 {print $5}' "$PGPASSFILE")
"$PGBENCH" -i -q -s "$SCALE" >/dev/null 2>&1

P=$(freeport 6)
LPORT=$P; MPORT=$((P + 1)); BPORT=$((P + 2)); HPORT=$((P + 3)); UPORT=$((P + 4)); UMPORT=$((P + 5))

# agbench listener
"$BIN" listener --cluster bench --listen 127.0.0.1:$LPORT --metrics 127.0.0.1:$MPORT >"$WORK/listener.log" 2>&1 &
PIDS+=($!)
AGBENCH_PID=$!
"$BIN" listener --cluster bench --forward user --listen 127.0.0.1:$UPORT --metrics 127.0.0.1:$UMPORT >"$WORK/listener-user.log" 2>&1 &
PIDS+=($!)
AGBENCH_USER_PID=$!

# pgbouncer, session mode (it refuses to run as root: run it as the server's user)
mkdir -p "$WORK/pgbouncer"
printf '"%s" "%s"\n' "$PGUSER" "$PASSWORD" >"$WORK/pgbouncer/userlist.txt"
cat >"$WORK/pgbouncer/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$BASE
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BPORT
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $WORK/pgbouncer/userlist.txt
pool_mode = session
max_client_conn = 200
default_pool_size = 64
logfile = $WORK/pgbouncer/pgbouncer.log
pidfile = $WORK/pgbouncer/pgbouncer.pid
INI
BOUNCER_USER=""
if [ "$(id -u)" = 0 ]; then BOUNCER_USER=postgres; chown -R postgres "$WORK/pgbouncer"; fi
if [ -n "$BOUNCER_USER" ]; then
	runuser -u "$BOUNCER_USER" -- "$PGBOUNCER" "$WORK/pgbouncer/pgbouncer.ini" >/dev/null 2>&1 &
else
	"$PGBOUNCER" "$WORK/pgbouncer/pgbouncer.ini" >/dev/null 2>&1 &
fi
PIDS+=($!)

# HAProxy, TCP mode
cat >"$WORK/haproxy.cfg" <<CFG
global
	maxconn 1000
defaults
	mode tcp
	timeout connect 5s
	timeout client 1h
	timeout server 1h
frontend pg
	bind 127.0.0.1:$HPORT
	default_backend pg
backend pg
	server primary 127.0.0.1:$BASE
CFG
"$HAPROXY" -f "$WORK/haproxy.cfg" -db >"$WORK/haproxy.log" 2>&1 &
PIDS+=($!)
HAPROXY_PID=$!

sleep 2
BOUNCER_PID=$(cat "$WORK/pgbouncer/pgbouncer.pid" 2>/dev/null || pgrep -f "pgbouncer $WORK" | head -1)
pid_of() {
	case $1 in
	agbench) echo "$AGBENCH_PID" ;;
	agbench-user) echo "$AGBENCH_USER_PID" ;;
	pgbouncer) echo "$BOUNCER_PID" ;;
	haproxy) echo "$HAPROXY_PID" ;;
	*) echo "" ;;
	esac
}
ticks() { # CPU time of a process in clock ticks (utime + stime), 0 without one
	if [ -z "$1" ]; then echo 0; return; fi
	awk '{print $14 + $15}' "/proc/$1/stat"
}
HZ=$(getconf CLK_TCK)
busy() { # all CPUs' busy time in clock ticks (user nice system irq softirq steal)
	awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat
}
port_of() {
	case $1 in
	direct) echo "$BASE" ;;
	agbench) echo "$LPORT" ;;
	agbench-user) echo "$UPORT" ;;
	pgbouncer) echo "$BPORT" ;;
	haproxy) echo "$HPORT" ;;
	redirect)
		curl -sf "http://127.0.0.1:$MPORT/route?intent=read-write" | sed -E 's/.*"addr":"[^"]*:([0-9]+)".*/\1/'
		;;
	esac
}
for p in $PATHS; do # every path answers before we measure
	"$PGBENCH" -n -S -t 1 -h 127.0.0.1 -p "$(port_of "$p")" >/dev/null 2>&1 || { echo "path $p does not work" >&2; cat "$WORK"/*.log >&2; exit 1; }
done

echo "== pgbench -S -M prepared, ${SECS}s runs, $REPS rounds, paths interleaved; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
RES=$WORK/results.txt
: >"$RES"
read -r -a order <<<"$PATHS"
for c in $CLIENTS; do
	j=$((c < 2 ? 1 : 2))
	for r in $(seq "$REPS"); do
		for i in "${!order[@]}"; do
			p=${order[$(((i + r) % ${#order[@]}))]}
			pid=$(pid_of "$p")
			t0=$(ticks "$pid"); b0=$(busy)
			out=$("$PGBENCH" -n -S -M prepared -c "$c" -j "$j" -T "$SECS" -h 127.0.0.1 -p "$(port_of "$p")" 2>&1) || { echo "$out" >&2; exit 1; }
			t1=$(ticks "$pid"); b1=$(busy)
			tps=$(sed -nE 's/^tps = ([0-9.]+).*/\1/p' <<<"$out" | head -1)
			lat=$(sed -nE 's/^latency average = ([0-9.]+) ms/\1/p' <<<"$out")
			n=$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' <<<"$out")
			if [ -z "$tps" ] || [ -z "$lat" ] || [ -z "${n:-}" ] || [ "$n" = 0 ]; then
				echo "$c $p failed" >>"$WORK/failed.txt"
				printf 'x'
				continue
			fi
			cpu=$(awk -v d=$((t1 - t0)) -v hz="$HZ" -v n="$n" 'BEGIN {printf "%.2f", d * 1e6 / hz / n}')
			mach=$(awk -v d=$((b1 - b0)) -v hz="$HZ" -v n="$n" 'BEGIN {printf "%.2f", d * 1e6 / hz / n}')
			echo "$c $p $tps $lat $cpu $mach $r" >>"$RES"
			printf '.'
		done
	done
done
echo

declare -A PER_ROUND
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
printf '%-8s %-13s %12s %12s %10s %10s %16s %18s %5s\n' clients path "TPS (median)" "latency ms" "x direct" "per-round" "proxy CPU us/tx" "machine CPU us/tx" runs
for c in $CLIENTS; do
	d=$(awk -v c="$c" '$1==c && $2=="direct" {print $3}' "$RES" | median)
	for p in $PATHS; do
		k=$(awk -v c="$c" -v p="$p" '$1==c && $2==p' "$RES" | wc -l)
		if [ "$k" = 0 ]; then printf '%-8s %-13s %12s\n' "$c" "$p" "no run succeeded"; continue; fi
		t=$(awk -v c="$c" -v p="$p" '$1==c && $2==p {print $3}' "$RES" | median)
		l=$(awk -v c="$c" -v p="$p" '$1==c && $2==p {print $4}' "$RES" | median)
		u=$(awk -v c="$c" -v p="$p" '$1==c && $2==p {print $5}' "$RES" | median)
		m=$(awk -v c="$c" -v p="$p" '$1==c && $2==p {print $6}' "$RES" | median)
		# each round's own ratio to direct (the two ran minutes apart at most), then their median
		q=$(awk -v c="$c" -v p="$p" '$1==c && $2=="direct" {d[$7]=$3} $1==c && $2==p {t[$7]=$3}
			END {for (r in t) if (d[r] > 0) print t[r] / d[r]}' "$RES" | median)
		printf '%-8s %-13s %12.0f %12.3f %9.2fx %9.2fx %16.1f %18.1f %5s\n' "$c" "$p" "$t" "$l" "$(awk -v t="$t" -v d="$d" 'BEGIN {print (d > 0 ? t / d : 0)}')" "${q:-0}" "$u" "$m" "$k"
		PER_ROUND[$c/$p]=${q:-0}
	done
done
# The target, judged on the per-round medians (each round pairs the paths with the direct
# run of the same minute): at 8 and 32 clients the proxied listener reaches 0.75x direct
# and is ahead of pgbouncer and HAProxy, the proxies users put in front of PostgreSQL
# today, so that routing through it costs less than what they already pay.
verdict=""
for c in 8 32; do
	a=${PER_ROUND[$c/agbench]:-}
	if [ -z "$a" ]; then continue; fi
	ok=$(awk -v a="$a" 'BEGIN {print (a >= 0.75)}')
	for other in pgbouncer haproxy; do
		o=${PER_ROUND[$c/$other]:-}
		if [ -n "$o" ]; then ok=$(awk -v ok="$ok" -v a="$a" -v o="$o" 'BEGIN {print (ok && a > o)}'); fi
	done
	verdict+=" $c:$([ "$ok" = 1 ] && echo met || echo missed)"
done
if [ -n "$verdict" ]; then
	echo "target (agbench >= 0.75x direct per round, ahead of pgbouncer and haproxy) at 8 and 32 clients:$verdict"
fi
if [ -s "$WORK/failed.txt" ]; then echo "runs that failed (no figures; left out of the medians):"; sort "$WORK/failed.txt" | uniq -c; fi
echo "x direct: ratio of the medians; per-round: median of each round's ratio to direct in that round"
echo "(raw runs: clients path tps latency_ms proxy_cpu_us_per_tx machine_cpu_us_per_tx round)"
sort -k1,1n -k2,2 "$RES" | awk '{printf "  %s\n", $0}'
