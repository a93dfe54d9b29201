#!/usr/bin/env python3
"""Tests of check.py: small crates written to temporary directories.

Run: python3 -m unittest discover -s tools/module-graph -p 'test_*.py'
"""

import io
import random
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ left in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import check  # noqa: E402

CHECK = Path(__file__).resolve().parent / "check.py"


def m(path):
    """`"a::b"` -> `("crate", "a", "b")`; `""` is the root."""
    return ("crate",) + tuple(p for p in path.split("::") if p)


class CrateTest(unittest.TestCase):
    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.src = Path(self._dir.name) / "src"
        self.src.mkdir()

    def tearDown(self):
        self._dir.cleanup()

    def write(self, files):
        for name, text in files.items():
            path = self.src / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"))

    def run_check(self, *flags):
        out, err = io.StringIO(), io.StringIO()
        code = check.main([*flags, str(self.src)], out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    def edges(self):
        return set(check.load_crate(self.src).edges)


class Cycles(CrateTest):
    def test_no_cycle_passes(self):
        self.write(
            {
                "lib.rs": "pub mod a;\npub mod b;\npub mod c;\npub use a::Thing;\n",
                "a.rs": "use crate::b::f;\npub struct Thing;\n",
                "b.rs": "pub fn f() { crate::c::g() }\n",
                "c.rs": "pub fn g() {}\n",
            }
        )
        code, out, err = self.run_check()
        self.assertEqual(code, 0, err)
        self.assertIn("module graph, 4 modules, 3 edges: no cycle", out)
        self.assertIn("top-level graph, 4 modules, 3 edges: no cycle", out)
        self.assertEqual(self.edges(), {(m(""), m("a")), (m("a"), m("b")), (m("b"), m("c"))})

    def test_two_modules_that_use_each_other(self):
        self.write(
            {
                "lib.rs": "mod a;\nmod b;\n",
                "a.rs": "use crate::b::B;\npub struct A;\n",
                "b.rs": "use crate::a::A;\npub struct B;\n",
            }
        )
        code, _, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn("cycle 1, 2 modules: crate::a, crate::b", err)
        self.assertIn("crate::a -> crate::b", err)
        self.assertIn("crate::b -> crate::a", err)

    def test_cycle_through_a_path_in_code(self):
        self.write(
            {
                "lib.rs": "mod x;\nmod y;\n",
                "x.rs": "pub fn f() {}\npub fn h() -> u8 { 0 }\n",
                "y.rs": "pub fn g() {\n    crate::x::f();\n}\n",
            }
        )
        self.assertEqual(self.run_check()[0], 0)
        (self.src / "x.rs").write_text("pub fn f() { let _: crate::y::T; }\n")
        code, _, err = self.run_check()
        self.assertEqual(code, 1)
        self.assertIn(f"{self.src}/y.rs:2", err)
        self.assertIn(f"{self.src}/x.rs:1", err)

    def test_cycle_through_super(self):
        self.write(
            {
                "lib.rs": "mod a;\n",
                "a/mod.rs": "mod x;\nmod y;\n",
                "a/x.rs": "use super::y::Y;\npub struct X;\n",
                "a/y.rs": "pub struct Y(super::x::X);\n",
            }
        )
        code, _, err = self.run_check("--modules-only")
        self.assertEqual(code, 1)
        self.assertIn("crate::a::x -> crate::a::y", err)
        self.assertIn("crate::a::y -> crate::a::x", err)
        # Both are inside crate::a: one top-level module, no cycle between top-level modules.
        self.assertEqual(self.run_check("--top-level-only")[0], 0)

    def test_grouped_and_nested_use(self):
        self.write(
            {
                "lib.rs": "mod a;\nmod d;\nmod e;\n",
                "a/mod.rs": "pub mod b;\npub mod c;\n",
                "a/b.rs": "pub struct B;\n",
                "a/c.rs": "pub fn c() {}\n",
                "d.rs": "use crate::{\n    a::{b::B, c},\n    e::{self as ee},\n};\n",
                "e.rs": "",
            }
        )
        self.assertEqual(
            self.edges(), {(m("d"), m("a::b")), (m("d"), m("a::c")), (m("d"), m("e"))}
        )
        (self.src / "a/c.rs").write_text("use crate::d;\n")
        code, _, err = self.run_check("--modules-only")
        self.assertEqual(code, 1)
        self.assertIn(f"crate::d -> crate::a::c  {self.src}/d.rs:2", err)

    def test_paths_in_comments_and_literals_do_not_count(self):
        self.write(
            {
                "lib.rs": "mod a;\nmod b;\n",
                "b.rs": "use crate::a::f;\n",
                "a.rs": r'''
                    // use crate::b;
                    /* crate::b::g(); /* nested */ crate::b::g(); */
                    /// Calls `crate::b::g()`.
                    //! crate::b::g
                    pub fn f<'a>(s: &'a str) -> usize {
                        let q = '"';
                        let e = '\'';
                        let text = "crate::b::g() \" crate::b::g()";
                        let raw = r##"crate::b::g() "# crate::b::g()"##;
                        let bytes = b"crate::b::g";
                        s.len() + text.len() + raw.len() + bytes.len() + q.len_utf8() + e.len_utf8()
                    }
                ''',
            }
        )
        code, out, err = self.run_check()
        self.assertEqual(code, 0, err)
        self.assertEqual(self.edges(), {(m("b"), m("a"))})
        # The scanner is still reading code after all of them: a path on the last line counts.
        with open(self.src / "a.rs", "a") as f:
            f.write("pub fn z() { crate::b::g() }\n")
        self.assertEqual(self.run_check()[0], 1)

    def test_test_only_code_does_not_count(self):
        self.write(
            {
                "lib.rs": "mod a;\nmod b;\n#[cfg(test)]\nmod testing;\n",
                "testing.rs": "use crate::a::f;\nuse crate::b::g;\n",
                "b.rs": "pub fn g() { crate::a::f() }\n",
                "a.rs": """
                    pub fn f() {}
                    #[cfg(test)]
                    use crate::b::g;
                    #[cfg(all(test, target_os = "linux"))]
                    fn helper() { crate::b::g() }
                    #[cfg(test)]
                    #[allow(unused)]
                    mod tests {
                        use crate::b::g;
                        mod inner { use crate::b::g; }
                    }
                    #[cfg(test)]
                    mod more_tests;
                """,
                "a/more_tests.rs": "use crate::b::g;\n",
            }
        )
        code, _, err = self.run_check()
        self.assertEqual(code, 0, err)
        self.assertEqual(check.load_crate(self.src).modules, {m(""), m("a"), m("b")})
        # Code built outside tests as well counts.
        with open(self.src / "a.rs", "a") as f:
            f.write('#[cfg(any(test, feature = "x"))]\nfn both() { crate::b::g() }\n')
        self.assertEqual(self.run_check()[0], 1)

    def test_top_level_collapse(self):
        self.write(
            {
                "lib.rs": "mod a;\nmod b;\n",
                "a/mod.rs": "mod x;\nmod y;\n",
                "a/x.rs": "use crate::b::g;\nuse super::y::f;\n",
                "a/y.rs": "pub fn f() {}\n",
                "b.rs": "pub fn g() {}\nfn h() { crate::a::y::f() }\n",
            }
        )
        top = check.top_level(check.load_crate(self.src))
        self.assertEqual(set(top.edges), {(m("a"), m("b")), (m("b"), m("a"))})
        self.assertEqual(self.run_check("--modules-only")[0], 0)
        code, out, err = self.run_check("--top-level-only")
        self.assertEqual(code, 1)
        self.assertIn(f"crate::a -> crate::b  {self.src}/a/x.rs:1", err)
        self.assertIn(f"crate::b -> crate::a  {self.src}/b.rs:2", err)
        self.assertEqual(self.run_check()[0], 1)

    def test_file_and_line_of_each_edge(self):
        self.write(
            {
                "lib.rs": "mod a;\nmod b;\n",
                "a.rs": (
                    "//! A.\n\nuse std::fmt;\n\nuse crate::{\n    b::{\n        B,\n    },\n};\n"
                ),
                "b.rs": "pub struct B;\n\nfn f() {\n    let _ = 1;\n    crate::a::x();\n}\n",
            }
        )
        code, _, err = self.run_check("--modules-only")
        self.assertEqual(code, 1)
        self.assertIn(f"crate::a -> crate::b  {self.src}/a.rs:7\n", err)
        self.assertIn(f"crate::b -> crate::a  {self.src}/b.rs:5\n", err)

    def test_parent_and_child_that_use_each_other(self):
        self.write(
            {
                "lib.rs": "mod p;\n",
                "p/mod.rs": "mod c;\npub use c::Thing;\npub struct Shared;\n",
                "p/c.rs": "use super::Shared;\npub struct Thing(Shared);\n",
            }
        )
        code, _, err = self.run_check("--modules-only")
        self.assertEqual(code, 1)
        self.assertIn("crate::p -> crate::p::c", err)
        self.assertIn("(parent uses its child)", err)
        self.assertIn("(child uses its parent)", err)
        # Declaring the child is no dependency on it.
        (self.src / "p/mod.rs").write_text("mod c;\npub struct Shared;\n")
        self.assertEqual(self.run_check()[0], 0)

    def test_names_bound_by_use_and_child_modules(self):
        self.write(
            {
                "lib.rs": "mod report;\nmod run;\n",
                "report/mod.rs": "pub mod html;\n",
                "report/html.rs": "pub fn page() {}\n",
                "run.rs": "use crate::report;\nfn f() { report::html::page() }\n",
            }
        )
        self.assertIn((m("run"), m("report::html")), self.edges())
        (self.src / "report/mod.rs").write_text("pub mod html;\nfn g() { html::page() }\n")
        self.assertIn((m("report"), m("report::html")), self.edges())

    def test_main_beside_lib_is_a_crate_of_its_own(self):
        self.write(
            {
                "lib.rs": "pub mod cli;\nmod run;\npub fn g() { cli::parse() }\n",
                "main.rs": "use mylib::cli;\nfn main() { cli::parse() }\n",
                "cli.rs": "pub fn parse() {}\n",
                "run.rs": "fn f() { crate::cli::parse() }\n",
            }
        )
        # main.rs's `cli` is the library's, by the library's name: not the lib.rs scope's `cli`.
        self.assertEqual(self.edges(), {(m(""), m("cli")), (m("run"), m("cli"))})
        (self.src / "lib.rs").unlink()
        (self.src / "main.rs").write_text("mod cli;\nmod run;\nfn main() { cli::parse() }\n")
        self.assertEqual(self.edges(), {(m(""), m("cli")), (m("run"), m("cli"))})

    def test_visibility_and_macro_paths_are_not_edges(self):
        self.write(
            {
                "lib.rs": "mod a;\n",
                "a/mod.rs": "mod b;\n",
                "a/b.rs": (
                    "pub(in crate::a) fn f() {}\npub(super) fn g() {}\n"
                    "macro_rules! m { () => { $crate::a::h() } }\n"
                ),
            }
        )
        self.assertEqual(self.edges(), set())


class CommandLine(CrateTest):
    def test_usage_errors(self):
        out, err = io.StringIO(), io.StringIO()
        missing = str(self.src / "nowhere")
        self.assertEqual(check.main([missing], out=out, err=err), 2)
        self.assertIn("is not a directory", err.getvalue())
        self.assertEqual(len(err.getvalue().splitlines()), 1)
        self.assertEqual(check.main([str(self.src)], out=out, err=io.StringIO()), 2)  # no lib.rs
        self.write({"lib.rs": ""})
        err = io.StringIO()
        code = check.main(["--top-level-only", "--modules-only", str(self.src)], out=out, err=err)
        self.assertEqual(code, 2)
        self.assertEqual(len(err.getvalue().splitlines()), 1)

    def test_executable_exit_status_and_dot(self):
        self.write({"lib.rs": "mod a;\nmod b;\n", "a.rs": "use crate::b::B;\n", "b.rs": ""})
        run = subprocess.run([CHECK, "--dot", self.src], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn('"crate::a" -> "crate::b"', run.stdout)
        (self.src / "b.rs").write_text("use crate::a::A;\n")
        run = subprocess.run([CHECK, self.src], capture_output=True, text=True)
        self.assertEqual(run.returncode, 1)


class RandomCrates(CrateTest):
    """Random module trees, each dependency written in one of the forms a file can use, with
    decoys in comments, literals and test code; the edges found must be the ones written, and a
    cycle reported exactly when the written graph has one."""

    def test_random_crates(self):
        rng = random.Random(20240611)
        for crate in range(150):
            self.tearDown()
            self.setUp()
            with self.subTest(crate=crate):
                self.one_random_crate(rng)

    def one_random_crate(self, rng):
        modules = [m("")]
        for _ in range(rng.randint(1, 9)):
            parent = rng.choice(modules)
            if len(parent) < 4:
                modules.append(parent + (f"m{len(modules)}",))
        children = {a: [b for b in modules if b[:-1] == a] for a in modules}
        wanted = set()
        lines = {a: [] for a in modules}
        for a in modules:
            for b in rng.sample(modules, rng.randint(0, min(3, len(modules)))):
                if a != b:
                    wanted.add((a, b))
                    lines[a].append(self.reference(rng, a, b))
            lines[a] += [rng.choice(DECOYS).format(path="::".join(rng.choice(modules)))]
        for a in modules:
            declared = "".join(f"pub mod {c[-1]};\n" for c in children[a])
            body = declared + "".join(lines[a])
            # Either layout of a module: a.rs (beside a/ when it has children) or a/mod.rs.
            if a == m(""):
                name = "lib.rs"
            elif rng.random() < 0.5:
                name = "/".join(a[1:]) + "/mod.rs"
            else:
                name = "/".join(a[1:]) + ".rs"
            self.write({name: body})
        self.assertEqual(self.edges(), wanted)
        code = self.run_check("--modules-only")[0]
        self.assertEqual(code, 1 if has_cycle(wanted) else 0)
        top = {(a[:2], b[:2]) for a, b in wanted if a[:2] != b[:2]}
        self.assertEqual(self.run_check("--top-level-only")[0], 1 if has_cycle(top) else 0)

    @staticmethod
    def reference(rng, a, b):
        """One line that makes module `a` depend on module `b`, in a random form."""
        absolute = "::".join(b)
        forms = [
            f"use {absolute}::Item;\n",
            f"fn f{rng.randint(0, 10**6)}() {{ {absolute}::item(); }}\n",
            f"use crate::{{{'::'.join(b[1:]) + '::{Item, other}' if len(b) > 1 else 'Item'}}};\n",
            f"type T{rng.randint(0, 10**6)} = Vec<{absolute}::Item>;\n",
        ]
        common = 0
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
        ups = len(a) - common
        relative = "::".join(["super"] * ups + list(b[common:]))
        if ups and common == len(b):
            forms.append(f"use {relative}::Item;\n")
        elif ups:
            forms.append(f"use {relative}::{{self, Item}};\n")
        elif len(b) > len(a):
            forms.append(f"pub use self::{'::'.join(b[common:])}::Item;\n")
            forms.append(f"pub use {'::'.join(b[common:])}::Item;\n")
        return rng.choice(forms)


DECOYS = [
    "// use {path}::Item;\n",
    "/* {path}::f() */\n",
    '/// See `{path}::Item`.\nconst S: &str = "{path}::Item";\n',
    "#[cfg(test)]\nmod tests {{\n    use {path}::Item;\n}}\n",
    "#[cfg(test)]\nfn t() {{ {path}::f(); }}\n",
    'const R: &str = r#"{path}::Item"#;\n',
    "pub(crate) fn p() {{}}\n",
]


def has_cycle(edges):
    """A cycle by reachability: some edge a -> b with a reachable again from b."""
    nodes = {n for e in edges for n in e}
    reach = {n: {b for a, b in edges if a == n} for n in nodes}
    changed = True
    while changed:
        changed = False
        for n in nodes:
            more = set().union(*(reach[k] for k in reach[n])) - reach[n]
            if more:
                reach[n] |= more
                changed = True
    return any(n in reach[n] for n in nodes)


if __name__ == "__main__":
    unittest.main()
