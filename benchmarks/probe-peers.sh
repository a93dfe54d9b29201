# Sourced by the function-timing benchmarks (functions.sh, durations.sh), from the repository's
# root: the release arum (`arum`, built if missing, ARUM to pick another), a peer tracer
# installed from Debian's packages when missing (it may pull in LLVM, which the tests do not
# need), the tools a benchmark needs checked, and the test helper built (tests/native/fcalls.c).
# shellcheck shell=bash
arum=${ARUM:-target/x86_64-unknown-linux-gnu/release/arum}
[ -x "$arum" ] || cargo build --release -q -p arum

# install_peer COMMAND: installs the Debian package of that name when the command is missing.
install_peer() {
  command -v "$1" >/dev/null && return
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "installing $1" >&2
  $sudo apt-get install -y -qq "$1" >/dev/null
}

# need TOOL...: stops the benchmark, naming the first tool missing.
need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$tool is missing: run scripts/deps.sh" >&2; exit 1; }
  done
}

# build_fcalls PATH: the test helper, built as the tests build it.
build_fcalls() {
  cc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -Itests/native -pthread \
    -o "$1" tests/native/fcalls.c tests/native/fcalls_lib.c
}
