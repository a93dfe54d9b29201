#!/bin/busybox sh
# /init of benchmarks/scale.sh's guests: measures arum at this guest's CPU count and prints
# "scale: " lines on the console, then powers the guest off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
cpus=$(grep -c ^processor /proc/cpuinfo)
say() { echo "scale: $*"; }
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
events=task-clock,page-faults,context-switches,cpu-migrations

# Where set-up time goes: one perf_event_open per event and CPU against one per event.
/guestbench opencost 6 | sed 's/^/scale: /'

# arum's self-timed set-up phase 2 for four software events, as it chooses and per CPU.
setup2() {
  for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
    /arum --self-timing -e $events -o /tmp/self.txt "$@" -- /bin/true
    awk '/set-up phase 2/ {print $NF}' /tmp/self.txt
  done | median
}
s_default=$(setup2)
s_percpu=$(setup2 --per-cpu)
say "setup2_us default=$s_default per_cpu=$s_percpu"
# Whole CPUs: a counter per event and CPU either way, opened by perf_event_open one at a time or
# by the module on every CPU at once.
if insmod /arum.ko; then
  say "setup2_us system scope: perf_event_open=$(setup2 -a --backend perf) /dev/arum=$(setup2 -a --backend kmod)"
  rmmod arum
fi
# Each self-timed phase of a plain run, for where the rest of the added time goes.
for i in 1 2 3 4 5 6 7 8 9; do /arum --self-timing -o /tmp/self.txt -- /bin/true; cat /tmp/self.txt; done |
  awk '/phase [123]/ {k = $1 substr($2, 1, 4) $3; v[k] = v[k] " " $NF} END {for (k in v) print k v[k]}' |
  sort | sed 's/^/scale: self-timing /'

# Added wall time over bare true: arum (plain and counting two events) against GNU time -v.
/guestbench spawn 6 5 bare /bin/true \
  ::: arum /arum -o /dev/null -- /bin/true \
  ::: arum_ev /arum -o /dev/null -e task-clock,page-faults -- /bin/true \
  ::: arum_nomem /arum -o /dev/null --no-memory-sampling -- /bin/true \
  ::: time /usr/bin/time -v /bin/true >/tmp/spawn.txt
sed 's/^/scale: /' /tmp/spawn.txt
mean() { sed -n "s/.*name=$1 .*mean_us=\([0-9.]*\).*/\1/p" /tmp/spawn.txt; }
ratio=$(awk -v b="$(mean bare)" -v a="$(mean arum_ev)" -v t="$(mean time)" 'BEGIN {printf "%.2f", (a - b) / (t - b)}')

# Each sampler thread's CPU (the report's self_timing.samplers) as a share of one CPU, around
# 8 s of a program of 1000 sleeping threads, each sampler at its default period (-I at 100 ms).
# (The noise probe is left out: it takes idle CPU by design.)
/arum --format json -o /tmp/s.json --ambient -I 100 -e task-clock,page-faults -- /guestbench threads 1000 8
shares=$(awk -F': ' '/"name": "arum-/ {n = $2; gsub(/[",]/, "", n)}
  /"cpu_ns":/ && n != "" {c = $2; gsub(/,/, "", c); printf "%s=%.2f ", n, c / 8e9 * 100; n = ""}' /tmp/s.json)
say "sampler_cpu_pct $shares(stretched by the budget: $(grep -c '"stretched_to_ns": [0-9]' /tmp/s.json))"
pct=$(echo "$shares" | tr ' ' '\n' | sed -n 's/.*=//p' | sort -n | tail -n 1)

# The text report of a system-wide count on every CPU, in lines.
lines=$(/arum -e task-clock -a -- sleep 1 2>&1 | wc -l)
say "report_lines=$lines (arum -e task-clock -a -- sleep 1)"

echo "cpus=$cpus setup2_us=$s_default added_vs_time=$ratio sampler_cpu_pct=$pct setup2_per_cpu_us=$s_percpu report_lines=$lines"
poweroff -f
