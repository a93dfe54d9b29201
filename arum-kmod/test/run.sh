#!/usr/bin/env bash
# Builds a Rust-enabled test kernel (cached), the module, static arum and kmod_probe binaries,
# packs them with busybox into an initramfs, boots QEMU (4 CPUs, TCG) and runs the module's
# checks in the guest (guest-init.sh). Prints one line per check and "N passed, N failed";
# exits non-zero on any failure.
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
make -s -C "$kdir" M="$work/mod/arum-kmod" LLVM=-19 modules >&2

echo "run.sh: building static arum and kmod_probe" >&2
(cd "$top" && RUSTFLAGS='-C target-feature=+crt-static' cargo build -q --release \
  --target x86_64-unknown-linux-gnu -p arum-cli -p arum-tests --bin arum --bin kmod_probe)
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

echo "run.sh: booting the guest" >&2
timeout 300 qemu-system-x86_64 -machine pc,accel=tcg -cpu max -smp 4 -m 1G \
  -kernel "$kdir/arch/x86/boot/bzImage" -initrd "$work/initramfs.cpio" \
  -append "console=ttyS0 panic=-1 oops=panic quiet loglevel=1" -nographic -no-reboot </dev/null >"$work/console.log" 2>&1 || true

grep -E '^(PASS|FAIL) |^    ' "$work/console.log" | tr -d '\r' || true
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work/console.log" | tr -d '\r' | tail -n 1 || true)
if [ -z "$summary" ]; then
  echo "the guest did not finish; its console:" >&2
  tail -n 40 "$work/console.log" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
echo "$summary"
case "$summary" in *", 0 failed") exit 0 ;; *) exit 1 ;; esac
