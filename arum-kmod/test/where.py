#!/usr/bin/env python3
"""Where a hung guest's CPUs are: asks QEMU's monitor (a unix socket) for every CPU's registers
and prints each CPU's instruction pointer as a kernel function, from the kernel's System.map.

Usage: where.py MONITOR_SOCKET SYSTEM_MAP
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
    """The text symbols of System.map as two sorted lists: addresses and names."""
    table = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                table.append((int(parts[0], 16), parts[2]))
    table.sort()
    return [a for a, _ in table], [n for _, n in table]


def name(addrs, names, addr):
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0:
        return hex(addr)
    return f"{names[i]}+{addr - addrs[i]:#x}"


def main():
    text = registers(sys.argv[1])
    addrs, names = symbols(sys.argv[2])
    places = {}
    for cpu, rip in re.findall(r"CPU#(\d+)\s.*?RIP=([0-9a-f]+)", text, re.S):
        places.setdefault(name(addrs, names, int(rip, 16)), []).append(int(cpu))
    if not places:
        print("no registers from the monitor")
        return
    for place, cpus in sorted(places.items(), key=lambda p: -len(p[1])):
        print(f"{len(cpus)} CPUs at {place} (CPUs {','.join(map(str, sorted(cpus)))})")


if __name__ == "__main__":
    main()
