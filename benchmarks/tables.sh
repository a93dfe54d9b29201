#!/usr/bin/env bash
# What the built-in event tables cost: start-up time when a hardware event is named, against a
# software-only run (the tables are compiled-in data: only the CPU's table is looked at), with
# perf stat doing the same as the peer; and the release binary's size with every table in it.
# The two runs of each pair alternate, so a change of load during the benchmark hits both alike.
# Usage: benchmarks/tables.sh [RUNS]   (ARUM=path/to/arum to pick a build; default release)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-400}
arum=${ARUM:-target/release/arum}
[ -x "$arum" ] || cargo build --release -q -p arum-cli
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf" >&2; exit 1; }

# Mean wall time in microseconds of command A and of command B, run alternately $runs times
# each (output discarded). Prints "A B".
pair_us() {
  local -n a=$1 b=$2
  local ta=0 tb=0 t0 t1 i
  "${a[@]}" >/dev/null 2>&1 || true # warm the page cache
  "${b[@]}" >/dev/null 2>&1 || true
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N); "${a[@]}" >/dev/null 2>&1 || true; t1=$(date +%s%N); ta=$((ta + t1 - t0))
    t0=$(date +%s%N); "${b[@]}" >/dev/null 2>&1 || true; t1=$(date +%s%N); tb=$((tb + t1 - t0))
  done
  echo "$((ta / runs / 1000)) $((tb / runs / 1000))"
}

row() { # label, software-only µs, with-hardware µs
  printf '%-58s %8d µs %8d µs %+8d µs\n' "$1" "$2" "$3" "$(($3 - $2))"
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
echo "$runs runs of each command, alternating; mean wall time per run"
printf '%-58s %11s %11s %11s\n' "" "software" "+hardware" "added"
read -r s h < <(pair_us sw hw); row "arum -e task-clock[,cycles] (this CPU's table)" "$s" "$h"; added=$((h - s))
read -r s h < <(pair_us sw big); row "arum --cpu 6-55-7 -e task-clock[,OCR.ALL_READS...]" "$s" "$h"
big_added=$((h - s))
read -r s h < <(pair_us sw none); row "arum --cpu 19-1 -e task-clock[,cycles] (no table)" "$s" "$h"
read -r s h < <(pair_us psw phw); row "perf stat -e task-clock[,cycles] (peer)" "$s" "$h"
perf_added=$((h - s))

size=$(stat -c %s "$arum")
limit=$((8 * 1024 * 1024))
blob=$(ls -t target/release/build/arum-events-*/out/tables.bin 2>/dev/null | head -n 1)
tables=$(ls event-tables/*.toml | wc -l)
echo
echo "naming a hardware event adds $added µs to arum -- true (the largest table: $big_added µs; budget 200 µs); perf stat: $perf_added µs"
printf 'release binary %s: %.2f MiB (limit 8 MiB, %.0f%% of it), with %d tables compiled in%s\n' \
  "$arum" "$(echo "$size / 1048576" | bc -l)" "$(echo "100 * $size / $limit" | bc -l)" "$tables" \
  "${blob:+ ($(($(stat -c %s "$blob") / 1024)) KiB of table data)}"
