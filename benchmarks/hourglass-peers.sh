#!/usr/bin/env bash
# arum hourglass against its peers, back to back on the same CPU in the same run:
#   the context switch: hourglass's yield-switch gap (two CPU_YIELD threads on one CPU) against
#   `sysbench threads` (two threads taking turns by sched_yield: one system call and one switch
#   per yield, the same operation) and, for scale, `perf bench sched pipe` (µs/op covers two
#   switches, each with a pipe write, a read and a wakeup);
#   dispatch latency: hourglass's LAT thread against rt-tests' cyclictest, 1 ms period.
# Real-time priorities (SCHED_FIFO) when root, so the machine's other tasks stay out.
# Usage: benchmarks/hourglass-peers.sh [SECONDS] [CPU]   (ARUM=path/to/arum; default release)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
cpu=${2:-$(($(nproc) - 1))}
arum=${ARUM:-target/x86_64-unknown-linux-gnu/release/arum}
[ -x "$arum" ] || cargo build --release -q -p arum
for p in perf sysbench cyclictest taskset chrt; do
  command -v $p >/dev/null || { echo "$p is missing: scripts/deps.sh installs it" >&2; exit 1; }
done
if [ "$(id -u)" -eq 0 ]; then
  fifo=(chrt -f 10) yield_prio=RTLOW lat_prio=RTHIGH ct_prio=90
else
  fifo=() yield_prio=NORMAL lat_prio=NORMAL ct_prio=0
  echo "not root: everything at SCHED_OTHER, so other tasks may come in between" >&2
fi

# The median of a "ctxsw: after a yield: ..." or "latency: ..." line, in µs.
median_us() {
  sed -n "s/.*$1.* median \([0-9.]*\) \?\(ns\|us\|µs\|ms\|s\)[,; ].*/\1 \2/p" | head -n 1 |
    awk '{ v = $1; if ($2 == "ns") v /= 1000; else if ($2 == "ms") v *= 1000; else if ($2 == "s") v *= 1e6; print v }'
}

ours=$("$arum" hourglass -n 2 -d "${secs}s" -a -A "$cpu" -p $yield_prio -w CPU_YIELD 100us |
  grep '^ctxsw: after a yield' | median_us 'main cluster')
yield=$("${fifo[@]}" taskset -c "$cpu" sysbench threads --threads=2 --thread-yields=100 --thread-locks=2 \
  --time="$secs" run | awk '/total time:/ { t = $3 + 0 } /total number of events:/ { e = $5 }
  END { print t * 1e6 / (e * 100) }')
per_op=$("${fifo[@]}" taskset -c "$cpu" perf bench sched pipe -l 200000 | awk '/usecs\/op/ { print $1 }')
pipe=$(awk -v x="$per_op" 'BEGIN { print x / 2 }')
echo "context switch on CPU $cpu: hourglass yield gap median ${ours} µs, sysbench threads ${yield} µs per yield," \
  "ratio $(awk -v a="$ours" -v b="$yield" 'BEGIN { printf "%.2f", a / b }');" \
  "perf bench sched pipe ${pipe} µs per switch, ratio $(awk -v a="$ours" -v b="$pipe" 'BEGIN { printf "%.2f", a / b }')"

ours=$("$arum" hourglass -n 1 -d "${secs}s" -A "$cpu" -p $lat_prio -w LAT 1ms | grep '^latency:' | median_us ', min [^,]*,')
# Both hold the CPUs' idle states shallow as root (/dev/cpu_dma_latency); as another user
# neither can, and --laptop tells cyclictest not to try.
laptop=$([ "$(id -u)" = 0 ] || echo --laptop)
hist=$(cyclictest $laptop -q -m -a "$cpu" -t 1 -p $ct_prio -i 1000 -D "$secs" -h 20000 2>/dev/null)
theirs=$(echo "$hist" | awk '
  /^# Histogram Overflows/ { over = $4 + 0 }
  /^[0-9]/ { lat[n] = $1 + 0; cnt[n] = $2 + 0; total += $2; n++ }
  END { total += over; for (i = 0; i < n; i++) { seen += cnt[i]; if (seen * 2 >= total) { print lat[i]; exit } } print "overflow" }')
echo "dispatch latency on CPU $cpu, 1 ms period: hourglass LAT median ${ours} µs, cyclictest median ${theirs} µs," \
  "ratio $(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", a / b }')"
