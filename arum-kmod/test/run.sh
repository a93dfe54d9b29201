#!/usr/bin/env bash
# Builds a Rust-enabled test kernel with the kernel's lock, sleep, work-object and memory
# checkers (cached), the module, static arum and kmod_probe binaries, packs them with busybox
# into an initramfs, and boots QEMU (TCG) twice: 4 CPUs for every check in guest-init.sh, then
# 32 CPUs for the checks that need many. Warnings panic the guest (panic_on_warn). Prints one
# line per check and "N passed, N failed"; exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=${ARUM_KTEST_WORK:-$here/work}
mkdir -p "$work"

kdir=$("$here/kernel.sh" | tail -n 1)
export PATH="$HOME/.cargo/bin:$PATH"

echo "run.sh: building the module against $kdir" >&2
rm -rf "$work/mod" && mkdir -p "$work/mod/arum-kmod" "$work/mod/arum-wire/src"
cp "$top"/arum-kmod/*.rs "$top/arum-kmod/Kbuild" "$work/mod/arum-kmod/"
cp "$top/arum-wire/src/wire.rs" "$work/mod/arum-wire/src/"
# ARUM_KTEST_PATCH=FILE: the module built with FILE applied (a mutant: see mutants.sh).
if [ -n "${ARUM_KTEST_PATCH:-}" ]; then
  patch -s -d "$work/mod" -p1 <"$ARUM_KTEST_PATCH" >&2
fi
# ARUM_SIM=1: the test build, with the simulated PMU's parameters.
make -s -C "$kdir" M="$work/mod/arum-kmod" LLVM=-19 ARUM_SIM=1 modules >&2

echo "run.sh: building static arum and kmod_probe" >&2
# With the workspace's own flags (.cargo/config.toml: static PIE, arum's entry point): the guest
# runs the release build users run, and the build shares its artifacts with theirs.
(cd "$top" && cargo build -q --release \
  --target x86_64-unknown-linux-gnu -p arum -p arum-tests --bin arum --bin kmod_probe)
bin="$top/target/x86_64-unknown-linux-gnu/release"

busybox=$(command -v busybox || echo /bin/busybox)
cat >"$work/initramfs.list" <<LIST
dir /dev 755 0 0
nod /dev/console 600 0 0 c 5 1
nod /dev/null 666 0 0 c 1 3
dir /bin 755 0 0
dir /proc 755 0 0
dir /sys 755 0 0
dir /tmp 1777 0 0
file /bin/busybox $busybox 755 0 0
file /init $here/guest-init.sh 755 0 0
file /arum $bin/arum 755 0 0
file /kmod_probe $bin/kmod_probe 755 0 0
file /arum.ko $work/mod/arum-kmod/arum.ko 644 0 0
LIST
"$kdir/usr/gen_init_cpio" "$work/initramfs.list" >"$work/initramfs.cpio"

# A guest whose console shows no /init after this long is stuck in the kernel's boot: a booting
# 32-CPU guest reaches /init in a fraction of it (docs/kmod.md has the boots' times).
init_secs=${ARUM_KTEST_INIT_SECS:-300}

# boot_once NAME CPUS MEMORY SECONDS CMDLINE: one guest run, its console in NAME.log. Prints
# "ran", "timeout" (the guest outlived SECONDS) or "no-init" (it did not reach /init: stuck after
# $init_secs s, or ended in the kernel's boot); a guest that is stopped has where its CPUs were
# (QEMU's monitor, System.map) printed first.
boot_once() {
  local name=$1 cpus=$2 mem=$3 secs=$4 extra=$5
  # The monitor's socket lives in /tmp: a unix socket's path has at most 107 bytes, and the work
  # directory's may be longer.
  local log=$work/$name.log mon state=ran t0=$SECONDS
  mon=$(mktemp -u /tmp/arum-ktest-XXXXXX.monitor)
  # loglevel=4: the console carries the kernel's errors (an RCU stall report among them).
  qemu-system-x86_64 -machine pc,accel=tcg -cpu max -smp "$cpus" -m "$mem" \
    -kernel "$kdir/arch/x86/boot/bzImage" -initrd "$work/initramfs.cpio" \
    -append "console=ttyS0 panic=-1 oops=panic panic_on_warn=1 loglevel=4 $extra" \
    -monitor "unix:$mon,server,nowait" -nographic -no-reboot </dev/null >"$log" 2>&1 &
  local qemu=$!
  while kill -0 "$qemu" 2>/dev/null; do
    if ((SECONDS - t0 >= secs)); then
      state=timeout
    elif ((SECONDS - t0 >= init_secs)) && ! grep -aq '^guest: ' "$log"; then
      state=no-init
    fi
    if [ $state != ran ]; then
      echo "run.sh: the $cpus-CPU guest is stopped ($state after $((SECONDS - t0)) s); its CPUs were at:" >&2
      python3 "$here/where.py" "$mon" "$kdir/System.map" 2>&1 | sed 's/^/run.sh:   /' >&2 || true
      kill "$qemu" 2>/dev/null || true
      break
    fi
    sleep 1
  done
  wait "$qemu" 2>/dev/null || true
  rm -f "$mon"
  # A guest that ended without reaching /init (a panic in the kernel's own boot) ran nothing of
  # the module either.
  [ $state != ran ] || grep -aq '^guest: ' "$log" || state=no-init
  echo "run.sh: the $cpus-CPU guest ran for $((SECONDS - t0)) s of its $secs s limit" >&2
  echo $state
}

# boot NAME CPUS MEMORY SECONDS [CMDLINE]: a guest run, with its checks and summary printed. A
# boot that never reaches /init has run nothing of the module; it is booted again, at most twice,
# each such console kept as NAME-no-init-N.log and its last kernel lines printed. Any other
# failure fails.
boot() {
  local name=$1 cpus=$2 mem=$3 secs=$4 extra=${5:-} attempt state
  for attempt in 1 2 3; do
    echo "run.sh: booting the $cpus-CPU guest" >&2
    state=$(boot_once "$name" "$cpus" "$mem" "$secs" "$extra")
    [ "$state" = no-init ] && [ $attempt -lt 3 ] || break
    cp "$work/$name.log" "$work/$name-no-init-$attempt.log"
    echo "run.sh: the $cpus-CPU guest did not reach /init (console in" \
      "$work/$name-no-init-$attempt.log); its last lines, then booting it once more:" >&2
    tail -n 25 "$work/$name.log" | tr -d '\r' | sed 's/^/run.sh:   /' >&2
  done
  grep -aE '^(PASS|FAIL) |^    |^guest: ' "$work/$name.log" | tr -d '\r' || true
  local summary
  summary=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$work/$name.log" | tr -d '\r' | tail -n 1 || true)
  if [ -z "$summary" ]; then
    echo "the $cpus-CPU guest did not finish; its console:" >&2
    tail -n 60 "$work/$name.log" >&2
    summary="0 passed, 1 failed"
  fi
  echo "$summary" >"$work/$name.summary"
}

# ARUM_KTEST_ONLY=REGEX: only the 4-CPU guest's checks whose names match (include insmod where
# the module must be loaded first), for work on a few of them.
# ARUM_KTEST_REPEAT=N runs them N times.
if [ -n "${ARUM_KTEST_ONLY:-}" ]; then
  boot console 4 1536M 1500 "arum.only=$ARUM_KTEST_ONLY arum.repeat=${ARUM_KTEST_REPEAT:-1}"
  cat "$work/console.summary"
  grep -q ' 0 failed' "$work/console.summary"
  exit
fi
boot console 4 1536M 1500
# 32 emulated CPUs on a 2-core host run far slower than RCU's 21 s stall deadline assumes: give
# them the longest (300 s); a real hang still shows.
big="arum.suite=big rcupdate.rcu_cpu_stall_timeout=300"
boot console32 32 2G 900 "$big"
# An RCU stall report fails the run like any other kernel complaint (no-oops-or-warning): it is
# not booted again, since a second boot that passes would hide a stall that really happened.
passed=$(cat "$work/console.summary" "$work/console32.summary" | awk '{p += $1} END {print p}')
failed=$(cat "$work/console.summary" "$work/console32.summary" | awk '{f += $3} END {print f}')
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
