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
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }
# The names must be those of the release build: the same profile, with the symbol table kept.
source tools/startup-order/symbols.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=(
  "-- /bin/true"
  "-o $work/r.txt -- /bin/true"
  "-o /dev/null -e task-clock,page-faults -- /bin/true"
  "--format json -o $work/r.json -e task-clock,page-faults,context-switches -- /bin/true"
  "--format csv -o $work/r.csv -e cycles,instructions -- /bin/true"
  "-e task-clock -I 5 -- sleep 0.02"
  "-- sleep 0.01"
)
i=0
for args in "${runs[@]}"; do
  # shellcheck disable=SC2086 # the arguments are words
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$i.%p" \
    "$arum" $args >/dev/null 2>&1 || true
  i=$((i + 1))
done
defined_names >"$work/defined"
cat "$work"/cg.* | sed -n -E 's/^c?fn=\([0-9]+\) (.*)$/\1/p' | sed -E "s/'[0-9]+$//" | sort -u >"$work/run"
# Under valgrind arum launches with fork (valgrind cannot run a clone that shares memory, see
# arum-core/src/launch/raw.rs) and waits without a pidfd (valgrind knows no pidfd_open), so the
# functions of the usual launch and wait are added by name.
grep -E '6launch5(child20clone_sharing_memory|child5entry|stack10ChildStack)|3nix4poll4poll|3nix6unistd7sysconf|^__sysconf$|^__getpagesize$|^__pthread_mutex_(un)?lock$' "$work/defined" >>"$work/run" || true
# glibc picks the variant of a string function (memcpy, strlen...) for the CPU at start, and
# valgrind's emulated CPU gets another than a real one (or valgrind runs its own): every variant
# that a CPU of today may get (SSE2, AVX2, EVEX, AVX-512; not the TSX ones) is listed, of the
# families the run calls and of those every start calls.
{
  sed -n -E 's/^(__(mem|str|stp|raw|wmem|wcs)[a-z0-9]*)_(sse2|ssse3|sse4|avx|avx2|evex|avx512)(_.*)?$/\1/p' "$work/run"
  printf '%s\n' __memcpy __memmove __memset __memcmp __memchr __strlen __strcmp __strchr __strrchr
} | sort -u | while read -r family; do
  grep -E "^${family}_(sse2|avx|avx2|evex|avx512)(_unaligned)?(_erms)?$" "$work/defined" || true
done >>"$work/run"
sort -u -o "$work/run" "$work/run"
out=arum/startup-order.txt
{
  echo "# Functions a measured run executes, placed together by the linker (see"
  echo "# arum/build/startup_order.rs): Rust names with their hashes as * where that names one function."
  echo "# Made by tools/startup-order/generate.sh; do not edit."
  comm -12 "$work/run" "$work/defined" | python3 tools/startup-order/patterns.py --defined "$work/defined"
} >"$out"
echo "$(grep -vc '^#' "$out") functions written to $out"
