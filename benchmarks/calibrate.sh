#!/usr/bin/env bash
# How long `arum calibrate --quick` and the full suite take on this machine, with the load the
# machine carried meanwhile (other processes' share of the CPUs, as the calibration measured it).
# Usage: benchmarks/calibrate.sh [--quick-only]   (ARUM=path/to/arum to pick a build; default release)
set -euo pipefail
cd "$(dirname "$0")/.."
arum=${ARUM:-target/x86_64-unknown-linux-gnu/release/arum}
[ -x "$arum" ] || cargo build --release -q -p arum
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Runs one calibration and prints its wall time, what it measured and the machine's load.
timed() {
  local name=$1 t0 t1 measured skipped load
  shift
  t0=$(date +%s%N)
  "$arum" calibrate "$@" -o "$out/$name.txt"
  t1=$(date +%s%N)
  skipped=$(grep -c ': skipped: ' "$out/$name.txt" || true)
  measured=$(grep -cE '^  [a-z0-9_]+\.[a-zA-Z0-9_.]+ +[0-9]' "$out/$name.txt" || true)
  load=$(grep -o 'other processes used [0-9]*% of the CPUs' "$out/$name.txt" | head -n 1 || true)
  printf '%-8s %8d ms   %3d measured, %2d skipped   %s\n' "$name" $(((t1 - t0) / 1000000)) \
    "$measured" "$skipped" "${load:-load not measured}"
}

echo "arum calibrate on $(nproc) CPUs ($(uname -r)):"
timed quick --quick
[ "${1:-}" = --quick-only ] || timed full
