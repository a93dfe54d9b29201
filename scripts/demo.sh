#!/usr/bin/env bash
# Builds arum and measures a real program with it: xz compressing 4 copies of arum's own binary
# on 2 threads (4 MiB blocks, so each thread gets blocks of its own), with two software events.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cargo build --release -q -p arum
input=$(mktemp)
trap 'rm -f "$input"' EXIT
for _ in 1 2 3 4; do cat target/x86_64-unknown-linux-gnu/release/arum; done >"$input"
target/x86_64-unknown-linux-gnu/release/arum --self-timing -e task-clock,context-switches -- \
  xz -6 -T2 --block-size=4MiB -c "$input" >/dev/null
