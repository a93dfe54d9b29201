#!/usr/bin/env bash
# Fails when arum/startup-order.txt has gone stale, either way: when fewer than 90% of its
# entries match a function of this tree's release build, or when more than 1% of the functions
# typical runs execute (executed.sh's runs, under callgrind) are in none of its entries. Its Rust
# entries stand for their hashes with `*`, so only code that moved (a function renamed, moved to
# another module, or new on the run's path) makes the list stale; the linker skips stale entries
# silently and leaves the unlisted functions among the cold code, and arum then starts with more
# page faults (each unlisted function on the path can cost one). The runs take each CPU
# vendor's table path and both ways of counting whatever the machine (executed.sh); the 1%
# (some 8 functions) leaves room for the few that only another machine's runs execute: the
# host vendor's branch of the CPU's detection, a PMU's counters opening where a VM has none,
# another cgroup layout, another glibc's names of its internal functions, another size of a
# kernel file; and fails when renames on the run's path leave more unlisted than that. The fix
# is to run tools/startup-order/generate.sh.
# Usage: tools/startup-order/check.sh   (builds the release with its symbol table kept, as
# generate.sh does, in the same target directory: symbols.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
order=arum/startup-order.txt
source tools/startup-order/symbols.sh
source tools/startup-order/executed.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
defined_names >"$work/defined" || true # nm fails on a stripped binary: said below
if [ ! -s "$work/defined" ]; then
  echo "check.sh: $arum has no symbol table (a build script that ran without ARUM_KEEP_SYMBOLS=1 in $target_dir?): remove $target_dir and run again" >&2
  exit 1
fi
grep -v '^#' "$order" | sort -u >"$work/named"
named=$(wc -l <"$work/named")
found=$(python3 tools/startup-order/patterns.py --found "$work/defined" <"$work/named")
echo "start-up order: $found of its $named entries are functions of this build"
if ((found * 10 < named * 9)); then
  echo "check.sh: $order is stale ($found of $named names found): run tools/startup-order/generate.sh and commit the result" >&2
  exit 1
fi
executed_names "$work" >"$work/executed"
executed=$(wc -l <"$work/executed")
python3 tools/startup-order/patterns.py --uncovered "$order" <"$work/executed" >"$work/uncovered"
missing=$(wc -l <"$work/uncovered")
echo "start-up order: $missing of the $executed functions typical runs execute are in none of its entries"
sed 's/^/  not in the list: /' "$work/uncovered"
if ((missing * 100 > executed)); then
  echo "check.sh: $order misses functions the runs execute on this machine ($(awk -F': ' '/^(vendor_id|cpu family|model)\t/ { printf "%s ", $2 } /^$/ { exit }' /proc/cpuinfo)with $(nproc) CPUs, uid $(id -u)): run tools/startup-order/generate.sh and commit the result" >&2
  exit 1
fi
