#!/usr/bin/env bash
# Builds a levh connector written in Python into a WebAssembly component, with
# componentize-py against levh's plugin WIT (world `connector`).
#
#   scripts/build-python-connector.sh OUT.wasm [DIR]
#
# DIR holds `app.py`, whose class `WitWorld` implements `manifest` and `sync`, and any
# modules it imports (default: examples/python-connector). componentize-py comes from
# $COMPONENTIZE_PY, else .cache/componentize-py (a virtual environment):
#
#   python3 -m venv .cache/componentize-py
#   .cache/componentize-py/bin/pip install componentize-py==0.25.1
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 OUT.wasm [DIR]" >&2
    exit 2
fi
OUT=$1
DIR=${2:-$ROOT/examples/python-connector}
COMPONENTIZE_PY=${COMPONENTIZE_PY:-$ROOT/.cache/componentize-py/bin/componentize-py}
# The newest plugin API: its host interface has `skipped` (`@since(version = 0.1.1)`).
WIT=$ROOT/wit/levh-plugin@0.1.1

if [ ! -x "$COMPONENTIZE_PY" ]; then
    echo "no componentize-py at $COMPONENTIZE_PY: install it with" >&2
    echo "  python3 -m venv .cache/componentize-py && .cache/componentize-py/bin/pip install componentize-py==0.25.1" >&2
    echo "or set COMPONENTIZE_PY" >&2
    exit 1
fi
if [ ! -f "$DIR/app.py" ]; then
    echo "no app.py in $DIR" >&2
    exit 1
fi
mkdir -p "$(dirname "$OUT")"
"$COMPONENTIZE_PY" --quiet --wit-path "$WIT" --world connector \
    componentize --python-path "$DIR" --output "$OUT" app
