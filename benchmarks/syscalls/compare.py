#!/usr/bin/env python3
"""The comparison benchmarks/syscalls.sh and syscalls-guest.sh print: per call, the counts and
errors of strace -f -c and of arum's two engines (their JSON reports), what the engines lost, and
what each tool added to the program's elapsed time.

Usage: compare.py DIR BARE_S STRACE_S BPF_S PERF_S   (DIR holds strace.txt, bpf.json, perf.json)
"""
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
