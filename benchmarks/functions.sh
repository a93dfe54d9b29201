#!/usr/bin/env bash
# Function timing: what a probe hit costs under arum against perf (perf probe + perf record) and
# bpftrace, on the same helper function in the same run, and what throttling saves.
#
# 1. Per-hit cost: the helper calls a ~20 ns function N times and times its own loop; each tool
#    probes its entry and return (arum with --no-throttle, so every call is timed; `arum` is the
#    in-kernel engine, `arum-perf` probe records; `bpftrace` times each call per thread into a
#    histogram, as a user timing a function writes it, `bpftrace-count` only counts). The cost of a hit is (loop time probed - loop
#    time bare) / 2N. Tools take turns in rounds; medians. Target: arum's cost at most perf's and
#    bpftrace's (ratios <= 1).
# 2. Throttling: 10 million calls of the same function with arum's default policy against the
#    bare loop (target: at most 5% slower), and the count arum reports.
# 3. Exact counts on a real program: malloc in python3 (a loop of 200,000 buffers of 2 KB, each
#    one malloc: Debian's python calls its own object allocator inline, so PyObject_Malloc is
#    hardly ever called), counted by arum --exact-counts, bpftrace and perf probe + perf stat;
#    the CPU time python reports for its own loop under each, over its bare time. Every run has
#    the same descriptors (stderr /dev/null): python's start-up mallocs depend on them.
#
# Usage: benchmarks/functions.sh [N] [ROUNDS]   (ARUM=path/to/arum to pick a build; default release)
# Needs root (uprobes), perf (linux-perf, from scripts/deps.sh) and bpftrace (installed here from
# Debian's packages when missing: it pulls in LLVM, which the tests do not need).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200000}
rounds=${2:-5}
source benchmarks/probe-peers.sh
install_peer bpftrace
need perf bpftrace cc
tmp=$(mktemp -d)
group=arumbench$$
cleanup() {
  perf probe -q -d "$group:*" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
build_fcalls "$tmp/fcalls"
exe=$tmp/fcalls
perf probe -q -x "$exe" -a "$group:entry=tiny"
perf probe -q -x "$exe" -a "$group:ret=tiny%return"

# The helper's own loop time, in seconds, under each tool.
loop() {
  local out
  case $1 in
    bare) out=$("$exe" tiny "$2") ;;
    arum) out=$("$arum" -o /dev/null --no-throttle -F tiny -- "$exe" tiny "$2") ;;
    arum-perf) out=$("$arum" -o /dev/null --probe-engine perf --no-throttle -F tiny -- "$exe" tiny "$2") ;;
    perf) out=$(perf record -q -o "$tmp/perf.data" -e "$group:entry" -e "$group:ret__return" -- "$exe" tiny "$2" 2>/dev/null) ;;
    bpftrace) out=$(bpftrace -q -e "uprobe:$exe:tiny { @start[tid] = nsecs; } uretprobe:$exe:tiny /@start[tid]/ { @ns = hist(nsecs - @start[tid]); @calls[tid] = count(); delete(@start[tid]); }" -c "$exe tiny $2" 2>/dev/null) ;;
    bpftrace-count) out=$(bpftrace -q -e "uprobe:$exe:tiny { @entries = count(); } uretprobe:$exe:tiny { @returns = count(); }" -c "$exe tiny $2" 2>/dev/null) ;;
    throttled) out=$("$arum" -o "$tmp/throttled.txt" -F tiny -- "$exe" tiny "$2") ;;
  esac
  awk '$1 == "seconds" { print $2 }' <<<"$out"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

tools=(bare arum arum-perf perf bpftrace bpftrace-count)
declare -A times
for ((r = 0; r < rounds; r++)); do
  for t in "${tools[@]}"; do times[$t]+="$(loop "$t" "$n") "; done
done
declare -A med hit
for t in "${tools[@]}"; do med[$t]=$(tr ' ' '\n' <<<"${times[$t]}" | grep . | median); done
echo "Per-hit cost of entry + return probes on a ~20 ns function, $n calls, median of $rounds rounds:"
printf "  %-9s %10s %12s\n" tool "loop (s)" "per hit (us)"
for t in "${tools[@]}"; do
  if [ "$t" = bare ]; then hit[$t]=0; else hit[$t]=$(awk -v p="${med[$t]}" -v b="${med[bare]}" -v n="$n" 'BEGIN { printf "%.3f", (p - b) / (2 * n) * 1e6 }'); fi
  printf "  %-9s %10s %12s\n" "$t" "${med[$t]}" "${hit[$t]}"
done
awk -v a="${hit[arum]}" -v p="${hit[perf]}" -v b="${hit[bpftrace]}" 'BEGIN {
  printf "  ratio arum / perf probe + perf record: %.2f (target <= 1)\n", a / p
  printf "  ratio arum / bpftrace:                 %.2f (target <= 1)\n", a / b }'

big=10000000
declare -a bare_t thr_t
for ((r = 0; r < 3; r++)); do
  bare_t+=("$(loop bare $big)")
  thr_t+=("$(loop throttled $big)")
done
b=$(printf '%s\n' "${bare_t[@]}" | median)
t=$(printf '%s\n' "${thr_t[@]}" | median)
echo "Throttling: $big calls of the same function, arum's default policy, median of 3:"
awk -v b="$b" -v t="$t" 'BEGIN { printf "  bare loop %.4f s, under arum -F tiny %.4f s: ratio %.3f (target <= 1.05)\n", b, t, t / b }'
grep -E "^ tiny:|perturbation" "$tmp/throttled.txt" | sed 's/^/  /'

# 3. malloc in python3: counts and the loop's own CPU time under each tool.
# Debian's interpreter (a python3 earlier on PATH may be a wrapper script).
py=$(readlink -f /usr/bin/python3)
cat >"$tmp/loop.py" <<'PY'
import time
t = time.process_time()
for i in range(200000):
    b = bytearray(2000)
print("cpu", time.process_time() - t)
PY
libc=$(ldd "$py" | awk '/libc.so/ { print $3 }')
perf probe -q -f -x "$libc" -a "$group:malloc=malloc"
pyrun() {
  case $1 in
    bare) "$py" "$tmp/loop.py" 2>/dev/null ;;
    arum) "$arum" --exact-counts -F libc:malloc --format json -o "$tmp/py.json" -- "$py" "$tmp/loop.py" 2>/dev/null
      python3 -c "import json; f = json.load(open('$tmp/py.json'))['functions']['functions'][0]; print('calls', f['calls'])" ;;
    bpftrace) bpftrace -q -e "uprobe:$libc:malloc /pid == cpid/ { @calls = count(); } END { print(@calls); clear(@calls); }" -c "$py $tmp/loop.py" 2>/dev/null |
      sed -n '/^@calls: 0$/d; s/^@calls: /calls /p; s/^cpu /cpu /p' ;;
    perf) perf stat -x, -o "$tmp/pstat" -e "$group:malloc" -- "$py" "$tmp/loop.py" 2>/dev/null
      awk -F, '/malloc/ { print "calls", $1 }' "$tmp/pstat" ;;
  esac
}
echo "malloc in $py: calls and the loop's CPU time, median of $rounds rounds:"
declare -A pcpu pcalls
for ((r = 0; r < rounds; r++)); do
  for t in bare arum bpftrace perf; do
    out=$(pyrun "$t")
    pcpu[$t]+="$(awk '$1 == "cpu" { print $2 }' <<<"$out") "
    pcalls[$t]=$(awk '$1 == "calls" { print $2 }' <<<"$out")
  done
done
pb=$(tr ' ' '\n' <<<"${pcpu[bare]}" | grep . | median)
for t in bare arum bpftrace perf; do
  c=$(tr ' ' '\n' <<<"${pcpu[$t]}" | grep . | median)
  printf "  %-9s calls %-8s cpu %.4f s  (%.2f x bare)\n" "$t" "${pcalls[$t]:--}" "$c" "$(awk -v c="$c" -v b="$pb" 'BEGIN { print c / b }')"
done
