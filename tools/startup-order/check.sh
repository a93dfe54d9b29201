#!/usr/bin/env bash
# Fails when arum/startup-order.txt has gone stale: when fewer than 90% of its entries match a
# function of this tree's release build. Its Rust entries stand for their hashes with `*`, so
# only code that moved (a function renamed or moved to another module) makes entries stale; the
# linker skips them silently, and arum then starts with more page faults. The fix is to run
# tools/startup-order/generate.sh.
# Usage: tools/startup-order/check.sh   (builds the release with its symbol table kept, as
# generate.sh does, in the same target directory: symbols.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
order=arum/startup-order.txt
source tools/startup-order/symbols.sh
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
