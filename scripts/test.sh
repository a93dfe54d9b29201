#!/usr/bin/env bash
# Runs every test of ARUM: formatting and lints, unit and integration tests, then the /dev/arum
# module in a QEMU guest (builds a Rust-enabled kernel the first time: about 15 minutes on a
# fresh 2-core machine, seconds once cached in ~/.cache/arum-kmod).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -q -- -D warnings
cargo build --workspace -q
cargo test --workspace
arum-kmod/test/run.sh
