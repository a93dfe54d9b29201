#!/usr/bin/env python3
"""Fails when a Rust crate's module graph has an import cycle.

Usage: tools/module-graph/check.py [--top-level-only | --modules-only] [--dot] [SRC_DIR]
(SRC_DIR defaults to arum-core/src, relative to the repository.)

Modules that import each other cannot be understood, tested or moved one at a time; the engine
crate is kept free of cycles, and this check keeps it so.

The module tree comes from the files: src/lib.rs (or src/main.rs) is `crate`, src/a.rs and
src/a/mod.rs are `crate::a`, src/a/b.rs is `crate::a::b`. An inline `mod name { .. }` block
belongs to its file's module. A module declared under a `#[cfg(test)]` attribute (or a file that
opens with `#![cfg(test)]`) is test-only and left out, as is every item under such an attribute:
test code may import what it likes.

An edge runs from a file's module to the deepest module of the tree that is a prefix of a path
the file names, outside comments and literals: `crate::` paths in `use` declarations (grouped
ones too) and in code, `self::` and `super::` paths, and paths that start with a child module or
a name a `use` bound (`use crate::report;` then `report::html::f()`). A parent that uses its
child's items depends on it (`pub use child::X` counts); declaring `mod child;` does not.
`$crate` paths (in macros) and the binary crates (src/bin/, and src/main.rs beside src/lib.rs)
are not followed, nor are re-exports: `crate::X` re-exported by lib.rs is an edge to `crate`.

Two graphs are checked: every module as a node, and the top-level modules only (`crate::a::b`
counted as `crate::a`). A strongly connected component of more than one module is a cycle; each
is printed with one file:line for every edge inside it.

Exit status: 0 no cycle, 1 a cycle, 2 a usage error.
"""

import argparse
import os
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

ROOT = ("crate",)

# Keywords after which a brace closes the item (`fn f() { .. }`, `mod m { .. }`); other items
# (use, const, static, let, type) and statements end at a semicolon.
BRACE_ITEMS = {"fn", "impl", "mod", "struct", "enum", "union", "trait", "macro_rules", "extern"}
SEMI_ITEMS = {"use", "const", "static", "let", "type"}


class UsageError(Exception):
    """A problem with the command line or the directory given: one line, exit status 2."""


# ---------------------------------------------------------------------------------------------
# Lexer: identifiers and punctuation with their lines; comments dropped, literals made opaque.


@dataclass
class Token:
    kind: str  # "id", "punct", "lit" or "life" (a lifetime or label)
    text: str
    line: int


def _skip_block_comment(src, i, line):
    """`i` is just after `/*`; block comments nest."""
    depth = 1
    while i < len(src) and depth:
        if src.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif src.startswith("*/", i):
            depth, i = depth - 1, i + 2
        else:
            line += src[i] == "\n"
            i += 1
    return i, line


def _skip_quoted(src, i, line, quote):
    """`i` is just after the opening quote; backslash escapes the next character."""
    while i < len(src) and src[i] != quote:
        if src[i] == "\\":
            i += 1
        if i < len(src):
            line += src[i] == "\n"
        i += 1
    return i + 1, line


def _skip_raw_string(src, i, line):
    """`i` is at the first `#` or `"` after the `r` of a raw string."""
    hashes = 0
    while i < len(src) and src[i] == "#":
        hashes, i = hashes + 1, i + 1
    i += 1  # the opening quote
    end = '"' + "#" * hashes
    close = src.find(end, i)
    close = len(src) if close < 0 else close
    return close + len(end), line + src.count("\n", i, close)


def _is_ident_start(c):
    return c == "_" or c.isalpha()


def _is_ident_char(c):
    return c == "_" or c.isalnum()


def tokenize(src):
    tokens = []
    i, line, n = 0, 1, len(src)
    if src.startswith("#!") and not src.startswith("#!["):
        i = src.find("\n") if "\n" in src else n  # a shebang line
    while i < n:
        c = src[i]
        start_line = line
        if c == "\n":
            line, i = line + 1, i + 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            nl = src.find("\n", i)
            i = n if nl < 0 else nl
        elif src.startswith("/*", i):
            i, line = _skip_block_comment(src, i + 2, line)
        elif c == '"':
            i, line = _skip_quoted(src, i + 1, line, '"')
            tokens.append(Token("lit", '""', start_line))
        elif c == "'":
            if src.startswith("\\", i + 1):  # '\n', '\'', '\u{..}'
                i, line = _skip_quoted(src, i + 1, line, "'")
                tokens.append(Token("lit", "''", start_line))
            elif i + 2 < n and src[i + 2] == "'":  # 'x'
                i += 3
                tokens.append(Token("lit", "''", start_line))
            else:  # 'a, 'label
                j = i + 1
                while j < n and _is_ident_char(src[j]):
                    j += 1
                tokens.append(Token("life", src[i:j], start_line))
                i = j
        elif _is_ident_start(c):
            j = i
            while j < n and _is_ident_char(src[j]):
                j += 1
            word = src[i:j]
            rest = src[j : j + 2]
            if word in ("r", "br", "cr") and (rest[:1] == '"' or rest == '#"' or rest == "##"):
                i, line = _skip_raw_string(src, j, line)
                tokens.append(Token("lit", '""', start_line))
            elif word in ("b", "c") and rest[:1] in ('"', "'"):
                i, line = _skip_quoted(src, j + 1, line, rest[0])
                tokens.append(Token("lit", '""', start_line))
            elif word == "r" and rest[:1] == "#" and j + 1 < n and _is_ident_start(src[j + 1]):
                k = j + 1  # a raw identifier, r#type
                while k < n and _is_ident_char(src[k]):
                    k += 1
                tokens.append(Token("id", "r#" + src[j + 1 : k], start_line))
                i = k
            else:
                tokens.append(Token("id", word, start_line))
                i = j
        elif c.isdigit():
            j = i + 1
            while j < n and (
                _is_ident_char(src[j]) or (src[j] == "." and j + 1 < n and src[j + 1].isdigit())
            ):
                j += 1
            tokens.append(Token("lit", src[i:j], start_line))
            i = j
        elif src.startswith("::", i):
            tokens.append(Token("punct", "::", start_line))
            i += 2
        else:
            tokens.append(Token("punct", c, start_line))
            i += 1
    return tokens


# ---------------------------------------------------------------------------------------------
# Scanner: one file's path references, `use` bindings and module declarations.


@dataclass
class Ref:
    scope: tuple  # the module (with inline modules) the path is written in
    segments: list
    line: int


@dataclass
class FileScan:
    refs: list = field(default_factory=list)
    # (scope, name) -> the segments the name was bound to by a `use`
    bindings: dict = field(default_factory=dict)
    inline_modules: set = field(default_factory=set)
    test_modules: set = field(default_factory=set)
    test_only: bool = False  # the file opens with #![cfg(test)]


def _matching(tokens, i):
    """Index just past the bracket group that opens at `tokens[i]`."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    while i < len(tokens):
        t = tokens[i]
        if t.kind == "punct" and t.text in pairs:
            stack.append(pairs[t.text])
        elif t.kind == "punct" and stack and t.text == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return i


def _cfg_is_test_only(tokens):
    """True for `test` and `all(.., test, ..)`: the item exists only in test builds."""
    if not tokens:
        return False
    head = tokens[0]
    if head.kind == "id" and head.text == "test" and len(tokens) == 1:
        return True
    if head.kind == "id" and head.text == "all" and len(tokens) > 1 and tokens[1].text == "(":
        inner = tokens[2 : _matching(tokens, 1) - 1]
        parts, depth, current = [], 0, []
        for t in inner:
            if t.kind == "punct" and t.text in "([{":
                depth += 1
            elif t.kind == "punct" and t.text in ")]}":
                depth -= 1
            if t.kind == "punct" and t.text == "," and depth == 0:
                parts.append(current)
                current = []
            else:
                current.append(t)
        parts.append(current)
        return any(_cfg_is_test_only(p) for p in parts)
    return False


def _attribute_is_test_only(body):
    """`body` is the tokens between `#[` and `]`."""
    return (
        len(body) > 2
        and body[0].kind == "id"
        and body[0].text == "cfg"
        and body[1].text == "("
        and _cfg_is_test_only(body[2 : _matching(body, 1) - 1])
    )


def _lead(tokens, i):
    """The tokens of an item before its body or value: up to the first `{`, `;` or `=`."""
    k = i
    while k < len(tokens) and tokens[k].text not in ("{", ";", "="):
        k += 1
    return tokens[i:k]


def _item_end(tokens, i):
    """Index just past the item, statement, field or match arm that starts at `i`."""
    keywords = {t.text for t in _lead(tokens, i) if t.kind == "id"}
    braced = (i < len(tokens) and tokens[i].text == "{") or bool(keywords & BRACE_ITEMS)
    # Generic arguments are not bracketed tokens, so a comma ends only fields and match arms.
    comma_ends = not braced and not keywords & SEMI_ITEMS
    depth = 0
    k = i
    while k < len(tokens):
        t = tokens[k]
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            if depth == 0:
                return k  # the enclosing block closes after a last field or arm
            depth -= 1
            if depth == 0 and t.text == "}" and braced:
                return k + 1
        elif depth == 0 and t.kind == "punct" and (t.text == ";" or (t.text == "," and comma_ends)):
            return k + 1
        k += 1
    return k


def _parse_use_tree(tokens, i, prefix, leaves):
    """Parses one use tree at `i`; appends (segments, bound name or None, line) per leaf."""
    t = tokens[i] if i < len(tokens) else None
    if t is None:
        return i
    if t.text == "::" and not prefix:  # `use ::name`: an external crate
        return _skip_use_tree(tokens, i)
    if t.text == "{":
        i += 1
        while i < len(tokens) and tokens[i].text != "}":
            i = _parse_use_tree(tokens, i, prefix, leaves)
            if i < len(tokens) and tokens[i].text == ",":
                i += 1
            elif i < len(tokens) and tokens[i].text != "}":
                return _skip_use_tree(tokens, i)
        return i + 1
    if t.text == "*":
        leaves.append((list(prefix), None, t.line))
        return i + 1
    if t.kind != "id":
        return _skip_use_tree(tokens, i)
    segments = list(prefix)
    last = t
    while True:
        segments.append(last.text)
        i += 1
        if i + 1 < len(tokens) and tokens[i].text == "::" and tokens[i + 1].kind == "id":
            last = tokens[i + 1]
            i += 1
            continue
        break
    if i + 1 < len(tokens) and tokens[i].text == "::" and tokens[i + 1].text in ("{", "*"):
        return _parse_use_tree(tokens, i + 1, segments, leaves)
    if segments[-1] == "self":
        segments.pop()
    bound = segments[-1] if segments else None
    if i + 1 < len(tokens) and tokens[i].text == "as":
        bound = tokens[i + 1].text if tokens[i + 1].text != "_" else None
        i += 2
    leaves.append((segments, bound, last.line))
    return i


def _skip_use_tree(tokens, i):
    while i < len(tokens) and tokens[i].text not in (",", "}", ";"):
        i = _matching(tokens, i) if tokens[i].text in ("{", "(", "[") else i + 1
    return i


def scan_file(src, module):
    """The references, bindings and module declarations of one file of module `module`."""
    tokens = tokenize(src)
    scan = FileScan()
    scopes = [module]  # innermost inline module last
    braces = []  # per open `{`: True when it opens an inline module
    pending_test_attr = False
    i = 0
    while i < len(tokens):
        t = tokens[i]
        scope = scopes[-1]
        text = t.text if t.kind in ("id", "punct") else None
        nxt = tokens[i + 1].text if i + 1 < len(tokens) else None
        if text == "#" and nxt in ("[", "!"):
            inner = nxt == "!"
            open_at = i + 2 if inner else i + 1
            if open_at >= len(tokens) or tokens[open_at].text != "[":
                i += 1
                continue
            end = _matching(tokens, open_at)
            test_only = _attribute_is_test_only(tokens[open_at + 1 : end - 1])
            i = end
            if inner and test_only:
                if len(scopes) == 1 and not braces:
                    scan.test_only = True
                    return scan
                # An inline module that is test-only inside: skip to its closing brace.
                depth = 1
                while i < len(tokens) and depth:
                    depth += tokens[i].text == "{"
                    depth -= tokens[i].text == "}"
                    i += 1
                if braces.pop():
                    scopes.pop()
            elif test_only:
                pending_test_attr = True
            continue
        if pending_test_attr:
            pending_test_attr = False
            lead = _lead(tokens, i)
            for a, b in zip(lead, lead[1:]):
                if a.kind == "id" and a.text == "mod" and b.kind == "id":
                    scan.test_modules.add(scope + (b.text,))
            i = _item_end(tokens, i)
            continue
        if text == "use":
            leaves = []
            i = _parse_use_tree(tokens, i + 1, [], leaves)
            while i < len(tokens) and tokens[i].text != ";":
                i += 1
            for segments, bound, line in leaves:
                if segments:
                    scan.refs.append(Ref(scope, segments, line))
                if bound:
                    scan.bindings[(scope, bound)] = segments
            continue
        if text == "mod" and i + 2 < len(tokens) and tokens[i + 1].kind == "id":
            if tokens[i + 2].text == "{":
                name = tokens[i + 1].text
                scan.inline_modules.add(scope + (name,))
                scopes.append(scope + (name,))
                braces.append(True)
                i += 3
                continue
            i += 2
            continue
        if text == "pub" and nxt == "(":  # pub(crate), pub(in crate::a): not a dependency
            i = _matching(tokens, i + 1)
            continue
        if text == "$" and nxt == "crate":
            i += 2
            while i + 1 < len(tokens) and tokens[i].text == "::" and tokens[i + 1].kind == "id":
                i += 2
            continue
        if text == "{":
            braces.append(False)
        elif text == "}":
            if braces and braces.pop():
                scopes.pop()
        elif (
            t.kind == "id"
            and nxt == "::"
            and i + 2 < len(tokens)
            and tokens[i + 2].kind == "id"
            and (i == 0 or tokens[i - 1].text != "::")
        ):
            segments = [t.text]
            j = i + 1
            while j + 1 < len(tokens) and tokens[j].text == "::" and tokens[j + 1].kind == "id":
                segments.append(tokens[j + 1].text)
                j += 2
            scan.refs.append(Ref(scope, segments, t.line))
            i = j
            continue
        i += 1
    return scan


# ---------------------------------------------------------------------------------------------
# Crate: the module tree from the files, the references resolved to edges.


def module_of(relative):
    """The module path of a file, from its path relative to src/."""
    parts = list(relative.with_suffix("").parts)
    if parts in (["lib"], ["main"]):
        return ROOT
    if parts[-1] == "mod":
        parts.pop()
    return ROOT + tuple(parts)


@dataclass
class Crate:
    modules: set  # every non-test module with a file
    # (from, to) -> the first (file, line) that creates the edge
    edges: dict


def _is_within(path, prefix):
    return path[: len(prefix)] == prefix


def load_crate(src_dir):
    src_dir = Path(src_dir)
    files = {}
    has_lib = (src_dir / "lib.rs").is_file()
    for path in sorted(src_dir.rglob("*.rs")):
        relative = path.relative_to(src_dir)
        # src/bin/*.rs, and src/main.rs beside src/lib.rs, are binary crates of their own that
        # reach the library by its name, never by `crate::`.
        if relative.parts[0] == "bin" or (relative == Path("main.rs") and has_lib):
            continue
        files[path] = module_of(relative)
    scans = {path: scan_file(path.read_text(encoding="utf-8"), m) for path, m in files.items()}
    test_modules = set()
    for scan in scans.values():
        test_modules |= scan.test_modules
    for path, scan in scans.items():
        if scan.test_only:
            test_modules.add(files[path])

    def is_test(module):
        return any(_is_within(module, t) for t in test_modules)

    modules = {m for m in files.values() if not is_test(m)}
    inline = set()
    bindings = {}
    for path, scan in scans.items():
        if not is_test(files[path]):
            inline |= {m for m in scan.inline_modules if not is_test(m)}
            bindings.update(scan.bindings)
    resolver = Resolver(modules, inline, bindings)
    edges = {}
    for path, scan in scans.items():
        source = files[path]
        if is_test(source):
            continue
        shown = str(path)
        for ref in scan.refs:
            target = resolver.module_of(ref.scope, ref.segments)
            if target is None or target == source:
                continue
            where = (shown, ref.line)
            if (source, target) not in edges or where < edges[(source, target)]:
                edges[(source, target)] = where
    return Crate(modules, edges)


class Resolver:
    def __init__(self, modules, inline, bindings):
        self.modules = modules  # the modules with files: the graph's nodes
        self.known = modules | inline
        self.bindings = bindings  # (scope, name) -> segments, from `use` declarations

    def absolute(self, scope, segments, depth=0):
        """The path from `crate` that `segments`, written in `scope`, names; None if outside."""
        head, rest = segments[0], tuple(segments[1:])
        if head == "crate":
            return ROOT + rest
        if head == "self":
            return scope + rest
        if head == "super":
            base = scope
            while segments and segments[0] == "super":
                if len(base) == 1:
                    return None
                base, segments = base[:-1], segments[1:]
            return base + tuple(segments)
        bound = self.bindings.get((scope, head))
        # A binding to a name of its own (`use html::{self}`) is the child lookup below.
        if bound is not None and bound[0] != head and depth < 8:
            start = self.absolute(scope, bound, depth + 1)
            return None if start is None else start + rest
        if scope + (head,) in self.known:
            return scope + (head,) + rest
        return None

    def module_of(self, scope, segments):
        """The deepest module with a file that is a prefix of the path; None outside the crate."""
        path = self.absolute(scope, segments)
        if path is None:
            return None
        for n in range(len(path), 0, -1):
            if path[:n] in self.modules:
                return path[:n]
        return ROOT


# ---------------------------------------------------------------------------------------------
# Graphs: cycles as strongly connected components (Tarjan), a shortest cycle through each.


@dataclass
class Graph:
    name: str
    nodes: set
    edges: dict  # (from, to) -> (file, line)

    def successors(self):
        out = {n: [] for n in self.nodes}
        for a, b in sorted(self.edges):
            out[a].append(b)
        return out


def top_level(crate):
    """Each module counted as its top-level module; edges inside one are dropped."""
    edges = {}
    for (a, b), where in crate.edges.items():
        a, b = a[:2], b[:2]
        if a != b and ((a, b) not in edges or where < edges[(a, b)]):
            edges[(a, b)] = where
    return Graph("top-level", {m[:2] for m in crate.modules}, edges)


def strongly_connected(graph):
    """Tarjan's algorithm, without recursion; components of more than one node, sorted."""
    successors = graph.successors()
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for root in sorted(graph.nodes):
        if root in index:
            continue
        work = [(root, iter(successors[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(successors[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(found)


def shortest_cycle(graph, component):
    """A shortest cycle through the component's first module, by breadth-first search."""
    members = set(component)
    start = component[0]
    successors = graph.successors()
    previous = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in successors[node]:
            if child not in members:
                continue
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return path[::-1] + [start]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return [start]


def name(module):
    return "::".join(module)


def relation(a, b):
    if _is_within(a, b):
        return "  (child uses its parent)"
    if _is_within(b, a):
        return "  (parent uses its child)"
    return ""


def report(graph, components, out):
    print(f"{graph.name} graph: {len(components)} cycle(s)", file=out)
    for number, component in enumerate(components, 1):
        members = ", ".join(map(name, component))
        print(f"cycle {number}, {len(component)} modules: {members}", file=out)
        print(f"  shortest: {' -> '.join(map(name, shortest_cycle(graph, component)))}", file=out)
        members = set(component)
        inside = sorted((a, b) for a, b in graph.edges if a in members and b in members)
        width = max(len(name(a)) + len(name(b)) + 4 for a, b in inside)
        for a, b in inside:
            file, line = graph.edges[(a, b)]
            arrow = f"{name(a)} -> {name(b)}"
            print(f"  {arrow:<{width}}  {file}:{line}{relation(a, b)}", file=out)
        if len(component) == 2 and relation(*component):
            print(
                "  a parent and its child that use each other's items: move what both need "
                "into one of them, or into a module of its own",
                file=out,
            )


def dot(graph, components, out):
    cyclic = {m: n for n, c in enumerate(components) for m in c}
    print(f'digraph "{graph.name}" {{', file=out)
    print("  rankdir=LR;", file=out)
    print('  node [shape=box, fontname="monospace"];', file=out)
    for node in sorted(graph.nodes):
        colour = ', color=red' if node in cyclic else ""
        print(f'  "{name(node)}" [label="{name(node)}"{colour}];', file=out)
    for (a, b), (file, line) in sorted(graph.edges.items()):
        same = a in cyclic and cyclic.get(a) == cyclic.get(b)
        colour = ", color=red" if same else ""
        print(f'  "{name(a)}" -> "{name(b)}" [tooltip="{file}:{line}"{colour}];', file=out)
    print("}", file=out)


# ---------------------------------------------------------------------------------------------
# Command line.


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{message}: see {self.prog} --help")


def parse_args(argv):
    parser = Parser(
        prog="check.py",
        description="Fails when a Rust crate's module graph has an import cycle.",
    )
    parser.add_argument(
        "src",
        nargs="?",
        help="the crate's src directory (default: arum-core/src in this repository)",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--top-level-only", action="store_true", help="check top-level modules only")
    which.add_argument("--modules-only", action="store_true", help="check every module only")
    parser.add_argument(
        "--dot",
        action="store_true",
        help="print the graph in Graphviz dot (the top-level one with --top-level-only); "
        "cycles then go to standard error",
    )
    args = parser.parse_args(argv)
    if args.src is None:
        repository = Path(__file__).resolve().parents[2]
        args.src = os.path.relpath(repository / "arum-core" / "src")
    src = Path(args.src)
    if not src.is_dir():
        raise UsageError(
            f"{src} is not a directory: give the crate's src directory, e.g. arum-core/src"
        )
    if not (src / "lib.rs").is_file() and not (src / "main.rs").is_file():
        raise UsageError(f"{src} has no lib.rs or main.rs: give the crate's src directory")
    return args


def main(argv=None, out=sys.stdout, err=sys.stderr):
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        crate = load_crate(args.src)
    except UsageError as e:
        print(f"check.py: {e}", file=err)
        return 2
    except (OSError, UnicodeDecodeError) as e:
        print(f"check.py: cannot read {args.src}: {e}", file=err)
        return 2
    graphs = []
    if not args.top_level_only:
        graphs.append(Graph("module", set(crate.modules), crate.edges))
    if not args.modules_only:
        graphs.append(top_level(crate))
    failed = False
    for graph in graphs:
        components = strongly_connected(graph)
        if args.dot and graph is graphs[0]:
            dot(graph, components, out)
        if components:
            failed = True
            report(graph, components, err)
        else:
            size = f"{len(graph.nodes)} modules, {len(graph.edges)} edges"
            summary = f"{args.src}: {graph.name} graph, {size}: no cycle"
            print(summary, file=err if args.dot else out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
