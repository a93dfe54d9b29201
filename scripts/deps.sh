#!/usr/bin/env bash
# Installs what a fresh Debian 12 / Ubuntu machine lacks to build and test ARUM, from Debian's
# packages only. Sourced by demo.sh and test.sh; safe to run again.
set -euo pipefail
need=()
command -v cc >/dev/null || need+=(build-essential)
[ -x /usr/bin/time ] || need+=(time)
command -v perf >/dev/null || need+=(linux-perf)
command -v xz >/dev/null || need+=(xz-utils)
# Launchers of parallel jobs for tests/tests/parallel.rs: OpenMPI (mpirun, mpicc), Slurm, munge.
command -v mpirun >/dev/null || need+=(openmpi-bin)
command -v mpicc >/dev/null || need+=(libopenmpi-dev)
command -v slurmd >/dev/null || need+=(slurm-wlm)
command -v munged >/dev/null || need+=(munge)
command -v g++ >/dev/null || need+=(g++)
# arum-bpf: clang compiles the BPF programs; libbpf (built from its crate) links Debian's static
# libelf and zlib, and its build uses make and pkg-config.
compgen -c clang | grep -qE '^clang(-[0-9]+)?$' || need+=(clang)
[ -e /usr/lib/x86_64-linux-gnu/libelf.a ] || need+=(libelf-dev)
[ -e /usr/lib/x86_64-linux-gnu/libz.a ] || need+=(zlib1g-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v make >/dev/null || need+=(make)
command -v setpriv >/dev/null || need+=(util-linux) # runs arum without CAP_BPF in the tests
command -v cyclictest >/dev/null || need+=(rt-tests) # arum hourglass's peer for dispatch latency
command -v ip >/dev/null || need+=(iproute2)          # network namespaces: hourglass's flood, calibrate's veth pair
command -v sysbench >/dev/null || need+=(sysbench)  # arum calibrate --peers
command -v strace >/dev/null || need+=(strace)      # --syscalls' peer (tests/tests/syscalls.rs)
[ -x /usr/sbin/nginx ] || need+=(nginx)             # a real server under --syscalls (tests/tests/server.rs)
command -v wrk >/dev/null || need+=(wrk)            # its load
command -v chromium >/dev/null || need+=(chromium)  # tests/tests/html.rs: the --html page in a real browser
# The run history's shared store: the tests start a server of their own from these binaries.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
command -v git >/dev/null || need+=(git)            # --save reads the work tree's commit
command -v valgrind >/dev/null || need+=(valgrind)  # tools/startup-order: the functions runs execute
if ((${#need[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "installing: ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null; then
  echo "cargo is missing: install a Rust toolchain >= 1.85 with rustup, then run this again" >&2
  exit 1
fi
