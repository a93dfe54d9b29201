#!/usr/bin/env bash
# Boots a benchmark's QEMU guest (TCG: no usable KVM here) with CPUS CPUs and 2 GiB, its console
# written to LOG, and says how long it ran. The guest's /init does the work and powers off; a
# guest that hangs is stopped after TIMEOUT seconds. EXTRA goes to the kernel's command line
# (e.g. parameters for /init).
# Usage: benchmarks/guest/boot.sh NAME CPUS KDIR INITRAMFS LOG TIMEOUT [EXTRA]
set -uo pipefail
name=$1 cpus=$2 kdir=$3 initramfs=$4 log=$5 limit=$6 extra=${7:-}
echo "$name: booting the $cpus-CPU guest" >&2
t0=$SECONDS
# rcu_cpu_stall_timeout: emulated CPUs on two host cores run far slower than RCU expects.
timeout "$limit" qemu-system-x86_64 -machine pc,accel=tcg -cpu max -smp "$cpus" -m 2G \
  -kernel "$kdir/arch/x86/boot/bzImage" -initrd "$initramfs" \
  -append "console=ttyS0 panic=-1 loglevel=4 rcupdate.rcu_cpu_stall_timeout=300 $extra" \
  -nographic -no-reboot </dev/null >"$log" 2>&1
echo "$name: the $cpus-CPU guest ran for $((SECONDS - t0)) s" >&2
