#!/usr/bin/env bash
# What the built-in event tables cost: start-up time when a hardware event is named, against a
# software-only run (the tables are compiled-in data: only the CPU's table is looked at), with
# perf stat doing the same as the peer; and the release binary's size with every table in it.
# The two runs of each pair alternate, so a change of load during the benchmark hits both alike.
# Usage: benchmarks/tables.sh [RUNS]   (ARUM=path/to/arum to pick a build; default release)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-500}
arum=${ARUM:-target/x86_64-unknown-linux-gnu/release/arum}
[ -x "$arum" ] || cargo build --release -q -p arum
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf" >&2; exit 1; }

# CPU time (arum and the program, task-clock) and wall time of command A and of command B, in
# microseconds, from perf stat -r: $runs runs of each, in five alternating rounds so that a change
# of load hits both alike. CPU time is what start-up work costs; wall time also holds the wait
# for a CPU on a busy machine. Prints "cpuA wallA cpuB wallB".
pair_us() {
  local -n a=$1 b=$2
  local n=$((runs / 5)) ca=0 wa=0 cb=0 wb=0 c w r
  measure() { # prints "cpu_us wall_us" of one perf stat -r $n
    perf stat -r "$n" -e task-clock -- "$@" 2>&1 >/dev/null |
      awk '/msec task-clock/{c=$1} /seconds time elapsed/{w=$1} END{printf "%d %d\n", c*1000, w*1e6}'
  }
  for r in 1 2 3 4 5; do
    read -r c w < <(measure "${a[@]}"); ca=$((ca + c)); wa=$((wa + w))
    read -r c w < <(measure "${b[@]}"); cb=$((cb + c)); wb=$((wb + w))
  done
  echo "$((ca / 5)) $((wa / 5)) $((cb / 5)) $((wb / 5))"
}

row() { # label, then CPU and wall time of the software-only and the hardware run
  printf '%-52s %7d %7d %+7d   %7d %7d %+7d\n' "$1" "$2" "$4" "$(($4 - $2))" "$3" "$5" "$(($5 - $3))"
}

sw=("$arum" -o /dev/null -e task-clock -- /bin/true)
hw=("$arum" -o /dev/null -e task-clock,cycles -- /bin/true)
# The largest table (Cascade Lake, 2,300 events), a native name found by binary search.
big=("$arum" --cpu GenuineIntel-6-55-7 -o /dev/null -e task-clock,OCR.ALL_READS.ANY_RESPONSE -- /bin/true)
# Without a table: a generic event.
none=("$arum" --cpu GenuineIntel-19-1 -o /dev/null -e task-clock,cycles -- /bin/true)
psw=(perf stat -e task-clock /bin/true)
phw=(perf stat -e task-clock,cycles /bin/true)

cpu=$("$arum" info | awk -F'  +' '/^cpu family/{print $2}')
table=$("$arum" info | awk -F'  +' '/^microarchitecture/{print $2}')
echo "arum $("$arum" --version | awk '{print $2}') on $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); this CPU: $cpu, $table"
echo "$runs runs of each command (perf stat -r, five alternating rounds); mean per run, µs"
printf '%-52s %23s   %23s\n' "" "CPU time (task-clock)" "wall time"
printf '%-52s %7s %7s %7s   %7s %7s %7s\n' "" software +hw added software +hw added
read -r cs ws ch wh < <(pair_us sw hw); row "arum -e task-clock[,cycles] (this CPU's table)" "$cs" "$ws" "$ch" "$wh"
added=$((ch - cs)); added_wall=$((wh - ws))
read -r cs ws ch wh < <(pair_us sw big); row "arum --cpu 6-55-7 -e task-clock[,OCR.ALL_READS...]" "$cs" "$ws" "$ch" "$wh"
big_added=$((ch - cs))
read -r cs ws ch wh < <(pair_us sw none); row "arum --cpu 19-1 -e task-clock[,cycles] (no table)" "$cs" "$ws" "$ch" "$wh"
read -r cs ws ch wh < <(pair_us psw phw); row "perf stat -e task-clock[,cycles] (the peer)" "$cs" "$ws" "$ch" "$wh"
perf_added=$((ch - cs))

# The same work inside one fresh process, without the counting back-end: CPUID, finding the
# CPU's table, resolving the names, choosing counters (arum-events/examples/plan_cost.rs).
cost=target/x86_64-unknown-linux-gnu/release/examples/plan_cost
[ -x "$cost" ] || cargo build --release -q -p arum-events --example plan_cost
inproc() { # mean µs over $runs fresh processes
  local s=0 i
  for ((i = 0; i < runs; i++)); do s=$((s + $("$cost" "$@"))); done
  echo $((s / runs / 1000))
}
echo
echo "planning alone, in a fresh process (mean of $runs): task-clock $(inproc task-clock) µs;" \
  "task-clock,cycles $(inproc task-clock cycles) µs;" \
  "the largest table (--cpu 6-55-7, OCR.ALL_READS.ANY_RESPONSE) $(inproc --cpu GenuineIntel-6-55-7 task-clock OCR.ALL_READS.ANY_RESPONSE) µs;" \
  "no table (--cpu 19-1, cycles) $(inproc --cpu GenuineIntel-19-1 task-clock cycles) µs"

size=$(stat -c %s "$arum")
limit=$((8 * 1024 * 1024))
blob=$(ls -t target/x86_64-unknown-linux-gnu/release/build/arum-events-*/out/tables.pack 2>/dev/null | head -n 1)
tables=$(ls event-tables/*.toml | grep -vc /common.toml)
echo
echo "naming a hardware event adds $added µs of CPU time ($added_wall µs wall) to arum -- true; with the largest table $big_added µs (budget 200 µs); perf stat adds $perf_added µs"
printf 'release binary %s: %.2f MiB (limit 8 MiB, %.0f%% of it), with %d tables compiled in%s\n' \
  "$arum" "$(echo "$size / 1048576" | bc -l)" "$(echo "100 * $size / $limit" | bc -l)" "$tables" \
  "${blob:+ ($(($(stat -c %s "$blob") / 1024)) KiB of compressed table data)}"
