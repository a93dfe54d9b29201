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
python3 - "$tmp" "$bare" "$strace_s" "$bpf_s" "$perf_s" <<'PY'
import json, sys
tmp, bare, strace_s, bpf_s, perf_s = sys.argv[1], *map(float, sys.argv[2:])
peer = {}
for line in open(f"{tmp}/strace.txt"):
    w = line.split()
    if len(w) in (5, 6) and w[3].isdigit():
        peer[w[-1]] = (int(w[3]), int(w[4]) if len(w) == 6 else 0)
def ours(name):
    s = json.load(open(f"{tmp}/{name}.json"))["syscalls"]
    return s, {c["name"]: (c["calls"], c["errors"]) for c in s["calls"]}
bpf, bpf_calls = ours("bpf")
perf, perf_calls = ours("perf")
print(f"{'call':<10} {'strace':>18} {'arum bpf':>18} {'arum perf':>18}")
fmt = lambda v: f"{v[0]:,} ({v[1]:,} err)" if v else "-"
same = True
for name in ["getppid", "openat", "write", "read"]:
    p, b, q = peer.get(name), bpf_calls.get(name), perf_calls.get(name)
    same &= p == b
    print(f"{name:<10} {fmt(p):>18} {fmt(b):>18} {fmt(q):>18}")
print(f"engine: bpf={bpf['engine']} uncounted={bpf['uncounted']}; perf={perf['engine']} lost={perf['lost']:,} records")
print(f"elapsed s: bare {bare:.2f}, strace {strace_s:.2f} ({strace_s / bare:.1f}x), "
      f"arum bpf {bpf_s:.2f} ({bpf_s / bare:.2f}x), arum perf {perf_s:.2f} ({perf_s / bare:.2f}x)")
print(f"bpf_equals_strace={'yes' if same else 'no'} bpf_uncounted={bpf['uncounted']} perf_lost={perf['lost']}")
PY
