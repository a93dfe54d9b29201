#!/usr/bin/env bash
# Builds arum and measures a real program with it: xz compressing arum's own binary on 2 threads.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cargo build --release -q -p arum-cli
target/release/arum --self-timing -- xz -9 -T2 -c target/release/arum >/dev/null
