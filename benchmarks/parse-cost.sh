#!/usr/bin/env bash
# What parsing a single run's command line costs arum: its own parser for a plain run (the run's
# options only) against the full parser (every subcommand and series option; ARUM_FULL_PARSER=1),
# in instructions of the whole arum process counted by valgrind's callgrind. Instruction counts
# do not move with the machine's load, so one run of each suffices; a run of `true` is short, so
# parsing is a large share of arum's own work there.
# Usage: benchmarks/parse-cost.sh   (ARUM=path/to/arum to pick a build; default release)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }
[ -n "${ARUM:-}" ] || cargo build --release -q -p arum
arum=${ARUM:-target/x86_64-unknown-linux-gnu/release/arum}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Instructions arum executes (not its child: callgrind does not follow it) for the arguments.
instructions() {
  valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$arum" "$@" >/dev/null 2>&1 || true
  sed -n 's/^summary: //p' "$work/cg"
}

printf '%-52s %12s %12s %7s\n' "arum arguments" "run parser" "full parser" "ratio"
for args in "-o /dev/null -- /bin/true" "-o /dev/null -e task-clock,page-faults -- /bin/true"; do
  # shellcheck disable=SC2086 # the arguments are words
  own=$(instructions $args)
  # shellcheck disable=SC2086
  full=$(ARUM_FULL_PARSER=1 instructions $args)
  printf '%-52s %12d %12d %7.2f\n' "$args" "$own" "$full" "$(echo "$own / $full" | bc -l)"
done
