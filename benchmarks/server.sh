#!/usr/bin/env bash
# The perturbation of --syscalls on a real server: Debian's nginx (one process, a static file of
# 4 KiB, a configuration written here in a temporary directory, a free port on 127.0.0.1) driven
# by wrk, bare and under arum, in alternating rounds; prints requests/s of each and their ratio.
#
# Usage: benchmarks/server.sh [SECONDS] [ROUNDS] [ARUM OPTIONS...]
#   default: 3 s per run, 3 rounds, `--syscalls`; e.g. `benchmarks/server.sh 3 3 --syscalls=network`
#   or `benchmarks/server.sh 3 3 --syscalls -F 'ngx_http_*'`.
# ARUM=path/to/arum picks a build (default: the release build). Needs root (tracepoints), nginx
# and wrk (scripts/deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/nginx-conf.sh
secs=${1:-3}
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
opts=("$@")
((${#opts[@]})) || opts=(--syscalls)
arum=${ARUM:-target/x86_64-unknown-linux-gnu/release/arum}
[ -x "$arum" ] || cargo build --release -q -p arum
for tool in /usr/sbin/nginx wrk; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: run scripts/deps.sh" >&2; exit 1; }
done
dir=$(mktemp -d)
server=""
trap '[ -z "$server" ] || kill "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir -p "$dir/www"
head -c 4096 /dev/zero | tr '\0' a >"$dir/www/index.html"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nginx_conf "$dir" "$port"
nginx=(/usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log")

# One run: starts the server (under arum when $1 is "arum"), loads it, stops it; prints req/s.
run() {
  if [ "$1" = arum ]; then
    "$arum" "${opts[@]}" --format json -o "$dir/report.json" -- "${nginx[@]}" >/dev/null 2>&1 &
  else
    "${nginx[@]}" >/dev/null 2>&1 &
  fi
  server=$!
  for _ in $(seq 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
  done
  wrk -t1 -c4 -d"${secs}s" -H 'Connection: close' "http://127.0.0.1:$port/index.html" |
    awk '/^Requests\/sec:/ { print $2 }'
  kill -TERM "$server"
  wait "$server" || true
}

bare=() under=()
for r in $(seq "$rounds"); do
  bare+=("$(run bare)")
  under+=("$(run arum)")
  echo "round $r: bare ${bare[-1]} req/s, under arum ${opts[*]} ${under[-1]} req/s" >&2
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
b=$(median "${bare[@]}")
u=$(median "${under[@]}")
echo "nginx, wrk -c4 Connection: close, ${secs}s x $rounds rounds on $(nproc) CPUs (medians):"
echo "  bare            $b req/s"
echo "  arum ${opts[*]}  $u req/s"
awk -v b="$b" -v u="$u" 'BEGIN { printf "  ratio (arum / bare) %.3f: %.1f%% fewer requests/s under arum\n", u / b, (1 - u / b) * 100 }'
