#!/usr/bin/env bash
# System calls at a high rate: THREADS threads of tests' syscall_storm make ROUNDS rounds each of
# getppid, a failing openat, and a one-byte write and read on a pipe (4 calls a round; 8 × 125,000
# rounds = 4 million calls). strace -f -c, arum with the in-kernel engine and arum with perf records
# count the same program in the same run; per call the counts and errors of each, then what the
# engines lost and what each tool added to the program's elapsed time.
#
# Target: the bpf engine's counts equal strace's for every call and errno, 0 lost.
#
# Usage: benchmarks/syscalls.sh [THREADS] [ROUNDS]   (ARUM=path/to/arum; default the release build)
# Needs root (or CAP_BPF + CAP_PERFMON) and strace (scripts/deps.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-8}
rounds=${2:-125000}
arum=${ARUM:-target/x86_64-unknown-linux-gnu/release/arum}
[ -x "$arum" ] || cargo build --release -q -p arum
cargo build --release -q -p arum-tests --bin syscall_storm
storm=target/x86_64-unknown-linux-gnu/release/syscall_storm
command -v strace >/dev/null || { echo "strace is missing: run scripts/deps.sh" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
elapsed() { # elapsed seconds of a command, its output discarded
  local t0=$EPOCHREALTIME
  "$@" >/dev/null 2>&1
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }'
}
echo "cpus=$(nproc) threads=$threads rounds=$rounds calls=$((4 * threads * rounds))"
bare=$(elapsed "$storm" "$threads" "$rounds")
strace_s=$(elapsed strace -f -c -o "$tmp/strace.txt" "$storm" "$threads" "$rounds")
bpf_s=$(elapsed "$arum" --probe-engine bpf --syscalls --format json -o "$tmp/bpf.json" -- "$storm" "$threads" "$rounds")
perf_s=$(elapsed "$arum" --probe-engine perf --syscalls --format json -o "$tmp/perf.json" -- "$storm" "$threads" "$rounds")
python3 benchmarks/syscalls/compare.py "$tmp" "$bare" "$strace_s" "$bpf_s" "$perf_s"
