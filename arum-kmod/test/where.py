#!/usr/bin/env python3
"""Where a hung guest's CPUs are: asks QEMU's monitor (a unix socket) for every CPU's registers
and prints each CPU's instruction pointer as a kernel function, from the kernel's System.map.

Usage: where.py MONITOR_SOCKET|SAVED_REPLY SYSTEM_MAP
Prints one line per distinct place, with the CPUs there, most CPUs first."""

import bisect
import re
import socket
import sys
import time


def registers(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    s.sendall(b"info registers -a\n")
    out = b""
    deadline = time.monotonic() + 10
    # The monitor does not mark the end of a reply: read until it has been quiet for a second.
    while time.monotonic() < deadline:
        try:
            s.settimeout(1)
            chunk = s.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        out += chunk
    s.close()
    return out.decode("utf-8", "replace")


def symbols(path):
    table = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                table.append((int(parts[0], 16), parts[2]))
    table.sort()
    return table


def name(table, addr):
    i = bisect.bisect_right([a for a, _ in table], addr) - 1
    if i < 0:
        return hex(addr)
    base, sym = table[i]
    return f"{sym}+{addr - base:#x}"


def main():
    # A saved reply (a file) is read as it is; anything else is the monitor's socket.
    try:
        with open(sys.argv[1]) as f:
            text = f.read()
    except OSError:
        text = registers(sys.argv[1])
    table = symbols(sys.argv[2])
    places = {}
    for cpu, rip in re.findall(r"CPU#(\d+)\s.*?RIP=([0-9a-f]+)", text, re.S):
        places.setdefault(name(table, int(rip, 16)), []).append(int(cpu))
    if not places:
        print("no registers from the monitor")
        return
    for place, cpus in sorted(places.items(), key=lambda p: -len(p[1])):
        print(f"{len(cpus)} CPUs at {place} (CPUs {','.join(map(str, sorted(cpus)))})")


if __name__ == "__main__":
    main()
