#!/usr/bin/env bash
# Runs every test of ARUM: formatting and lints, unit and integration tests, then the /dev/arum
# module in QEMU guests and its mutants against the checks that must catch them (the first run
# builds a Rust-enabled kernel with the kernel's checkers: about 22 CPU-minutes, 11 minutes on 2
# idle cores, once the packages are installed, plus the installs on a new machine; seconds once
# cached in ~/.cache/arum-kmod).
set -euo pipefail
cd "$(dirname "$0")/.."
# A clean build and test run fills about 5 GiB under target/, and the guests' kernel 3.5 GiB in
# ~/.cache/arum-kmod; short of room the linker dies mid-build with a message that hides why.
free_gib=$(($(df -Pk . | awk 'NR == 2 { print $4 }') / 1024 / 1024))
if ((free_gib < 6)); then
  echo "test.sh: only $free_gib GiB free here, and a clean run needs about 5 GiB (more for a first kernel build): free space first if the build fails with 'No space left on device'" >&2
fi
scripts/deps.sh
cargo fmt --all -- --check
rustfmt --edition 2021 --check arum-kmod/*.rs
cargo clippy --workspace --all-targets -q -- -D warnings
# The engine's modules import only downward: no cycle, at module or top-level granularity.
python3 -m unittest discover -s tools/module-graph -p 'test_*.py'
python3 tools/module-graph/check.py arum-core/src
# One implementation of each shared thing: the command line, units, statistics, writer, tables.
tools/single-source/check.sh
python3 -m unittest discover -s tools/startup-order -p 'test_*.py'
tools/startup-order/check.sh
cargo build --workspace -q
cargo test --workspace
arum-kmod/test/run.sh
# Each check a mutant of the module must fail (docs/kmod.md): about 7 minutes here.
arum-kmod/test/mutants.sh
