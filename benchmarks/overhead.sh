#!/usr/bin/env bash
# Launch overhead of arum against its peers, measured in the same run:
#   bare /bin/true, arum -- true, GNU time -v true, perf stat true.
# Prints the wall time each adds per run over bare `true`, each one's peak RSS, and ratios.
# Usage: benchmarks/overhead.sh [RUNS]   (ARUM=path/to/arum to pick a build; default release)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-300}
arum=${ARUM:-target/release/arum}
[ -x "$arum" ] || cargo build --release -q -p arum-cli
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "GNU time is missing: apt-get install time" >&2; exit 1; }

# Mean wall time of one run, in microseconds, over $runs runs (output discarded).
mean_us() {
  local t0 t1 i
  t0=$(date +%s%N)
  for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1; done
  t1=$(date +%s%N)
  echo $(((t1 - t0) / runs / 1000))
}
# Peak RSS in KiB of the measuring tool itself (largest of 5 runs).
peak_kib() {
  local max=0 v i
  for i in 1 2 3 4 5; do
    v=$(/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1)
    ((v > max)) && max=$v
  done
  echo "$max"
}

sw_events=task-clock,page-faults
mean_us /bin/true >/dev/null # warm the page cache
bare=$(mean_us /bin/true)
t_arum=$(mean_us "$arum" -o /dev/null -- /bin/true)
t_time=$(mean_us /usr/bin/time -v /bin/true)
t_perf=$(mean_us perf stat -e "$sw_events" /bin/true)
t_arum_ev=$(mean_us "$arum" -o /dev/null -e "$sw_events" -- /bin/true)
m_arum=$(peak_kib "$arum" -o /dev/null -- /bin/true)
m_perf=$(peak_kib perf stat -e "$sw_events" /bin/true)
m_arum_ev=$(peak_kib "$arum" -o /dev/null -e "$sw_events" -- /bin/true)
m_time=$(peak_kib /usr/bin/time -v /bin/true)

added() { echo $(($1 - bare)); }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
printf '%-44s %12s %14s %12s\n' tool "wall/run us" "added us/run" "peak RSS KiB"
printf '%-44s %12d %14s %12s\n' "/bin/true" "$bare" - -
printf '%-44s %12d %14d %12d\n' "arum -- true" "$t_arum" "$(added "$t_arum")" "$m_arum"
printf '%-44s %12d %14d %12d\n' "/usr/bin/time -v true" "$t_time" "$(added "$t_time")" "$m_time"
printf '%-44s %12d %14d %12d\n' "perf stat -e $sw_events true" "$t_perf" "$(added "$t_perf")" "$m_perf"
printf '%-44s %12d %14d %12d\n' "arum -e $sw_events -- true" "$t_arum_ev" "$(added "$t_arum_ev")" "$m_arum_ev"
echo
echo "arum added wall time / GNU time's: $(ratio "$(added "$t_arum")" "$(added "$t_time")")"
echo "arum added wall time / perf stat's: $(ratio "$(added "$t_arum")" "$(added "$t_perf")")"
echo "arum peak RSS / perf stat's:        $(ratio "$m_arum" "$m_perf")"
echo "with the same two events, arum / perf stat: wall $(ratio "$(added "$t_arum_ev")" "$(added "$t_perf")"), peak RSS $(ratio "$m_arum_ev" "$m_perf")"
echo "targets: arum adds <= 4000 us per run and peaks under 5120 KiB"
