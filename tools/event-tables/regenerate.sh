#!/usr/bin/env bash
# Regenerates every table in event-tables/ from Debian's packages: libpfm4-dev (bookworm) and
# the Linux 7.3 source (linux-source-7.3 from trixie-backports, fetched download-only into the
# cache arum-kmod/test/kernel.sh uses). Prints the comparison of the two sources and writes it to
# tools/event-tables/comparison.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KVER=7.3
cache=${ARUM_KCACHE:-$HOME/.cache/arum-kmod}
src="$cache/src-$KVER"
sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
if ! dpkg -s libpfm4-dev >/dev/null 2>&1 || ! command -v cc >/dev/null; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libpfm4-dev build-essential python3 >/dev/null
fi
if [ ! -d "$src/linux/tools/perf/pmu-events/arch/x86" ]; then
  # The same download-only fetch as arum-kmod/test/kernel.sh: trixie-backports' source package,
  # through the machine's own Debian mirror, without touching the system's apt sources.
  apt="$cache/apt"
  mkdir -p "$apt/lists/partial" "$apt/debs"
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
  printf 'deb %s trixie main\ndeb %s trixie-backports main\n' "$mirror" "$mirror" >"$apt/sources.list"
  o=(-oDir::Etc::SourceList="$apt/sources.list" -oDir::Etc::SourceParts=/dev/null -oDir::State::Lists="$apt/lists" -oDir::Cache::Archives="$apt/debs")
  apt-get "${o[@]}" update -qq
  (cd "$apt/debs" && apt-get "${o[@]}" download "linux-source-$KVER" >&2)
  rm -rf "$src.tmp" && mkdir -p "$src.tmp"
  dpkg -x "$apt"/debs/linux-source-"$KVER"_*.deb "$src.tmp/deb"
  tar -C "$src.tmp" -xf "$src.tmp"/deb/usr/src/linux-source-"$KVER".tar.xz
  mv "$src.tmp/linux-source-$KVER" "$src.tmp/linux" && rm -rf "$src.tmp/deb"
  rm -rf "$src" && mv "$src.tmp" "$src"
fi
ARUM_LINUX_SRC="$src/linux" python3 "$here/gen-tables.py"
