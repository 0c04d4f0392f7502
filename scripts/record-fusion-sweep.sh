#!/usr/bin/env bash
# Regenerates fixtures/benchmark/fusion-sweep.json: every shipped conversational set stored
# once and ranked with fusion weights 0.1..0.9, with the hash embedder and with the local
# model (the test assets' int8 all-MiniLM-L6-v2). A unit test in levh-eval checks the
# defaults against this table and fails when a shipped set changed since it was recorded.
#
#   scripts/record-fusion-sweep.sh [LEVH_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
levh=${1:-target/release/levh}
eval "$(scripts/fetch-test-assets.sh)"
export ORT_DYLIB_PATH LEVH_MODEL_DIR
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
LEVH_HOME=$home LEVH_EMBEDDER=hash "$levh" benchmark --sweep-fusion --json > "$home/hash.json"
LEVH_HOME=$home LEVH_EMBEDDER=local "$levh" benchmark --sweep-fusion --json > "$home/local.json"
python3 - "$home" > fixtures/benchmark/fusion-sweep.json <<'PY'
import json, sys
home = sys.argv[1]
print(json.dumps({
    "how": "scripts/record-fusion-sweep.sh: levh benchmark --sweep-fusion --json, hash and local",
    "hash": json.load(open(f"{home}/hash.json")),
    "local": json.load(open(f"{home}/local.json")),
}, indent=1))
PY
echo "wrote fixtures/benchmark/fusion-sweep.json"
