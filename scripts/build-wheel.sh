#!/usr/bin/env bash
# Builds levh's release binary once and packs it twice, into OUT_DIR (default
# target/dist):
#
#   levh_rs-<version>-py3-none-<platform>.whl   for `pipx install`, `uv tool install`,
#                                               `uvx levh-rs` (pyproject.toml; maturin)
#   levh-<version>-<target>.tar.gz              the binary, README.md and LICENSE
#   levh-<version>-<target>.tar.gz.sha256       `sha256sum -c` in OUT_DIR verifies it
#
# maturin (PyPI, pinned in .ci/run) runs the one `cargo build --release`: the wheel's
# `levh` is the archive's, byte for byte. It is taken from `.cache/maturin` (as .ci/run
# installs it), else from PATH; MATURIN names another. The build is the workspace's
# release profile as it is (thin LTO, 4 codegen units); the binary is stripped of its
# symbol table (63 MB instead of 78 MB; no time).
set -euo pipefail
cd "$(dirname "$0")/.."

out=$(realpath -m "${1:-target/dist}")
maturin=${MATURIN:-}
if [ -z "$maturin" ]; then
    if [ -x .cache/maturin/bin/maturin ]; then
        maturin=.cache/maturin/bin/maturin
    elif command -v maturin >/dev/null 2>&1; then
        maturin=maturin
    else
        echo "build-wheel.sh: no maturin (python3 -m venv .cache/maturin &&" \
            ".cache/maturin/bin/pip install maturin==1.16.0, as .ci/run does)" >&2
        exit 1
    fi
fi

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT

"$maturin" build --release --locked --strip --out "$staging/wheel"
wheels=("$staging"/wheel/levh_rs-*.whl)
if [ "${#wheels[@]}" -ne 1 ]; then
    echo "build-wheel.sh: expected one wheel, maturin wrote: ${wheels[*]}" >&2
    exit 1
fi
wheel=${wheels[0]}

# The archive gets the very binary inside the wheel (a wheel is a zip file; Python's
# zipfile drops the file modes, pip sets them again on install).
python3 -m zipfile -e "$wheel" "$staging/unpacked"
binary=$(echo "$staging"/unpacked/levh_rs-*.data/scripts/levh)
chmod +x "$binary"
version=$("$binary" --version | awk '{print $2}')
target=$(rustc -vV | sed -n 's/^host: //p')
name="levh-$version-$target"
mkdir "$staging/$name"
install -m 0755 "$binary" "$staging/$name/levh"
install -m 0644 README.md LICENSE "$staging/$name/"

mkdir -p "$out"
# A rebuild replaces what an earlier one left, so OUT_DIR holds one wheel per platform.
rm -f "$out"/levh_rs-"$version"-*.whl "$out/$name.tar.gz" "$out/$name.tar.gz.sha256"
cp "$wheel" "$out/"
# Same bytes for the same binary: no owners, times or ordering from this machine.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
    -C "$staging" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")

ls -l "$out/$(basename "$wheel")" "$out/$name.tar.gz" "$out/$name.tar.gz.sha256"
