# Sourced by generate.sh and check.sh after symbols.sh: `executed_names WORK` prints, sorted, the
# functions of $arum that typical measured runs execute (valgrind's callgrind records every one),
# with the few that runs under valgrind cannot reach added by name. WORK is a scratch directory.
# shellcheck shell=bash
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }
executed_names() {
  local work=$1 args i=0
  local runs=(
    "-- /bin/true"
    "-o $work/r.txt -- /bin/true"
    "-o /dev/null -e task-clock,page-faults -- /bin/true"
    "--format json -o $work/r.json -e task-clock,page-faults,context-switches -- /bin/true"
    "--format csv -o $work/r.csv -e cycles,instructions -- /bin/true"
    # Each vendor's event tables, whatever this machine's CPU: their masks and layouts take
    # different code, and the list must hold on every machine (models of ours: AMD 19h/11h and
    # 1Ah/2, Intel 6/CF, 6/A7, 6/6A).
    "-o /dev/null --cpu GenuineIntel-6-CF -e cycles,instructions,branch-misses -- /bin/true"
    "-o /dev/null --cpu AuthenticAMD-25-11 -e cycles,instructions,branch-misses -- /bin/true"
    # One counter per event (the default beyond 8 CPUs) and per CPU (the default up to 8).
    "-o /dev/null --totals -e task-clock,page-faults -- /bin/true"
    "-o /dev/null --per-cpu -e task-clock,page-faults -- /bin/true"
    "-e task-clock -I 5 -- sleep 0.02"
    "-- sleep 0.01"
    # The launched child's own code until exec: valgrind keeps a process's record only when it
    # exits, so a program that cannot be run makes the child exit and keep it.
    "-o /dev/null -- /nonexistent/startup-order-program"
  )
  for args in "${runs[@]}"; do
    # shellcheck disable=SC2086 # the arguments are words
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$i.%p" \
      "$arum" $args >/dev/null 2>&1 || true
    i=$((i + 1))
  done
  defined_names >"$work/defined"
  cat "$work"/cg.* | sed -n -E 's/^c?fn=\([0-9]+\) (.*)$/\1/p' | sed -E "s/'[0-9]+$//" | sort -u >"$work/run"
  # Under valgrind arum launches with fork (valgrind cannot run a clone that shares memory, see
  # arum-core/src/launch/raw.rs) and waits without a pidfd (valgrind knows no pidfd_open), so the
  # functions of the usual launch and wait are added by name (glibc's `clone` among them), with
  # the entry point (valgrind starts a program at `_start`).
  grep -E '6launch5(child20clone_sharing_memory|child5entry|stack10ChildStack)|3nix4poll4poll|3nix6unistd7sysconf|^__sysconf$|^__getpagesize$|^__pthread_mutex_(un)?lock$|^arum_entry$|^clone$' "$work/defined" >>"$work/run" || true
  # glibc picks the variant of a string function (memcpy, strlen...) for the CPU at start, and
  # valgrind's emulated CPU gets another than a real one (or valgrind runs its own): every variant
  # that a CPU of today may get (SSE2, AVX2, EVEX, AVX-512, each with or without MOVBE; not the
  # TSX ones) is listed, of the families the run calls and of those every start calls.
  {
    sed -n -E 's/^(__(mem|str|stp|raw|wmem|wcs)[a-z0-9]*)_(sse2|ssse3|sse4|avx|avx2|evex|avx512)(_.*)?$/\1/p' "$work/run"
    printf '%s\n' __memcpy __memmove __memset __memcmp __memchr __strlen __strcmp __strchr __strrchr
  } | sort -u | while read -r family; do
    grep -E "^${family}_(sse2|avx|avx2|evex|avx512)(_unaligned)?(_erms)?(_movbe)?$" "$work/defined" || true
  done >>"$work/run"
  comm -12 <(sort -u "$work/run") "$work/defined"
}
