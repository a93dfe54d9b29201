#!/usr/bin/env bash
# Writes arum/startup-order.txt: the functions of arum that measured runs execute, for the
# linker to place together (see arum/build/startup_order.rs). Runs typical invocations under
# valgrind's callgrind (apt-get install valgrind), which records every function executed, keeps
# the names the binary defines, and writes Rust names with their hashes as `*` where that names
# one function (tools/startup-order/patterns.py), so most of the list stays right across
# dependency and toolchain updates. Run it again when the start-up path's
# code moves (tools/startup-order/check.sh, run by the tests, says when), then check the effect
# with benchmarks/overhead.sh (its page-fault column).
# Usage: tools/startup-order/generate.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
# The names must be those of the release build: the same profile, with the symbol table kept.
source tools/startup-order/symbols.sh
source tools/startup-order/executed.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
executed_names "$work" >"$work/executed"
out=arum/startup-order.txt
{
  echo "# Functions a measured run executes, placed together by the linker (see"
  echo "# arum/build/startup_order.rs): Rust names with their hashes as * where that names one function."
  echo "# Made by tools/startup-order/generate.sh; do not edit."
  python3 tools/startup-order/patterns.py --defined "$work/defined" <"$work/executed"
} >"$out"
echo "$(grep -vc '^#' "$out") functions written to $out"
