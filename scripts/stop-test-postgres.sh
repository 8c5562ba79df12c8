#!/usr/bin/env bash
# Stops a cluster started by scripts/start-test-postgres.sh and removes its
# folder. Takes the folder as its argument or from PERDURE_TEST_POSTGRES_DIR.
set -euo pipefail

DIR="${1:-${PERDURE_TEST_POSTGRES_DIR:-}}"
if [ -z "$DIR" ] || [ ! -d "$DIR/data" ]; then
  echo "stop-test-postgres: no cluster folder given (argument or PERDURE_TEST_POSTGRES_DIR)" >&2
  exit 0
fi
BINDIR="${PERDURE_TEST_POSTGRES_BINDIR:-}"
if [ -z "$BINDIR" ] && [ -f "$DIR/env" ]; then BINDIR="$(sed -n "s/^export PERDURE_TEST_POSTGRES_BINDIR='\(.*\)'$/\1/p" "$DIR/env")"; fi
RUN_AS=()
if [ "$(id -u)" -eq 0 ]; then RUN_AS=(runuser -u "$(stat -c %U "$DIR/data")" --); fi
"${RUN_AS[@]}" "$BINDIR/pg_ctl" -D "$DIR/data" -m fast -w stop >&2 || echo "stop-test-postgres: pg_ctl stop failed" >&2
rm -rf "$DIR"
