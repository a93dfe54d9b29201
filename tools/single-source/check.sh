#!/usr/bin/env bash
# Fails when a second implementation of something the workspace does in one place appears: the
# command line (clap, in the arum binary only), figures read and written (arum-units), medians
# and percentiles (arum-stats), files written (arum-sink), tables (arum-grid), plots (plotters),
# a report flattened into named metrics (arum-core's report::metrics). Each rule names where the
# one implementation lives, so a failure says what to call instead.
# Usage: tools/single-source/check.sh   (from anywhere; exit 1 with the offending lines)
set -euo pipefail
cd "$(dirname "$0")/../.."
failed=0

# Rust sources of the workspace, without build output and the kernel module (not a cargo crate).
sources() {
  git ls-files -- '*.rs' | grep -v -e '^arum-kmod/' "$@"
}

# rule NAME WHERE-IT-LIVES EXCLUDED-PATH-REGEX PATTERN
rule() {
  local name=$1 home=$2 allowed=$3 pattern=$4
  local hits
  hits=$(sources | grep -Ev "$allowed" | xargs grep -nE "$pattern" /dev/null || true)
  if [ -n "$hits" ]; then
    echo "single-source: $name belongs in $home:" >&2
    echo "$hits" | sed 's/^/  /' >&2
    failed=1
  fi
}

# The benchmarks' own programs have command lines of their own.
rule "the command line (clap)" "arum/src/cli" '^(arum|benchmarks)/' '\bclap(_complete|_mangen)?::|use clap\b'
rule "durations, sizes, rates and percentages" "arum-units" '^arum-units/' \
  'humantime::(parse_duration|format_duration|Duration)|fn (parse_(time|size|duration)|format_(ns|bytes|seconds|duration)|fmt_(ns|bytes|rate|as)|show_(ns|size))\b'
rule "medians, percentiles and intervals" "arum-stats" '^arum-stats/' \
  'fn (median|quantile|percentile|quantile_sorted|median_of_sorted|mean_interval|t_critical)\([a-z_]+:'
rule "writing files atomically" "arum-sink" '^(arum-sink|tests)/' \
  '\.persist\(|fs::rename\(|O_TMPFILE'
# benchmarks/render-cost measures arum-grid against tabled, the engine it stands in for.
rule "table layout" "arum-grid" '^(arum-grid|benchmarks/render-cost)/' '\btabled::'
rule "SVG drawing" "plotters" '^$' '\bsvg::(Document|node)'
rule "a report flattened into named metrics" "arum-core/src/report/metrics/" \
  '^arum-core/src/report/metrics/' 'fn flatten\b'

if [ "$failed" -ne 0 ]; then
  exit 1
fi
echo "single-source: each of them has one implementation"
