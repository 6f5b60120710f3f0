#!/usr/bin/env bash
# Installs what agbench needs and a fresh Debian/Ubuntu machine lacks: Go, PostgreSQL's
# server packages, Patroni and etcd (cluster create --ha patroni), Prometheus's node_exporter
# and server (other hosts' figures), and the comparators the
# benchmarks run beside agbench (pgbench comes with PostgreSQL; fio, pgbouncer, haproxy).
# Installs nothing that is already there.
#   --browser   also Debian's chromium, for the report's headless-browser test (make test)
# AGBENCH_EXTRA_PACKAGES="pkg ..." adds more Debian packages.
set -euo pipefail

browser=0
for arg in "$@"; do
  case "$arg" in
    --browser) browser=1 ;;
    *) echo "install-deps.sh: unknown argument $arg (--browser)" >&2; exit 2 ;;
  esac
done

have_pg_server() {
  command -v initdb >/dev/null 2>&1 && return 0
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}

missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
have_pg_server || missing+=(postgresql postgresql-contrib)
command -v pgbench >/dev/null 2>&1 || have_pg_server || missing+=(postgresql-contrib)
command -v fio >/dev/null 2>&1 || missing+=(fio)
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
# Patroni's Debian package starts no service without systemd; agbench runs patroni and etcd
# itself, in the foreground of their own sessions, for the clusters it makes.
command -v patroni >/dev/null 2>&1 || missing+=(patroni)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
# cluster create --netns: namespaces and veths (ip), entering them (nsenter, util-linux), and
# a node_exporter in each, which agbench starts itself (never the package's service). Other
# hosts' figures come from their node_exporter, directly or through a Prometheus server; the
# tests run both in the foreground on loopback.
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || missing+=(iproute2)
[ -x /usr/bin/prometheus-node-exporter ] || missing+=(prometheus-node-exporter)
[ -x /usr/bin/prometheus ] || missing+=(prometheus)
if [ "$browser" = 1 ]; then
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
fi
for extra in ${AGBENCH_EXTRA_PACKAGES:-}; do
  dpkg -s "$extra" >/dev/null 2>&1 || missing+=("$extra")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # Debian's postgresql package starts a cluster on 5432; agbench never uses it.
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian's packages may start their own services; agbench's tests need none of them and
# never touch them.
if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
  adduser --system --group --home /var/lib/postgresql --no-create-home postgres >/dev/null
fi
