#!/usr/bin/env bash
# Runs every test of ARUM: formatting and lints, unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -q -- -D warnings
cargo build --workspace -q
cargo test --workspace
