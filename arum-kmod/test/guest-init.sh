#!/bin/busybox sh
# /init of the test guest: runs every check of the module and prints one line per check, then
# "N passed, N failed", then powers off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t debugfs none /sys/kernel/debug
mkdir -p /tmp && mount -t tmpfs tmp /tmp
pass=0
fail=0
check() {
  name=$1
  shift
  if "$@" >/tmp/out 2>&1; then
    echo "PASS $name"
    pass=$((pass + 1))
  else
    echo "FAIL $name"
    sed 's/^/    /' /tmp/out
    fail=$((fail + 1))
  fi
}
leaks() {
  [ -w /sys/kernel/debug/kmemleak ] || { echo "kmemleak is not available in this kernel"; return 1; }
  echo scan >/sys/kernel/debug/kmemleak
  sleep 6
  echo scan >/sys/kernel/debug/kmemleak
  ! grep -q "unreferenced object" /sys/kernel/debug/kmemleak || { cat /sys/kernel/debug/kmemleak; false; }
}
clean_dmesg() {
  ! dmesg | grep -E "BUG:|WARNING:|Oops|Call Trace|general protection" || false
}
echo clear >/sys/kernel/debug/kmemleak 2>/dev/null
echo

check insmod insmod /arum.ko mode=0660 group=-1
check device-mode sh -c '[ "$(stat -c %a /dev/arum)" = 660 ] && [ -c /dev/arum ]'
check second-open-ebusy /kmod_probe ebusy
check read-before-write-einval /kmod_probe read-before-write
check offline-cpu-error-code /kmod_probe offline-cpu
check software-events-every-cpu sh -c '/arum --backend kmod --format json -o /tmp/r.json -e cpu-clock,context-switches -- /bin/busybox sleep 0.5 && /kmod_probe counts /tmp/r.json 4'
check hardware-event-clear-error-rusage-kept sh -c '/arum --backend kmod --format json -o /tmp/h.json -e r003c -- /bin/busybox true && grep -q "not_supported" /tmp/h.json && grep -q "refused the request" /tmp/h.json && grep -q "\"wall_ns\"" /tmp/h.json'
check module-timer-series-sums-to-totals sh -c '/arum --backend kmod -I 100 --format json -o /tmp/i.json -e cpu-clock,context-switches -- /bin/busybox sleep 0.6 && /kmod_probe intervals /tmp/i.json'
check fuzz-3000-payloads /kmod_probe fuzz 3000 42
check sigkill-holder-then-reopen sh -c '/kmod_probe hold & p=$!; sleep 0.5; kill -9 $p; wait $p; /kmod_probe open-close'
check rmmod rmmod arum
# group=4242: only root and members of group 4242 may open the device.
check group-parameter-restricts-open sh -c 'insmod /arum.ko mode=0666 group=4242 &&
  [ "$(/kmod_probe as-user 1000 1000)" = EACCES ] && [ "$(/kmod_probe as-user 1000 1000 4242)" = open ]; s=$?; rmmod arum; exit $s'

# The msr back-end on the simulated PMU of each family (QEMU's emulator has no counter MSRs).
sim() {
  params=$1 cpu=$2 events=$3 secs=$4 rate=$5 min=$6
  insmod /arum.ko backend=1 $params || return 1
  /arum --backend kmod --cpu "$cpu" --format json -o /tmp/sim.json -e "$events" -- /bin/busybox sleep "$secs" || { rmmod arum; return 1; }
  /kmod_probe sim-rate /tmp/sim.json "$rate" "$min"
  status=$?
  rmmod arum || return 1
  return $status
}
check msr-sim-k8 sim "sim=1 sim_rate=1000" AuthenticAMD-15-41 dcache_accesses,dcache_misses,L1_DTLBmiss_L2_DTLBhit,L1_L2_DTLBmiss 0.5 1000 1
check msr-sim-core2-general-and-fixed sim "sim=2 sim_rate=500" GenuineIntel-6-17 instructions,cycles,dcache_accesses,FP_ASSIST 0.5 500 1
check msr-sim-netburst-escr-cccr sim "sim=3 sim_rate=250" GenuineIntel-15-3 cycles,instructions,branch_misses 0.5 250 1
# 16-bit counters at 1 event/us wrap every 65 ms: 2 s is about 30 wraps, and nothing may be lost.
check msr-sim-16-bit-wraps-lose-nothing sim "sim=1 sim_width=16 sim_rate=1" AuthenticAMD-15-41 dcache_accesses,dcache_misses 2 1 1000000
# arum's own peak-memory path on a cgroup v2 machine: the tree gets a group with memory.peak.
check peak-memory-from-cgroup-v2 sh -c 'mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup &&
  echo +memory >/sys/fs/cgroup/cgroup.subtree_control &&
  /arum --format json -o /tmp/m.json -- /bin/busybox dd if=/dev/zero of=/dev/null bs=64M count=2 &&
  /kmod_probe peak /tmp/m.json 64 cgroup_v2_memory_peak 96'
check no-oops-or-warning clean_dmesg
check kmemleak-clean leaks
echo "$pass passed, $fail failed"
sync
reboot -f
