#!/usr/bin/env bash
# A Slurm cluster of this one machine for ARUM's tests: munged, slurmctld and slurmd from
# Debian's packages (munge, slurm-wlm), every file (key, sockets, state, logs, pid files) under
# DIR, every address 127.0.0.1, so nothing of the machine's own configuration is read or changed.
#
#   tests/slurm/cluster.sh start DIR CTLD_PORT SLURMD_PORT   # prints the SLURM_CONF to export
#   tests/slurm/cluster.sh stop DIR                           # always safe to call
#
# Jobs then run with SLURM_CONF=DIR/slurm.conf srun ...
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?directory for the cluster\'s files}
dir=$(cd "$dir" && pwd)

stop() {
  local name pid
  for name in slurmd slurmctld munged; do
    [ -f "$dir/$name.pid" ] || continue
    pid=$(cat "$dir/$name.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/$name.pid"
  done
}

case $cmd in
stop)
  stop
  exit 0
  ;;
start) ;;
*)
  echo "usage: $0 start DIR CTLD_PORT SLURMD_PORT | stop DIR" >&2
  exit 2
  ;;
esac

ctld_port=${3:?slurmctld port}
slurmd_port=${4:?slurmd port}
for tool in munged mungekey slurmctld slurmd srun; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install munge slurm-wlm" >&2; exit 3; }
done
trap 'stop' ERR
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$dir/state" "$dir/spool" "$dir/munge" "$dir/munge-run"
chmod 700 "$dir/munge"
chmod 755 "$dir/munge-run"

mungekey --create --keyfile="$dir/munge/munge.key" --force 2>/dev/null ||
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge/munge.key"
munged --socket="$dir/munge-run/munge.sock" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" --force

cat >"$dir/slurm.conf" <<CONF
ClusterName=arumtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge-run/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF

export SLURM_CONF="$dir/slurm.conf"
slurmctld -i
slurmd
# Ready when the node is idle (the controller has heard from slurmd).
for _ in $(seq 150); do
  if sinfo -h -o %t 2>/dev/null | grep -qx idle; then
    echo "$dir/slurm.conf"
    exit 0
  fi
  sleep 0.2
done
echo "the Slurm node did not become idle in 30 s; see $dir/slurmctld.log and $dir/slurmd.log" >&2
stop
exit 4
