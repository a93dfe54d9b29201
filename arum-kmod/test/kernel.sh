#!/usr/bin/env bash
# Builds a small Rust-enabled kernel with module support for testing the /dev/arum module, from
# Debian's packages only. Prints the kernel build directory (KDIR) on its last line.
# The build is cached in $ARUM_KCACHE (default ~/.cache/arum-kmod), keyed by kernel version,
# config fragment and rustc version: a second run takes seconds.
# ARUM_KCONFIG=FILE builds from another fragment (benchmarks/scale.sh's kernel without checkers,
# benchmarks/syscalls-guest.sh's with BPF).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
config=${ARUM_KCONFIG:-$here/kernel.config}
KVER=7.3
RUST_SRC_VER=1.95.0+dfsg1-2~bpo13+1
LLVM=-19
cache=${ARUM_KCACHE:-$HOME/.cache/arum-kmod}
mkdir -p "$cache"
log() { echo "kernel.sh: $*" >&2; }

# --- host packages (bookworm) --------------------------------------------------------------
need=()
pkgs=(clang-19 lld-19 llvm-19 libclang-19-dev flex bison bc libelf-dev libssl-dev make build-essential qemu-system-x86 busybox-static)
# A kernel with BTF (benchmarks/syscalls/guest.kconfig) has pahole generate it.
grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$config" && pkgs+=(dwarves)
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ((${#need[@]})); then
  log "installing ${need[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v bindgen >/dev/null; then
  log "installing bindgen-cli from the crate registry (a few minutes)"
  cargo install --locked bindgen-cli >&2
fi

# --- kernel source and Rust library sources (trixie-backports, download only) --------------
src="$cache/src-$KVER"
rustsrc="$cache/rustsrc-$RUST_SRC_VER"
if [ ! -d "$src/linux" ] || [ ! -d "$rustsrc" ]; then
  apt="$cache/apt"
  mkdir -p "$apt/lists/partial" "$apt/debs"
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
  printf 'deb %s trixie main\ndeb %s trixie-backports main\n' "$mirror" "$mirror" >"$apt/sources.list"
  o=(-oDir::Etc::SourceList="$apt/sources.list" -oDir::Etc::SourceParts=/dev/null -oDir::State::Lists="$apt/lists" -oDir::Cache::Archives="$apt/debs")
  apt-get "${o[@]}" update -qq
  (cd "$apt/debs" && apt-get "${o[@]}" download "linux-source-$KVER" "rust-src=$RUST_SRC_VER" >&2)
  if [ ! -d "$src/linux" ]; then
    rm -rf "$src.tmp" && mkdir -p "$src.tmp"
    dpkg -x "$apt"/debs/linux-source-"$KVER"_*.deb "$src.tmp/deb"
    tar -C "$src.tmp" -xf "$src.tmp"/deb/usr/src/linux-source-"$KVER".tar.xz
    mv "$src.tmp/linux-source-$KVER" "$src.tmp/linux" && rm -rf "$src.tmp/deb"
    mv "$src.tmp" "$src"
  fi
  if [ ! -d "$rustsrc" ]; then
    rm -rf "$rustsrc.tmp" && dpkg -x "$apt"/debs/rust-src_*.deb "$rustsrc.tmp" && mv "$rustsrc.tmp" "$rustsrc"
  fi
fi
export RUST_LIB_SRC
RUST_LIB_SRC=$(echo "$rustsrc"/usr/src/rustc-*/library)

# --- configure and build, cached by version + fragment + rustc -----------------------------
key=$(cat "$config" <(rustc --version) <(echo "$KVER $LLVM") | sha256sum | cut -c1-16)
kdir="$cache/build-$KVER-$key"
if [ ! -f "$kdir/arch/x86/boot/bzImage" ]; then
  log "building linux $KVER into $kdir (about 22 CPU-minutes: 11 minutes on 2 idle cores)"
  mkdir -p "$kdir"
  m=(make -C "$src/linux" O="$kdir" ARCH=x86_64 LLVM=$LLVM)
  "${m[@]}" tinyconfig >&2
  "$src/linux/scripts/kconfig/merge_config.sh" -m -O "$kdir" "$kdir/.config" "$config" >&2
  "${m[@]}" olddefconfig >&2
  "${m[@]}" rustavailable >&2
  for opt in $(sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=y/\1/p' "$config"); do
    grep -q "^$opt=y" "$kdir/.config" || { log "config lost $opt (a dependency is missing)"; exit 1; }
  done
  "${m[@]}" -j"$(nproc)" >&2
fi
echo "$kdir"
