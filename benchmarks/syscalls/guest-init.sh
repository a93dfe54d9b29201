#!/bin/busybox sh
# /init of benchmarks/syscalls-guest.sh's guest: the storm of system calls under strace -f -c and
# under arum's two engines, at this guest's CPU count; the files go to the console between
# "=== NAME" lines for the host to compare, then the guest powers off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
mount -t tracefs tracefs /sys/kernel/tracing
arg() { tr ' ' '\n' </proc/cmdline | sed -n "s/^arum\.$1=//p"; }
threads=$(arg threads)
rounds=$(arg rounds)
now() { cut -d' ' -f1 /proc/uptime; }
# Elapsed seconds of a command (/proc/uptime: 10 ms steps), its output discarded.
elapsed() {
  t0=$(now)
  "$@" >/dev/null 2>&1
  awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }'
}
echo "guest: cpus=$(grep -c ^processor /proc/cpuinfo) threads=$threads rounds=$rounds"
bare=$(elapsed /storm "$threads" "$rounds")
strace_s=$(elapsed strace -f -c -o /tmp/strace.txt /storm "$threads" "$rounds")
bpf_s=$(elapsed /arum --probe-engine bpf --syscalls --format json -o /tmp/bpf.json -- /storm "$threads" "$rounds")
perf_s=$(elapsed /arum --probe-engine perf --syscalls --format json -o /tmp/perf.json -- /storm "$threads" "$rounds")
echo "=== elapsed"
echo "$bare $strace_s $bpf_s $perf_s"
for f in strace.txt bpf.json perf.json; do
  echo "=== $f"
  cat "/tmp/$f"
done
echo "=== end"
poweroff -f
