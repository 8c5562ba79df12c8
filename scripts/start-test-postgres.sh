#!/usr/bin/env bash
# Starts a private PostgreSQL cluster for the test suite: installs PostgreSQL
# with apt-get when its binaries are missing, initializes a cluster in a
# temporary folder as an unprivileged user, starts it on a loopback port and
# creates the test database.
#
# Prints shell `export` lines on stdout (everything else goes to stderr), so:
#   eval "$(scripts/start-test-postgres.sh)"
#   npm test                              # uses PERDURE_TEST_DATABASE_URL
#   scripts/stop-test-postgres.sh         # uses PERDURE_TEST_POSTGRES_DIR
#
# Environment: PERDURE_TEST_POSTGRES_PORT (default: the first free port from
# 55432), PERDURE_TEST_POSTGRES_DIR (default: a new folder under /tmp).
set -euo pipefail

log() { echo "start-test-postgres: $*" >&2; }

find_bindir() {
  local candidate
  if command -v pg_config >/dev/null 2>&1; then
    candidate="$(pg_config --bindir 2>/dev/null || true)"
    if [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then echo "$candidate"; return 0; fi
  fi
  for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
    if [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then echo "$candidate"; return 0; fi
  done
  return 1
}

if ! BINDIR="$(find_bindir)"; then
  log "PostgreSQL binaries not found; installing them with apt-get"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq postgresql >&2
  BINDIR="$(find_bindir)" || { log "apt-get installed no usable PostgreSQL"; exit 1; }
fi
VERSION="$("$BINDIR/postgres" --version | sed -E 's/[^0-9]*([0-9]+).*/\1/')"
if [ "$VERSION" -lt 15 ]; then log "PostgreSQL $VERSION at $BINDIR is too old: the engine needs 15 or later"; exit 1; fi
log "using PostgreSQL $VERSION from $BINDIR"

# initdb refuses to run as root, so root runs the cluster as an unprivileged user.
RUN_AS=()
if [ "$(id -u)" -eq 0 ]; then
  CLUSTER_USER="postgres"
  if ! id "$CLUSTER_USER" >/dev/null 2>&1; then CLUSTER_USER="nobody"; fi
  RUN_AS=(runuser -u "$CLUSTER_USER" --)
else
  CLUSTER_USER="$(id -un)"
fi

DIR="${PERDURE_TEST_POSTGRES_DIR:-$(mktemp -d /tmp/perdure-postgres.XXXXXX)}"
mkdir -p "$DIR"
chmod 700 "$DIR"
if [ "$(id -u)" -eq 0 ]; then chown "$CLUSTER_USER" "$DIR"; fi

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT="${PERDURE_TEST_POSTGRES_PORT:-}"
if [ -z "$PORT" ]; then
  PORT=55432
  while ! port_free "$PORT"; do PORT=$((PORT + 1)); done
fi

DB_USER="perdure"
DB_NAME="perdure_test"
PASSWORD="$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
echo "$PASSWORD" > "$DIR/password"
if [ "$(id -u)" -eq 0 ]; then chown "$CLUSTER_USER" "$DIR/password"; fi

log "initializing a cluster in $DIR/data as $CLUSTER_USER"
"${RUN_AS[@]}" "$BINDIR/initdb" -D "$DIR/data" -U "$DB_USER" --pwfile="$DIR/password" \
  --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 \
  || { cat "$DIR/initdb.log" >&2; exit 1; }
rm -f "$DIR/password"

log "starting it on 127.0.0.1:$PORT"
"${RUN_AS[@]}" "$BINDIR/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
  -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=300" start >&2 \
  || { cat "$DIR/server.log" >&2; exit 1; }
if ! "${RUN_AS[@]}" "$BINDIR/createdb" -h "$DIR" -p "$PORT" -U "$DB_USER" "$DB_NAME" >&2; then
  "${RUN_AS[@]}" "$BINDIR/pg_ctl" -D "$DIR/data" -m immediate stop >&2 || true
  exit 1
fi

URL="postgres://$DB_USER:$PASSWORD@127.0.0.1:$PORT/$DB_NAME"
cat > "$DIR/env" <<ENV
export PERDURE_TEST_DATABASE_URL='$URL'
export PERDURE_TEST_POSTGRES_DIR='$DIR'
export PERDURE_TEST_POSTGRES_BINDIR='$BINDIR'
ENV
log "ready: $URL"
cat "$DIR/env"
