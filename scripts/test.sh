#!/usr/bin/env bash
# Runs every test of ARUM: formatting and lints, unit and integration tests, then the /dev/arum
# module in QEMU guests (the first run builds a Rust-enabled kernel with the kernel's checkers:
# about 22 CPU-minutes, 11 minutes on 2 idle cores, once the packages are installed, plus the
# installs on a new machine; seconds once cached in ~/.cache/arum-kmod).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cargo fmt --all -- --check
rustfmt --edition 2021 --check arum-kmod/*.rs
cargo clippy --workspace --all-targets -q -- -D warnings
cargo build --workspace -q
cargo test --workspace
arum-kmod/test/run.sh
