#!/bin/busybox sh
# /init of the test guest: runs the module's checks and prints one line per check, then
# "N passed, N failed", then powers off. `arum.suite=big` on the kernel command line (the 32-CPU
# guest) runs the checks that need many CPUs instead of the full list.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t debugfs none /sys/kernel/debug
mkdir -p /tmp && mount -t tmpfs tmp /tmp
suite=main
grep -q 'arum.suite=big' /proc/cmdline && suite=big
# How long the kernel took to reach /init: under emulation with many CPUs this is most of a
# guest's time, and the harness's time limit has to cover it. (The blank line ends the firmware's
# last console line, which has no newline.)
echo
echo "guest: $(grep -c ^processor /proc/cpuinfo) CPUs, /init reached after $(cut -d' ' -f1 /proc/uptime) s"
pass=0
fail=0
# A check that runs longer than this is stopped and fails: the slowest takes 20 s here.
limit=60
# Stops what a check left running: its shell, the probes and arums it started, the module.
stop_check() {
  # Where the check's processes are in the kernel, before they are killed.
  for p in $(pgrep kmod_probe) $(pgrep -x arum); do
    echo "process $p ($(cat /proc/$p/comm 2>/dev/null)), state $(awk '{print $3}' /proc/$p/stat 2>/dev/null), in:"
    cat /proc/$p/task/*/stack 2>/dev/null | sed 's/^/  /'
  done >>/tmp/stopped
  kill -9 "$1" 2>/dev/null
  pkill -9 kmod_probe
  pkill -9 -x arum
  sleep 1
  grep -q '^arum ' /proc/modules && rmmod arum
}
# `arum.only=REGEX` on the kernel command line (run.sh's ARUM_KTEST_ONLY): only the checks whose
# names match run, for work on one of them.
only=$(sed -n 's/.*arum\.only=\([^ ]*\).*/\1/p' /proc/cmdline)
# check [-t SECONDS] NAME COMMAND...: runs COMMAND, stopped after `limit` (or SECONDS) seconds.
check() {
  secs=$limit
  if [ "$1" = -t ]; then
    secs=$2
    shift 2
  fi
  name=$1
  shift
  if [ -n "$only" ] && ! echo "$name" | grep -qE "$only"; then
    return
  fi
  t0=$(cut -d' ' -f1 /proc/uptime)
  ("$@") >/tmp/out 2>&1 &
  job=$!
  (sleep $secs && echo "stopped after $secs s" >/tmp/stopped && stop_check $job) >/dev/null 2>&1 &
  dog=$!
  rm -f /tmp/stopped
  wait $job
  status=$?
  kill $dog 2>/dev/null
  wait $dog 2>/dev/null
  if [ $status = 0 ] && [ ! -e /tmp/stopped ]; then
    echo "PASS $name ($(awk -v a="$t0" '{printf "%.1f s", $1 - a}' /proc/uptime))"
    pass=$((pass + 1))
  else
    echo "FAIL $name"
    cat /tmp/stopped 2>/dev/null | sed 's/^/    /'
    sed 's/^/    /' /tmp/out
    fail=$((fail + 1))
  fi
  grep -E '^(refused|[0-9]+ (payloads|samples|CPUs|expiries|sessions|rounds)|.*spread|suspend took)' /tmp/out | sort -u | sed 's/^/    /'
}
leaks() {
  [ -w /sys/kernel/debug/kmemleak ] || { echo "kmemleak is not available in this kernel"; return 1; }
  echo scan >/sys/kernel/debug/kmemleak
  sleep 6
  echo scan >/sys/kernel/debug/kmemleak
  ! grep -q "unreferenced object" /sys/kernel/debug/kmemleak || { cat /sys/kernel/debug/kmemleak; false; }
}
clean_dmesg() {
  ! dmesg | grep -B 25 -A 40 -E "BUG:|WARNING:|Oops|Call Trace|general protection|KASAN:|ODEBUG:|possible (circular|recursive) locking|inconsistent lock state|suspicious RCU usage" || false
}
# Loads the module with PARAMS, runs the command, unloads; fails if any step does.
with_module() {
  params=$1
  shift
  insmod /arum.ko $params || return 1
  "$@"
  status=$?
  rmmod arum || return 1
  return $status
}
# The msr back-end on the simulated PMU through arum itself: counts match the simulated rate.
sim() {
  params=$1 cpu=$2 events=$3 secs=$4 rate=$5 min=$6
  with_module "backend=1 $params" sh -c "/arum --backend kmod --cpu $cpu --format json -o /tmp/sim.json -e $events -- /bin/busybox sleep $secs &&
    /kmod_probe sim-rate /tmp/sim.json $rate $min"
}
killed_while_counting() {
  /kmod_probe hold-counting "$1" >/tmp/hold &
  p=$!
  while ! grep -q counting /tmp/hold; do sleep 0.1; done
  kill -9 $p
  wait $p
  /kmod_probe sim-idle
}
rmmod_while_open() {
  /kmod_probe hold >/tmp/hold &
  p=$!
  while ! grep -q holding /tmp/hold; do sleep 0.1; done
  rmmod arum 2>/dev/null && { echo "rmmod succeeded while /dev/arum was open"; kill -9 $p; return 1; }
  grep -q '^arum ' /proc/modules || { echo "module gone"; return 1; }
  kill -9 $p
  wait $p
  /kmod_probe open-close
}
paranoid() { echo "$1" >/proc/sys/kernel/perf_event_paranoid; }
# The node opened to every user, as an administrator's udev rule or chmod would: what the module
# itself allows is what these checks judge.
open_to_all() { chmod 0666 /dev/arum && "$@"; }
race_close_rmmod() {
  touch /tmp/racing
  (while [ -e /tmp/racing ]; do
    echo 0 >/sys/devices/system/cpu/cpu1/online
    echo 1 >/sys/devices/system/cpu/cpu1/online
  done) &
  t=$!
  i=0
  # Each stop waits between halting and finishing until CPU 1 comes back (at most 300 ms), and
  # re-arm work 3 s before it looks: the CPU back in that window must queue nothing, and work
  # queued before must be done before the module goes (work queued there to the system's queue
  # ran after rmmod: an oops). The pause is long enough for such work to be still asleep when
  # the rmmod that ends the round has freed the module's code (docs/kmod.md). The module then
  # stays out for longer than the pause, so that the work wakes with no copy of it loaded: each
  # insmod puts the same code at the same address, where work left over from the copy before
  # would run unharmed.
  rearm_ms=3000
  while [ $i -lt 20 ] && insmod /arum.ko sim_stop_pause_ms=300 sim_rearm_pause_ms=$rearm_ms &&
    /kmod_probe churn 50 && rmmod arum && sleep $((rearm_ms / 1000 + 1)); do
    i=$((i + 1))
  done
  rm /tmp/racing
  wait $t
  echo 1 >/sys/devices/system/cpu/cpu1/online
  grep -q '^arum ' /proc/modules && rmmod arum
  [ $i = 20 ]
}
# expect WANT COMMAND...: COMMAND prints WANT, or the difference is shown.
expect() {
  want=$1
  shift
  got=$("$@" 2>&1)
  [ "$got" = "$want" ] || { echo "$*: got '$got', want '$want'"; return 1; }
}
# With group=4242, at perf_event_paranoid 0 (where perf lets anyone count whole CPUs): members
# and CAP_PERFMON may open, others not.
group_rules() {
  paranoid 0 &&
    expect EACCES /kmod_probe as-user 1000 1000 &&
    expect open /kmod_probe as-user 1000 1000 4242 &&
    expect open /kmod_probe caps-open 1 &&
    expect EACCES /kmod_probe caps-open 0
  s=$?
  paranoid 2
  return $s
}
# A member's descriptor, opened at level 0; the sysctl raised to 2 before its write.
raised_after_open() {
  rm -f /tmp/go /tmp/late
  /kmod_probe as-user 1000 1000 4242 write-after /tmp/go >/tmp/late 2>&1 &
  p=$!
  while ! grep -q opened /tmp/late; do sleep 0.1; done
  paranoid 2
  touch /tmp/go
  wait $p
  paranoid 0
  [ "$(tail -n 1 /tmp/late)" = "ERR_PERMISSION errno 13" ] || { cat /tmp/late; return 1; }
}
# Rights as perf judges them, with the writer's credentials, at open and at every write.
perf_rules() {
  paranoid 2 &&
    expect EACCES /kmod_probe as-user 1000 1000 4242 &&
    expect "ERR_PERMISSION errno 13" /kmod_probe opened-by-root 1000 4242 &&
    paranoid 0 &&
    expect accepted /kmod_probe as-user 1000 1000 4242 write &&
    expect accepted /kmod_probe opened-by-root 1000 4242 &&
    expect "ERR_PERMISSION errno 13" /kmod_probe opened-by-root 1000 &&
    raised_after_open &&
    paranoid 3 &&
    expect EACCES /kmod_probe caps-open 1 &&
    /kmod_probe open-close
  s=$?
  paranoid 2
  return $s
}
# The register back-end bypasses perf: CAP_SYS_ADMIN only, even where perf lets anyone count.
registers_need_sys_admin() {
  paranoid 0 &&
    expect "ERR_PERMISSION errno 1" /kmod_probe as-user 1000 1000 4242 write-msr core2-general
  s=$?
  paranoid 2
  return $s
}
echo clear >/sys/kernel/debug/kmemleak 2>/dev/null
echo

if [ $suite = big ]; then
  n=$(grep -c ^processor /proc/cpuinfo)
  check "$n-cpus-online" [ "$n" -ge 32 ]
  check insmod insmod /arum.ko
  check software-events-all-cpus sh -c "/arum --backend kmod --format json -o /tmp/r.json -e cpu-clock,context-switches -- /bin/busybox sleep 0.5 && /kmod_probe counts /tmp/r.json $n"
  check start-spread-all-cpus /kmod_probe spread
  check perf-cpu-offline-online /kmod_probe hotplug 17 perf
  check rmmod rmmod arum
  check msr-sim-all-cpus with_module "backend=1 sim=1 sim_rate=100" /kmod_probe sim-count k8 0.5 100
  check no-oops-or-warning clean_dmesg
  echo "$pass passed, $fail failed"
  sync
  reboot -f
fi

# The checks of the 4-CPU guest; `arum.repeat=N` (run.sh's ARUM_KTEST_REPEAT) runs them N times,
# for a check that fails now and then.
main_checks() {
  check insmod insmod /arum.ko group=-1
  # The node is root's alone until the administrator says otherwise (udev or chmod): the module
  # sets no mode of its own.
  check device-node-root-only sh -c '[ "$(stat -c %a:%u:%g /dev/arum)" = 600:0:0 ] && [ -c /dev/arum ]'
  check second-open-ebusy /kmod_probe ebusy
  check read-before-write-not-configured /kmod_probe not-configured
  check offline-cpu-error-code /kmod_probe offline-cpu
  check write-while-counting-ebusy /kmod_probe write-while-counting
  check several-sessions-one-descriptor /kmod_probe sessions
  check partial-reads /kmod_probe partial-reads
  check concurrent-reads /kmod_probe concurrent-reads
  check perf-allow-list /kmod_probe allow-list
  check software-events-every-cpu sh -c '/arum --backend kmod --format json -o /tmp/r.json -e cpu-clock,context-switches -- /bin/busybox sleep 0.5 && /kmod_probe counts /tmp/r.json 4'
  check hardware-event-clear-error-rusage-kept sh -c '/arum --backend kmod --format json -o /tmp/h.json -e r003c -- /bin/busybox true && grep -q "not_supported" /tmp/h.json && grep -q "refused the request" /tmp/h.json && grep -q "\"wall_ns\"" /tmp/h.json'
  check module-timer-series-sums-to-totals sh -c '/arum --backend kmod -I 100 --format json -o /tmp/i.json -e cpu-clock,context-switches -- /bin/busybox sleep 0.6 && /kmod_probe intervals /tmp/i.json'
  # The session lasts up to 120 s on a slow guest (twice what its calibration says it needs).
  check -t 150 series-1024-plus-samples-per-cpu /kmod_probe series auto 1030
  check start-spread-reported /kmod_probe spread
  check perf-cpu-offline-online /kmod_probe hotplug 1 perf
  # Each allocation of the re-arm work in turn fails (rounds 1 to 40 of CPU 1 going off and on):
  # the counters it replaces are still released outside the session's lock.
  check -t 240 perf-rearm-allocation-failures /kmod_probe rearm-failslab 1 40
  check failed-alloc-write-leaves-no-stale-data /kmod_probe failed-alloc-write
  # 3000 payloads through perf take 48-60 s of emulated time on our 2-core hosts: the default
  # 60 s limit stopped a run that was passing.
  check -t 240 fuzz-perf-3000 /kmod_probe fuzz 3000 42 perf
  # Payloads from a grammar whose oracle is its own (each breaks at most one rule it names), not the
  # validator the module shares with the other fuzzer.
  check fuzz-oracle-perf-2000 /kmod_probe fuzz-oracle 2000 5 perf
  check sigkill-holder-then-reopen sh -c '/kmod_probe hold & p=$!; sleep 0.5; kill -9 $p; wait $p; /kmod_probe open-close'
  check rmmod-while-open-refused rmmod_while_open
  check rmmod rmmod arum
  check series-thinned-to-cap with_module "series_kib=16" /kmod_probe series 2 5 thinned
  # group=4242: only CAP_PERFMON and members of group 4242 may open the device, and they count
  # whole CPUs only as perf_event_paranoid allows, judged with the writer's credentials.
  check group-and-perfmon-open-rules with_module "group=4242" open_to_all group_rules
  check group-members-get-perfs-rules with_module "group=4242" open_to_all perf_rules
  check register-backend-needs-sys-admin with_module "group=4242 backend=1 sim=2" open_to_all registers_need_sys_admin

  # The msr back-end on the simulated PMU of each family (QEMU's emulator has no counter MSRs).
  check msr-sim-k8 sim "sim=1 sim_rate=1000" AuthenticAMD-15-41 dcache_accesses,dcache_misses,L1_DTLBmiss_L2_DTLBhit,L1_L2_DTLBmiss 0.5 1000 1
  check msr-sim-core2-general-and-fixed sim "sim=2 sim_rate=500" GenuineIntel-6-17 instructions,cycles,dcache_accesses,FP_ASSIST 0.5 500 1
  check msr-sim-netburst-escr-cccr sim "sim=3 sim_rate=250" GenuineIntel-15-3 cycles,instructions,branch_misses 0.5 250 1
  # 24-bit counters at 40 events/us wrap every 420 ms: 3 s is 7 wraps, and nothing may be lost.
  check msr-sim-24-bit-wraps-lose-nothing sim "sim=1 sim_width=24 sim_rate=40" AuthenticAMD-15-41 dcache_accesses,dcache_misses 3 40 100000000
  # 4·10⁹ events a microsecond for 5 s: ns × rate passes 2⁶⁴ after 4.6 s while the 64-bit count
  # does not (a long session, simulated): the arithmetic must not overflow, nor the count be lost.
  check msr-sim-long-session-no-overflow sim "sim=1 sim_width=64 sim_rate=4000000000" AuthenticAMD-15-41 dcache_accesses 5 4000000000 1
  # Each CPU's event-select writes take 100 ms: started one after another the CPUs would be at
  # least 300 ms apart; started in parallel they are not even one write apart.
  check cpus-start-in-parallel with_module "backend=1 sim=1 sim_delay_ms=100" /kmod_probe spread 100 k8
  check zen4-global-enable with_module "backend=1 sim=4" /kmod_probe sim-count zen4 0.5 1000
  check intel-global-enable-without-fixed with_module "backend=1 sim=2 sim_fixed=0" /kmod_probe sim-count core2-general 0.5 1000
  check netburst-ht-counted-per-core with_module "backend=1 sim=3 sim_ht=1 sim_rate=250" /kmod_probe ht-count 250
  check netburst-escr-pairing-refused with_module "backend=1 sim=3" /kmod_probe refuse netburst-badpair 21
  check anythread-cleared-and-reported with_module "backend=1 sim=2" /kmod_probe sim-count core2-anythread 0.3 1000 1
  check wrap-faster-than-timer-refused with_module "backend=1 sim=1 sim_width=16 sim_rate=100" /kmod_probe refuse k8 23
  check period-below-floor-refused with_module "backend=1 sim=1" /kmod_probe refuse k8 18 1
  # Version 6 of Intel's performance monitoring: perf's counters may live where the kernel's counter
  # allocator does not look, so no claim proves ownership.
  check register-backend-refused-on-perfmon-v6 with_module "backend=1 sim=5" /kmod_probe refuse core2-general 6
  check fixed-counter-refused-while-perf-holds-pmu with_module "backend=1 sim=2 sim_busy=1" sh -c \
    '/kmod_probe refuse core2-fixed0 14 && /kmod_probe sim-idle 200000000 b0 200000000'
  check registers-restored-after-session with_module "backend=1 sim=2 sim_global=3" sh -c \
    '/kmod_probe sim-count core2-general 0.3 1000 && /kmod_probe sim-idle 3 0'
  check msr-fault-keeps-errno-and-restores with_module "backend=1 sim=2 sim_fail_msr=391" sh -c \
    '/kmod_probe refuse core2-general 22 | grep -q "errno 5, counter 1" && /kmod_probe sim-idle'
  check close-while-counting-disables with_module "backend=1 sim=2" sh -c '/kmod_probe write-close core2 && /kmod_probe sim-idle'
  check sigkill-while-counting-disables with_module "backend=1 sim=2" killed_while_counting core2
  check failed-stop-disables-and-reports with_module "backend=1 sim=2" /kmod_probe failed-alloc-stop core2
  check msr-cpu-offline-online with_module "backend=1 sim=1" /kmod_probe hotplug 2 k8 1000
  check msr-suspend-resume with_module "backend=1 sim=1" /kmod_probe suspend k8 1000
  check perf-suspend-to-ram-counts-once with_module "" /kmod_probe suspend-perf
  # A hybrid part's other core type lacks an event (simulated on CPU 1): counted where it exists.
  check perf-event-missing-on-one-core-type with_module "sim_perf_absent=2" /kmod_probe hybrid 1
  # 1000 sessions started and closed, the module unloaded and loaded every 50, while CPU 1 goes
  # off- and online without pause: no work of a closed session may run, nor any after rmmod.
  check -t 600 hotplug-racing-close-and-rmmod race_close_rmmod
  check fuzz-msr-core2-1000 with_module "backend=1 sim=2" /kmod_probe fuzz 1000 7 msr 2 2 3
  check fuzz-msr-netburst-1000 with_module "backend=1 sim=3" /kmod_probe fuzz 1000 9 msr 3 18 0
  check fuzz-oracle-msr-core2-1000 with_module "backend=1 sim=2" /kmod_probe fuzz-oracle 1000 17 msr 2 2 3
  check fuzz-oracle-msr-k8-1000 with_module "backend=1 sim=1" /kmod_probe fuzz-oracle 1000 19 msr 1 4 0
  # arum's own peak-memory path on a cgroup v2 machine: the tree gets a group with memory.peak.
  check peak-memory-from-cgroup-v2 sh -c 'mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup &&
    echo +memory >/sys/fs/cgroup/cgroup.subtree_control &&
    /arum --format json -o /tmp/m.json -- /bin/busybox dd if=/dev/zero of=/dev/null bs=64M count=2 &&
    /kmod_probe peak /tmp/m.json 64 cgroup_v2_memory_peak 96'
  check no-oops-or-warning clean_dmesg
  check kmemleak-clean leaks
}
repeat=$(sed -n 's/.*arum\.repeat=\([0-9]*\).*/\1/p' /proc/cmdline)
for _ in $(seq "${repeat:-1}"); do
  main_checks
done
echo "$pass passed, $fail failed"
sync
reboot -f
