#!/usr/bin/env python3
"""Tests of patterns.py: the list's entries made from names, and the two measures check.sh takes
of a list against a build (its entries found, the executed functions it misses).

Run: python3 -m unittest discover -s tools/startup-order -p 'test_*.py'
"""

import random
import string
import sys
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ left in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import patterns  # noqa: E402


def legacy(path: list[str], digest: int) -> str:
    """A legacy mangled name `_ZN<len><seg>...17h<16 hex>E`."""
    body = "".join(f"{len(p)}{p}" for p in path)
    return f"_ZN{body}17h{digest:016x}E"


def v0(crate: str, disambiguator: str, item: str) -> str:
    """A v0 mangled name of `crate::item` with the crate's disambiguator."""
    return f"_RNvCs{disambiguator}_{len(crate)}{crate}{len(item)}{item}"


class PatternTest(unittest.TestCase):
    def test_hashes_become_stars(self):
        self.assertEqual(
            patterns.pattern(legacy(["arum_core", "run", "run"], 0x9465F3C58D212E17)),
            "_ZN9arum_core3run3run17h*E",
        )
        self.assertEqual(
            patterns.pattern(v0("std", "6d7GoaNTBIz", "exit")), "_RNvCs*_3std4exit"
        )
        self.assertEqual(patterns.pattern("__memcmp_evex_movbe"), "__memcmp_evex_movbe")

    def test_a_generic_functions_instances_keep_their_hashes(self):
        defined = sorted(
            [legacy(["alloc", "vec", "drop"], 1), legacy(["alloc", "vec", "drop"], 2)]
        )
        self.assertEqual(patterns.entry(defined[0], defined), defined[0])
        alone = legacy(["arum", "main"], 3)
        self.assertEqual(patterns.entry(alone, sorted(defined + [alone])), "_ZN4arum4main17h*E")


class UncoveredTest(unittest.TestCase):
    def test_a_list_made_from_the_names_covers_them_all(self):
        rng = random.Random(7)
        for _ in range(50):
            names = set()
            while len(names) < 40:
                segs = [
                    "".join(rng.choices(string.ascii_lowercase + "_", k=rng.randint(1, 9)))
                    for _ in range(rng.randint(1, 4))
                ]
                kind = rng.randrange(3)
                if kind == 0:
                    names.add(legacy(segs, rng.getrandbits(64)))
                elif kind == 1:
                    names.add(v0(segs[0], "".join(rng.choices(string.ascii_letters, k=8)), segs[-1]))
                else:
                    names.add("__" + "_".join(segs))
            defined = sorted(names)
            executed = rng.sample(defined, 25)
            entries = [patterns.entry(n, defined) for n in sorted(executed)]
            self.assertEqual(patterns.uncovered(executed, entries), [])
            # Every name left out of the list, and only those, is reported.
            dropped = set(rng.sample(executed, 5))
            kept = [patterns.entry(n, defined) for n in sorted(executed) if n not in dropped]
            # A pattern kept for another name may still cover a dropped one (the same path with
            # other hashes); the linker would place it, so it is not missed.
            missed = set(patterns.uncovered(executed, kept))
            self.assertTrue(missed <= dropped)
            self.assertEqual(
                missed,
                {d for d in dropped if patterns.pattern(d) not in kept and d not in kept},
            )

    def test_a_renamed_function_is_missed(self):
        old = legacy(["arum_core", "system", "metadata"], 5)
        new = legacy(["arum_core", "system", "machine"], 5)
        entries = [patterns.entry(old, [old])]
        self.assertEqual(patterns.uncovered([new], entries), [new])
        self.assertEqual(patterns.found(entries, [new]), 0)


if __name__ == "__main__":
    unittest.main()
