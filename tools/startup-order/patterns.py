#!/usr/bin/env python3
"""With `--defined DEFINED` (a file of the names a build defines), reads mangled symbol names on
stdin and writes the start-up order's entries on stdout, in order and without repeats: a Rust
name (legacy `_ZN...17h<hash>E`, v0 `_R...`) with its hashes as `*` where that pattern matches
this one function of the build, every other name as it is. The hashes move with every
dependency, toolchain or crate change; the paths they stand beside do not, so those patterns stay
right across such changes. A generic function's instances share a legacy path: its pattern would
gather every instance, most of them never run, so such a name stays exact (and goes stale with
the hashes; check.sh says when too much has).

With `--found DEFINED` (a file of the names a build defines), reads the list's entries on stdin
instead and prints how many of them match a defined name, by the rule the linker applies (a
glob over the sections' names): check.sh's measure of how much of the list a build still has.

With `--uncovered LIST` (a start-up order), reads the names of functions a run executes on stdin
and prints those no entry of the list places: check.sh's measure of what the list misses."""

import bisect
import fnmatch
import re
import sys

LEGACY_HASH = re.compile(r"17h[0-9a-f]{16}E$")
# A v0 crate root's disambiguator: `C` then `s<base-62>_`.
V0_DISAMBIGUATOR = re.compile(r"Cs[0-9A-Za-z]*_")


def pattern(name: str) -> str:
    if name.startswith("_ZN"):
        return LEGACY_HASH.sub("17h*E", name)
    if name.startswith("_R"):
        return V0_DISAMBIGUATOR.sub("Cs*_", name)
    return name


def matching(entry: str, defined: list[str], most: int) -> int:
    """How many names of `defined` (sorted) the entry matches, counting up to `most`."""
    if "*" not in entry:
        i = bisect.bisect_left(defined, entry)
        return int(i < len(defined) and defined[i] == entry)
    # Only names that start as the pattern does can match it.
    prefix = entry.split("*", 1)[0]
    i = bisect.bisect_left(defined, prefix)
    count = 0
    while i < len(defined) and defined[i].startswith(prefix) and count < most:
        count += fnmatch.fnmatchcase(defined[i], entry)
        i += 1
    return count


def found(entries: list[str], defined: list[str]) -> int:
    """How many entries match a defined name."""
    return sum(matching(e, defined, 1) > 0 for e in entries)


def uncovered(names: list[str], entries: list[str]) -> list[str]:
    """The names that no entry matches, by the linker's rule."""
    exact = {e for e in entries if "*" not in e}
    globs = {e for e in entries if "*" in e}
    return [
        n
        for n in names
        if n not in exact
        and pattern(n) not in globs
        and not any(fnmatch.fnmatchcase(n, g) for g in globs if n.startswith(g.split("*", 1)[0]))
    ]


def entry(name: str, defined: list[str]) -> str:
    """The list's entry for `name`: its pattern if that matches this function alone."""
    p = pattern(name)
    return p if "*" in p and matching(p, defined, 2) == 1 else name


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("--found", "--defined", "--uncovered"):
        sys.exit(
            "usage: patterns.py --defined DEFINED < names, --found DEFINED < entries,"
            " or --uncovered LIST < names"
        )
    with open(sys.argv[2]) as f:
        given = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    lines = [l.strip() for l in sys.stdin if l.strip() and not l.startswith("#")]
    if sys.argv[1] == "--uncovered":
        for name in uncovered(lines, given):
            print(name)
        return
    defined = sorted(given)
    if sys.argv[1] == "--found":
        print(found(lines, defined))
        return
    seen = set()
    for name in lines:
        e = entry(name, defined)
        if e not in seen:
            seen.add(e)
            print(e)


if __name__ == "__main__":
    main()
