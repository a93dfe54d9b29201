#!/usr/bin/env bash
# How long arum takes to end after the program does, with many functions probed: Debian's nginx
# (a configuration written here in a temporary directory, a free port on 127.0.0.1) under
# `-F 'ngx_http_*'`, stopped by `nginx -s quit` once serving, by each probe engine in turn.
# Prints, per engine, the functions probed and the seconds from the quit to arum's exit.
#
# Usage: benchmarks/detach.sh [ROUNDS]   (default 2)
# ARUM=path/to/arum picks a build (default: the release build). Needs root and nginx
# (scripts/deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/nginx-conf.sh
rounds=${1:-2}
arum=${ARUM:-target/x86_64-unknown-linux-gnu/release/arum}
[ -x "$arum" ] || cargo build --release -q -p arum
command -v /usr/sbin/nginx >/dev/null || { echo "nginx is missing: run scripts/deps.sh" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nginx_conf "$dir" "$port"
nginx=(/usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log")

for engine in bpf perf; do
  for _ in $(seq "$rounds"); do
    "$arum" --probe-engine "$engine" -F 'ngx_http_*' --format json -o "$dir/r.json" -- "${nginx[@]}" \
      >/dev/null 2>"$dir/stderr" &
    pid=$!
    for _ in $(seq 600); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.05
    done
    start=$(date +%s.%N)
    "${nginx[@]}" -s quit
    wait "$pid" || { cat "$dir/stderr" >&2; exit 1; }
    end=$(date +%s.%N)
    n=$(python3 -c "import json; print(len(json.load(open('$dir/r.json'))['functions']['functions']))")
    printf '%-5s %4d functions: arum ended %.2f s after the quit\n' "$engine" "$n" "$(echo "$end - $start" | bc -l)"
  done
done
