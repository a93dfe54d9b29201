#!/usr/bin/env bash
# arum on machines with many CPUs, measured on a small one: boots QEMU guests (TCG) with 2, 8, 32
# and 64 CPUs on a kernel without the module harness's checkers (benchmarks/scale.kconfig, built
# and cached by arum-kmod/test/kernel.sh) and runs the static release arum in each. Per CPU
# count it prints where counter set-up time goes (one perf_event_open per event and CPU against
# one per event), arum's self-timed set-up phase 2 for four software events (as arum chooses, with
# --per-cpu, and for whole CPUs with perf_event_open and with /dev/arum), the wall time arum adds over bare `true` against GNU time -v's in the same
# guest, the samplers' CPU share, and the length of the text report of `-a` on every CPU.
# An emulated CPU is far slower than a real one, but the costs grow with the CPU count as they
# would: read the ratios between guests, not the microseconds. The last lines, one per CPU
# count, are for scripts:
#   cpus=N setup2_us=X added_vs_time=R sampler_cpu_pct=P setup2_per_cpu_us=Y report_lines=L
# Usage: benchmarks/scale.sh [CPU COUNT...]   (default 2 8 32 64; about 4 minutes per guest)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
work=${ARUM_SCALE_WORK:-$top/target/scale}
mkdir -p "$work"
counts=("$@")
((${#counts[@]})) || counts=(2 8 32 64)

kdir=$(ARUM_KCONFIG="$top/benchmarks/scale.kconfig" arum-kmod/test/kernel.sh | tail -n 1)
cargo build -q --release -p arum
# The module (production build), to compare its set-up for whole CPUs with perf_event_open's.
rm -rf "$work/mod" && mkdir -p "$work/mod/arum-kmod" "$work/mod/arum-wire/src"
cp arum-kmod/*.rs arum-kmod/Kbuild "$work/mod/arum-kmod/"
cp arum-wire/src/wire.rs "$work/mod/arum-wire/src/"
make -s -C "$kdir" M="$work/mod/arum-kmod" LLVM=-19 modules >&2
gcc -O2 -Wall -static -pthread -o "$work/guestbench" benchmarks/scale/guestbench.c
[ -x /usr/bin/time ] || { echo "GNU time is missing: apt-get install time" >&2; exit 1; }

# GNU time is linked dynamically: the guest gets its libraries at the same paths.
{
  echo "dir /dev 755 0 0"
  echo "nod /dev/console 600 0 0 c 5 1"
  echo "nod /dev/null 666 0 0 c 1 3"
  for d in /bin /proc /sys /tmp /usr /usr/bin; do echo "dir $d 755 0 0"; done
  echo "file /bin/busybox $(command -v busybox || echo /bin/busybox) 755 0 0"
  echo "file /init $top/benchmarks/scale/guest-init.sh 755 0 0"
  echo "file /arum $top/target/x86_64-unknown-linux-gnu/release/arum 755 0 0"
  echo "file /guestbench $work/guestbench 755 0 0"
  echo "file /arum.ko $work/mod/arum-kmod/arum.ko 644 0 0"
  benchmarks/guest/dynamic-binary.sh /usr/bin/time
} | awk '!seen[$0]++' >"$work/initramfs.list"
"$kdir/usr/gen_init_cpio" "$work/initramfs.list" >"$work/initramfs.cpio"

for n in "${counts[@]}"; do
  log=$work/guest-$n.log
  benchmarks/guest/boot.sh scale.sh "$n" "$kdir" "$work/initramfs.cpio" "$log" 1500
  tr -d '\r' <"$log" | grep -a '^scale: ' || true
  tr -d '\r' <"$log" | grep -a '^cpus=' >>"$work/summary.$$" ||
    echo "scale.sh: the $n-CPU guest printed no summary; its console is in $log" >&2
done
echo
cat "$work/summary.$$" 2>/dev/null
rm -f "$work/summary.$$"
