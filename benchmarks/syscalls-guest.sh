#!/usr/bin/env bash
# benchmarks/syscalls.sh on a machine with more CPUs than this one: a QEMU guest (TCG) with CPUS
# CPUs boots a kernel with BPF and BTF (benchmarks/syscalls/guest.kconfig, built and cached by
# arum-kmod/test/kernel.sh: about 25 minutes the first time), runs THREADS threads of
# syscall_storm, ROUNDS rounds each, under strace -f -c and under the static release arum with
# either engine, and the host compares the three as syscalls.sh does. An emulated CPU makes far
# fewer calls a second than a real one (hence fewer rounds by default); what the guest shows is
# that the counts stay exact with many CPUs, each with its own map slots and buffers.
#
# Target: the bpf engine's counts equal strace's for every call and errno, 0 uncounted.
#
# Usage: benchmarks/syscalls-guest.sh [CPUS] [THREADS] [ROUNDS]   (default 16 8 12500)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
cpus=${1:-16}
threads=${2:-8}
rounds=${3:-12500}
work=${ARUM_SYSCALLS_WORK:-$top/target/syscalls-guest}
mkdir -p "$work"

kdir=$(ARUM_KCONFIG="$top/benchmarks/syscalls/guest.kconfig" arum-kmod/test/kernel.sh | tail -n 1)
cargo build -q --release -p arum
cargo build -q --release -p arum-tests --bin syscall_storm
release=$top/target/x86_64-unknown-linux-gnu/release
command -v strace >/dev/null || { echo "strace is missing: run scripts/deps.sh" >&2; exit 1; }
{
  echo "dir /dev 755 0 0"
  echo "nod /dev/console 600 0 0 c 5 1"
  echo "nod /dev/null 666 0 0 c 1 3"
  for d in /bin /proc /sys /tmp /usr /usr/bin; do echo "dir $d 755 0 0"; done
  echo "file /bin/busybox $(command -v busybox || echo /bin/busybox) 755 0 0"
  echo "file /init $top/benchmarks/syscalls/guest-init.sh 755 0 0"
  echo "file /arum $release/arum 755 0 0"
  echo "file /storm $release/syscall_storm 755 0 0"
  benchmarks/guest/dynamic-binary.sh "$(command -v strace)"
} | awk '!seen[$0]++' >"$work/initramfs.list"
"$kdir/usr/gen_init_cpio" "$work/initramfs.list" >"$work/initramfs.cpio"

log=$work/guest-$cpus.log
benchmarks/guest/boot.sh syscalls-guest.sh "$cpus" "$kdir" "$work/initramfs.cpio" "$log" 3000 \
  "arum.threads=$threads arum.rounds=$rounds"

# The files the guest printed between "=== NAME" lines.
out=$work/out
rm -rf "$out" && mkdir -p "$out"
tr -d '\r' <"$log" | awk -v dir="$out" '
  /^=== / { file = ($2 == "end") ? "" : dir "/" $2; next }
  file != "" { print > file }'
for f in elapsed strace.txt bpf.json perf.json; do
  [ -s "$out/$f" ] || { echo "the guest printed no $f; its console is in $log" >&2; exit 1; }
done
# (The console's first line carries the firmware's escape codes before it.)
tr -d '\r' <"$log" | grep -a -o 'guest: .*' || true
echo "calls=$((4 * threads * rounds))"
read -r bare strace_s bpf_s perf_s <"$out/elapsed"
python3 benchmarks/syscalls/compare.py "$out" "$bare" "$strace_s" "$bpf_s" "$perf_s"
