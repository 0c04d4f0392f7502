#!/usr/bin/env bash
# The Python levh (the project this one replaces, `levh` on PyPI) beside the Rust
# `levh serve`, in one run: installs the Python levh into a fresh venv under a temporary
# directory, starts both servers on free 127.0.0.1 ports (each with its own temporary
# home, both with the model-free hash embedder), stores the same ~3,000 texts in both
# over HTTP one request at a time, runs the benchmark sets' questions as searches against
# both, and prints store and search latency (p50/p99), hit@10, peak RSS and the
# Python/Rust ratios. Nothing listens beyond 127.0.0.1; the temporary directory is removed.
#
#   scripts/compare-python-levh.sh [LEVH_BINARY] [--limit N] [--queries N] [--warmup N]
#                                  [--datasets a,b,c] [--json] [--python-only]
#
#   LEVH_BINARY        the Rust levh (default target/release/levh)
#   --limit N          texts stored (default 3000: conversational, then worknotes, then chat)
#   --json             one JSON document on stdout instead of the table (progress on stderr)
#   --python-only      measure the Python levh alone (no Rust binary needed)
#   --rust-only        measure the Rust levh alone (nothing installed)
#   PY_LEVH_VERSION    the PyPI version to install (default 2.36.0, the newest when written)
#   PY_LEVH_VENV       reuse this venv (its bin/levh) instead of installing a fresh one
#   PYTHON             the interpreter for the venv (the Python levh needs >= 3.11)
#   KEEP=1             keep the temporary directory (homes, server logs)
#
# levh 2.36.0 declares `mcp>=1.0,<3` but imports `mcp.server.fastmcp`, which mcp 2.x
# removed: the install pins `mcp<2`, or its server does not start.
set -euo pipefail
cd "$(dirname "$0")/.."

levh=target/release/levh
if [[ $# -gt 0 && $1 != --* ]]; then
  levh=$1
  shift
fi
python_only=0
rust_only=0
for arg in "$@"; do
  [[ $arg == --python-only ]] && python_only=1
  [[ $arg == --rust-only ]] && rust_only=1
done
if [[ $python_only == 0 && ! -x $levh ]]; then
  echo "no Rust levh at $levh (build it: cargo build --release -p levh; or pass its path, or --python-only)" >&2
  exit 2
fi

PYTHON=${PYTHON:-python3}
PY_LEVH_VERSION=${PY_LEVH_VERSION:-2.36.0}
work=$(mktemp -d "${TMPDIR:-/tmp}/levh-compare.XXXXXX")
cleanup() {
  if [[ ${KEEP:-0} == 1 ]]; then
    echo "kept $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

if [[ $rust_only == 1 ]]; then
  venv=
elif [[ -n ${PY_LEVH_VENV:-} ]]; then
  venv=$PY_LEVH_VENV
else
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "the Python levh needs Python >= 3.11 ($PYTHON is $("$PYTHON" --version 2>&1)); set PYTHON" >&2
    exit 2
  }
  venv=$work/venv
  echo "installing levh==$PY_LEVH_VERSION from PyPI into $venv ..." >&2
  "$PYTHON" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "levh==$PY_LEVH_VERSION" "mcp<2" >&2
fi
[[ $rust_only == 1 || -x $venv/bin/levh ]] || { echo "no levh in $venv/bin" >&2; exit 2; }

rust_levh=$levh
[[ $rust_levh == /* ]] || rust_levh=$PWD/$rust_levh
python3 scripts/compare_python_levh.py \
  --python-levh "${venv:+$venv/bin/levh}" --rust-levh "$rust_levh" --work "$work" "$@"
