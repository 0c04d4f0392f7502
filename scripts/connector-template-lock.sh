#!/usr/bin/env bash
# Writes the Cargo.lock that `levh connector new` gives a new connector crate
# (host/levh/src/cli/template.Cargo.lock): the versions of the SDK's dependencies a new
# crate builds with — those levh itself builds the SDK with — pinned, so its first build
# is the one levh's tests ran. Run it after
# a change to the connector SDK's dependencies; the template test builds with `--locked`
# and fails until the lock matches.
#
#   scripts/connector-template-lock.sh [LEVH_BINARY]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
levh="${1:-$root/target/debug/levh}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
LEVH_HOME="$work/home" "$levh" connector new connector-template --dir "$work/crate" >/dev/null
# Seeded with levh's own lock: the SDK's dependencies keep the versions levh builds it
# with; cargo drops what the crate does not use.
cp "$root/Cargo.lock" "$work/crate/Cargo.lock"
(cd "$work/crate" && cargo metadata --format-version 1 --quiet >/dev/null)
cp "$work/crate/Cargo.lock" "$root/host/levh/src/cli/template.Cargo.lock"
echo "wrote host/levh/src/cli/template.Cargo.lock"
