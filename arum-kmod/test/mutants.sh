#!/usr/bin/env bash
# Mutation checks of the module's harness. Each patch in mutants/ brings back into the module a
# hazard that a fix removed; built with it (run.sh, ARUM_KTEST_PATCH), the check the patch names
# (its "check:" line) must fail, and the guest's console must show why: a line matching its
# "expect:" (a kernel complaint, or the check's own words). A check that passes on its mutant
# cannot tell the fix from its absence. Prints one line per mutant and exits non-zero if any
# survived. Arguments: the patches to run (all of mutants/ without). Work directories: one per
# mutant under $ARUM_KTEST_WORK/mutants (run.sh's default work directory when unset).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
base=${ARUM_KTEST_WORK:-$here/work}/mutants
status=0
patches=("$@")
[ ${#patches[@]} -gt 0 ] || patches=("$here"/mutants/*.patch)
for patch in "${patches[@]}"; do
  name=$(basename "$patch" .patch)
  check=$(sed -n 's/^check: //p' "$patch" | head -n 1)
  expect=$(sed -n 's/^expect: //p' "$patch" | head -n 1)
  if [ -z "$check" ] || [ -z "$expect" ]; then
    echo "BROKEN $name: the patch needs a \"check:\" and an \"expect:\" line"
    status=1
    continue
  fi
  work=$base/$name
  rm -rf "$work" && mkdir -p "$work"
  t0=$SECONDS
  if ARUM_KTEST_WORK=$work ARUM_KTEST_PATCH=$patch ARUM_KTEST_ONLY="^$check\$" \
    "$here/run.sh" >"$work/run.out" 2>&1; then
    echo "SURVIVED $name: $check passed with the hazard back ($work/run.out)"
    status=1
  elif said=$(grep -aoE "$expect" "$work/console.log" | head -n 1) && [ -n "$said" ]; then
    echo "KILLED $name: $check failed in $((SECONDS - t0)) s, the guest printed \"$said\""
  else
    echo "UNCLEAR $name: $check failed, but without /$expect/ ($work/console.log)"
    # What failed instead, for a log read where the work directory is gone.
    grep -ahE '^FAIL |Kernel panic|BUG:|WARNING:|Oops|did not (reach|finish)' \
      "$work/console.log" "$work/run.out" 2>/dev/null | tr -d '\r' | head -n 8 | sed 's/^/  /'
    status=1
  fi
done
exit $status
