#!/usr/bin/env bash
# Launch overhead of arum against its peers, measured in the same run: bare /bin/true, arum --
# true, arum with two software events, GNU time -v and perf stat with the same two events.
# The tools take turns run by run (run i: every tool once, in an order of its own), each run
# timed on its own, so that a machine that slows down or speeds up affects all alike. A tool's
# added time is the median over the runs of its wall time less bare `true`'s in the same turn: a
# slow spell of the host falls on a few runs, which move a mean and not a median
# (docs/launch-overhead.md, The benchmark). Prints the added time, each one's peak RSS and page
# faults (its own and the program's), and the ratios to GNU time's (target: at most 1.25), with
# the ratios of the means beside them and the range of the ratio over ten blocks of runs. A minimal counting launcher (count-floor, from
# benchmarks/overhead-study) runs with and without the same two events, and with each alone: the
# difference is the kernel's own price of counting them on this machine, which every perf-based
# tool pays. A second copy of arum takes its turns too: its ratio to the first is the run's own
# noise, against which the other ratios are read.
# Usage: benchmarks/overhead.sh [RUNS]   (ARUM=path/to/arum to pick a build; default release)
# ARUM_BESIDE=path/to/another/arum takes turns with the others too, and its rows and ratio to
# ARUM's are printed: e.g. the build at a fixed address (`cargo build-fixed`) beside the default
# position-independent one.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-300}
blocks=10
# The builds of this tree (cargo makes them, or finds them up to date), unless named.
[ -n "${ARUM:-}" ] || cargo build --release -q -p arum
arum=${ARUM:-target/x86_64-unknown-linux-gnu/release/arum}
[ -n "${FLOOR:-}" ] || cargo build --release -q -p overhead-study --bin count-floor
floor=${FLOOR:-target/x86_64-unknown-linux-gnu/release/count-floor}
# Measure arum as installed: a copy, as `cargo install` makes. The linker's own output file sits
# in the page cache in small pieces (it was written piecemeal), so starting it costs about 17 more
# page faults and 0.2 ms more than a copy of the same bytes, until the cache is dropped.
installed=$(mktemp -d)
trap 'rm -rf "$installed"' EXIT
cp "$arum" "$installed/arum"
arum=$installed/arum
cp "$floor" "$installed/count-floor"
floor=$installed/count-floor
cp "$arum" "$installed/arum-again"
again=$installed/arum-again
beside=${ARUM_BESIDE:-}
if [ -n "$beside" ]; then
  cp "$beside" "$installed/arum-beside"
  beside=$installed/arum-beside
fi
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "GNU time is missing: apt-get install time" >&2; exit 1; }

sw_events=task-clock,page-faults
names=(bare arum arum_ev time perf floor floor_ev floor_tc floor_pf again)
[ -z "$beside" ] || names+=(beside beside_ev)
cmd() {
  case $1 in
    bare) /bin/true ;;
    arum) "$arum" -o /dev/null -- /bin/true ;;
    again) "$again" -o /dev/null -- /bin/true ;;
    arum_ev) "$arum" -o /dev/null -e "$sw_events" -- /bin/true ;;
    time) /usr/bin/time -v /bin/true ;;
    perf) perf stat -e "$sw_events" /bin/true ;;
    floor) "$floor" -- /bin/true ;;
    floor_ev) "$floor" -e -- /bin/true ;;
    floor_tc) "$floor" -e=task-clock -- /bin/true ;;
    floor_pf) "$floor" -e=page-faults -- /bin/true ;;
    beside) "$beside" -o /dev/null -- /bin/true ;;
    beside_ev) "$beside" -o /dev/null -e "$sw_events" -- /bin/true ;;
  esac
}
declare -A t # t[NAME,I]: the wall time of NAME's run I, in µs
for n in "${names[@]}"; do cmd "$n" >/dev/null 2>&1; done # warm the page cache
# Each turn takes the tools in an order of its own (a shuffle, repeatable: RANDOM is seeded), so
# that no tool always follows the same one: what a run leaves in the caches and the scheduler's
# state weighs on the next.
RANDOM=1
order=("${names[@]}")
for ((i = 0; i < runs; i++)); do
  for ((j = ${#order[@]} - 1; j > 0; j--)); do
    k=$((RANDOM % (j + 1)))
    n=${order[j]} order[j]=${order[k]} order[k]=$n
  done
  for n in "${order[@]}"; do
    # $EPOCHREALTIME is bash's own clock (no process of its own); its digits are µs.
    t0=$EPOCHREALTIME
    cmd "$n" >/dev/null 2>&1
    t1=$EPOCHREALTIME
    t[$n,$i]=$((${t1//[!0-9]/} - ${t0//[!0-9]/}))
  done
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mean() { awk '{ s += $1 } END { print s / NR }'; }
# walls NAME FROM TO: the wall times of NAME's runs FROM..TO-1; diffs: each less bare `true`'s
# in the same turn.
walls() {
  local i
  for ((i = $2; i < $3; i++)); do echo "${t[$1,$i]}"; done
}
diffs() {
  local i
  for ((i = $2; i < $3; i++)); do echo "$((t[$1,$i] - t[bare,$i]))"; done
}
us() { walls "$1" 0 "$runs" | median | awk '{ printf "%d", $1 }'; }
added() { diffs "$1" 0 "$runs" | median | awk '{ printf "%d", $1 }'; }
# Peak RSS in KiB of the measuring tool itself (largest of 5 runs) and its minor page faults
# (with those of the program it runs; the smallest of the 5), as "KIB FAULTS".
peak_and_faults() {
  local max=0 faults=0 v f i
  for i in 1 2 3 4 5; do
    read -r v f < <(/usr/bin/time -f '%M %R' "$@" 2>&1 >/dev/null | tail -n 1)
    ((v > max)) && max=$v
    ((faults == 0 || f < faults)) && faults=$f
  done
  echo "$max $faults"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# A's added time over B's: "means R, blocks LO-HI" (the ratio of the mean added times, and the
# range of the ratio of medians over ten blocks of consecutive runs).
beside_ratio() {
  local k lo hi means
  means=$(ratio "$(diffs "$1" 0 "$runs" | mean)" "$(diffs "$2" 0 "$runs" | mean)")
  for ((k = 0; k < blocks; k++)); do
    lo=$((k * runs / blocks)) hi=$(((k + 1) * runs / blocks))
    ratio "$(diffs "$1" "$lo" "$hi" | median)" "$(diffs "$2" "$lo" "$hi" | median)"
    echo
  done | sort -g | awk -v m="$means" -v n="$blocks" '
    { v[NR] = $1 }
    END { printf "means %s; over %d blocks of runs %.2f-%.2f", m, n, v[1], v[NR] }'
}

row() { # NAME US ADDED COMMAND...
  local name=$1 wall=$2 added=$3
  shift 3
  read -r kib faults < <(peak_and_faults "$@")
  printf '%-44s %12d %14d %12d %12d\n' "$name" "$wall" "$added" "$kib" "$faults"
}
printf '%-44s %12s %14s %12s %12s\n' tool "wall/run us" "added us/run" "peak RSS KiB" "page faults"
printf '%-44s %12d %14s %12s %12d\n' "/bin/true" "$(us bare)" - - "$(peak_and_faults /bin/true | cut -d' ' -f2)"
row "arum -- true" "$(us arum)" "$(added arum)" "$arum" -o /dev/null -- /bin/true
row "arum -e $sw_events -- true" "$(us arum_ev)" "$(added arum_ev)" "$arum" -o /dev/null -e "$sw_events" -- /bin/true
if [ -n "$beside" ]; then
  row "ARUM_BESIDE -- true" "$(us beside)" "$(added beside)" "$beside" -o /dev/null -- /bin/true
  row "ARUM_BESIDE -e $sw_events -- true" "$(us beside_ev)" "$(added beside_ev)" "$beside" -o /dev/null -e "$sw_events" -- /bin/true
fi
row "/usr/bin/time -v true" "$(us time)" "$(added time)" /usr/bin/time -v /bin/true
row "perf stat -e $sw_events true" "$(us perf)" "$(added perf)" perf stat -e "$sw_events" /bin/true
row "count-floor -- true" "$(us floor)" "$(added floor)" "$floor" -- /bin/true
row "count-floor -e -- true (the same two events)" "$(us floor_ev)" "$(added floor_ev)" "$floor" -e -- /bin/true
row "count-floor -e=task-clock -- true" "$(us floor_tc)" "$(added floor_tc)" "$floor" -e=task-clock -- /bin/true
row "count-floor -e=page-faults -- true" "$(us floor_pf)" "$(added floor_pf)" "$floor" -e=page-faults -- /bin/true
echo
echo "runs per tool: $runs, taking turns run by run; added times are medians of the runs"
echo "arum added wall time / GNU time -v's:                 $(ratio "$(added arum)" "$(added time)")   ($(beside_ratio arum time))"
echo "arum -e $sw_events added wall time / GNU time -v's: $(ratio "$(added arum_ev)" "$(added time)")   ($(beside_ratio arum_ev time); target <= 1.25)"
echo "the noise: a second copy of arum's added wall time / the first's: $(ratio "$(added again)" "$(added arum)")   ($(beside_ratio again arum))"
echo "arum -e $sw_events added wall time / perf stat's:   $(ratio "$(added arum_ev)" "$(added perf)")"
# The kernel's price of the two events (opening four counters, patching the software-event static
# key on open and close, counting in the child): what the target leaves for everything else.
kernel=$(($(added floor_ev) - $(added floor)))
echo "the kernel's price of counting the two events:        $kernel us per run = $(ratio "$kernel" "$(added time)") of GNU time -v's added time"
echo "arum -e $sw_events beyond that price / GNU time -v's: $(ratio "$(($(added arum_ev) - kernel))" "$(added time)")"
if [ -n "$beside" ]; then
  echo "arum added wall time / ARUM_BESIDE's:                 $(ratio "$(added arum)" "$(added beside)")   ($(beside_ratio arum beside))"
  echo "arum -e $sw_events added wall time / ARUM_BESIDE's: $(ratio "$(added arum_ev)" "$(added beside_ev)")"
fi
echo "each event alone (its counters on every CPU): task-clock $(($(added floor_tc) - $(added floor))) us, page-faults $(($(added floor_pf) - $(added floor))) us per run"
