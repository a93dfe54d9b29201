#!/usr/bin/env bash
# Lines for the kernel's gen_init_cpio that put dynamically linked host programs into a guest's
# initramfs at their own paths, with every library ldd names (and the directories above them):
# the guest's loader then finds them where the host's does.
# Usage: benchmarks/guest/dynamic-binary.sh PROGRAM...   (absolute paths)
set -euo pipefail
for bin in "$@"; do
  for f in "$bin" $(ldd "$bin" | grep -o '/[^ ]*'); do
    d=$(dirname "$f")
    while [ "$d" != / ]; do echo "dir $d 755 0 0"; d=$(dirname "$d"); done | tac
    echo "file $f $(readlink -f "$f") 755 0 0"
  done
done
