#!/usr/bin/env bash
# Function durations as arum reports them (`-F`, every call timed) against a reference, in the
# same run:
#
# 1. spin_for(ns) of the test helper (tests/native/fcalls.c) times itself by the clock arum's
#    probes use: 1,000 calls of 200 ns, 2 µs and 20 µs. arum's mean against the function's own
#    (target: within 10% at 2 and 20 µs; at 200 ns within 50%, or the report marks the function
#    as below the probe's resolution: `too_short`).
# 2. malloc in `python3 -c 1` (about 1,000 calls of python's start-up, most of them short, a few
#    that map memory): arum against uftrace's library-call tracing (`uftrace record --force -F
#    malloc`), the two taking turns in rounds. A mean over 1,000 calls of this kind moves by a
#    quarter from run to run under either tool (its few long calls), so the figure to judge is
#    the mean over every round's calls, printed last (target: within 30% of uftrace's).
#
# Usage: benchmarks/durations.sh [ROUNDS]   (ARUM=path/to/arum to pick a build; default release)
# Needs root (uprobes) and uftrace (installed from Debian's packages when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
source benchmarks/probe-peers.sh
install_peer uftrace
need uftrace cc python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build_fcalls "$tmp/fcalls"

# One function's figures from arum's JSON report: "CALLS TOTAL_NS MEAN_NS TOO_SHORT P50_NS".
arum_fn() {
  python3 - "$1" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["functions"]["functions"][0]
i = f["inclusive"]
print(f["timed_calls"], int(i["total_ns"]), i["mean_ns"], "yes" if f["too_short"] else "no", i["p50_ns"])
PY
}

# The medians are printed beside the means: a preemption inside a call lengthens it by its own
# clock too, one in the probes' path only by arum's, so on a busy machine the means part while
# the medians (calls nothing interrupted) still agree.
echo "spin_for(ns), 1000 calls, arum --no-throttle against the function's own clock:"
printf "  %6s %6s %10s %10s %7s %10s %10s %7s %10s\n" ns round "own mean" "arum mean" ratio \
  "own p50" "arum p50" ratio too_short
declare -A worst
short200=""
for ((r = 1; r <= rounds; r++)); do
  for ns in 200 2000 20000; do
    "$arum" --no-throttle -F spin_for --format json -o "$tmp/spin.json" -- \
      "$tmp/fcalls" spin 1000 "$ns" >"$tmp/own" 2>/dev/null
    own=$(awk '$1 == "mean_ns" { print $2 }' "$tmp/own")
    own50=$(awk '$1 == "p50_ns" { print $2 }' "$tmp/own")
    read -r _ _ mean short p50 < <(arum_fn "$tmp/spin.json")
    ratio=$(awk -v a="$mean" -v o="$own" 'BEGIN { printf "%.3f", a / o }')
    printf "  %6s %6s %10.0f %10.0f %7s %10.0f %10.0f %7.3f %10s\n" "$ns" "$r" "$own" "$mean" \
      "$ratio" "$own50" "$p50" "$(awk -v a="$p50" -v o="$own50" 'BEGIN { print a / o }')" "$short"
    # The round furthest from the function's own mean, per length.
    worst[$ns]=$(awk -v w="${worst[$ns]:-1}" -v x="$ratio" \
      'BEGIN { d = x - 1; e = w - 1; print ((d < 0 ? -d : d) > (e < 0 ? -e : e)) ? x : w }')
    [ "$ns" != 200 ] || short200+="$short "
  done
done
for ns in 2000 20000; do
  awk -v ns="$ns" -v w="${worst[$ns]}" 'BEGIN { printf "  %s ns: the furthest round %.2f of its own mean (target within 0.90-1.10)\n", ns, w }'
done
if grep -q no <<<"$short200"; then
  awk -v w="${worst[200]}" 'BEGIN { printf "  200 ns: the furthest round %.2f of its own mean (target within 0.50-1.50)\n", w }'
else
  echo "  200 ns: marked below the probe's resolution (too_short) in every round"
fi

# 2. malloc in python's start-up. Debian's interpreter (a python3 earlier on PATH may be a
# wrapper script); the same descriptors for every run (python's start-up mallocs depend on them).
py=$(readlink -f /usr/bin/python3)
# uftrace's report: "TOTAL UNIT CALLS malloc", the total in its unit; printed as "CALLS TOTAL_NS".
uftrace_malloc() {
  uftrace report -d "$tmp/uft" -f total,call -F malloc 2>/dev/null | awk '
    $NF == "malloc" {
      m = ($2 == "ns") ? 1 : ($2 == "us") ? 1e3 : ($2 == "ms") ? 1e6 : ($2 == "s") ? 1e9 : -1
      if (m < 0) exit 1
      printf "%d %.0f\n", $3, $1 * m
    }'
}
echo "malloc in $py -c 1: mean duration per call, arum --no-throttle against uftrace, $rounds rounds:"
printf "  %6s %12s %12s %12s %12s %7s\n" round "arum calls" "arum (ns)" "uftrace calls" "uftrace (ns)" ratio
a_calls=0 a_total=0 u_calls=0 u_total=0 u_means=""
for ((r = 1; r <= rounds; r++)); do
  "$arum" --no-throttle -F libc:malloc --format json -o "$tmp/py.json" -- "$py" -c 1 \
    </dev/null >/dev/null 2>&1
  read -r ac at am _ < <(arum_fn "$tmp/py.json")
  rm -rf "$tmp/uft"
  uftrace record --force -F malloc -d "$tmp/uft" -- "$py" -c 1 </dev/null >/dev/null 2>&1
  read -r uc ut < <(uftrace_malloc)
  um=$(awk -v t="$ut" -v c="$uc" 'BEGIN { print t / c }')
  u_means+="$um "
  printf "  %6s %12s %12.0f %12s %12.0f %7.2f\n" "$r" "$ac" "$am" "$uc" "$um" \
    "$(awk -v a="$am" -v u="$um" 'BEGIN { print a / u }')"
  a_calls=$((a_calls + ac)) a_total=$((a_total + at)) u_calls=$((u_calls + uc)) u_total=$((u_total + ut))
done
# The noise a single round's comparison carries: how far uftrace's own round means fall from
# its mean over all rounds.
awk -v ac="$a_calls" -v at="$a_total" -v uc="$u_calls" -v ut="$u_total" -v means="$u_means" 'BEGIN {
  pooled = ut / uc
  n = split(means, m, " ")
  lo = hi = m[1] / pooled
  for (i = 2; i <= n; i++) { r = m[i] / pooled; if (r < lo) lo = r; if (r > hi) hi = r }
  printf "  uftrace against itself: its round means %.2f-%.2f of its mean over all rounds\n", lo, hi
  printf "  over all rounds: arum %.0f ns over %d calls, uftrace %.0f ns over %d calls: ratio %.2f (target 0.70-1.30)\n",
    at / ac, ac, pooled, uc, (at / ac) / pooled }'
