#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a circle.

Usage: check-cycles.py SRC_DIR [SRC_DIR ...]   (e.g. pmix/src)

Every `.rs` file is a module (`a/mod.rs` and `a.rs` are module `a`). A reference
`crate::x::y::...` or `super::...::z` in module M names the deepest module it
reaches; between sibling modules (children of one parent, at any depth) that gives
an edge from the sibling holding M to the sibling holding the target. A parent and
its own children may name each other (`use super::Core`, `mod fence`) without
making a circle: only siblings are compared. Prints each level's edges and exits 1
naming the circle if one exists.
"""

import os
import re
import sys
from collections import defaultdict

REF = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def modules(root):
    mods = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            parts = os.path.relpath(path, root)[:-3].split(os.sep)
            if parts[-1] == "mod":
                parts = parts[:-1]
            if parts in (["lib"], ["main"]):
                parts = []
            mods[tuple(parts)] = path
    return mods


def strip_comments(src):
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in src.splitlines())


def resolve(mods, here, kind, names):
    base = [] if kind == "crate" else list(here[:-1])
    names = list(names)
    while names and names[0] == "super":
        names.pop(0)
        base = base[:-1]
    target = tuple(base)
    for n in names:
        if target + (n,) in mods:
            target = target + (n,)
        else:
            break
    return target


def check(root):
    mods = modules(root)
    edges = defaultdict(set)  # parent -> {(child_a, child_b)}
    for m, path in mods.items():
        src = strip_comments(open(path, encoding="utf-8").read())
        for kind, rest in REF.findall(src):
            t = resolve(mods, m, kind, [p for p in rest.split("::") if p])
            k = 0
            while k < len(m) and k < len(t) and m[k] == t[k]:
                k += 1
            if k == len(m) or k == len(t):
                continue  # an ancestor, a descendant or itself
            edges[m[:k]].add((m[k], t[k]))
    circles = []
    for parent, es in sorted(edges.items()):
        graph = defaultdict(set)
        for a, b in es:
            graph[a].add(b)
        name = "::".join(parent) or "crate"
        print(f"{root} {name}: " + ", ".join(f"{a}->{b}" for a, b in sorted(es)))
        state = {}

        def visit(n, stack):
            state[n] = 1
            stack.append(n)
            for nxt in sorted(graph[n]):
                if state.get(nxt) == 1:
                    circles.append(f"{root} {name}: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
                elif nxt not in state:
                    visit(nxt, stack)
            stack.pop()
            state[n] = 2

        for n in sorted(graph):
            if n not in state:
                visit(n, [])
    return circles


def main():
    roots = sys.argv[1:]
    missing = [r for r in roots if not os.path.isdir(r)]
    if not roots or missing:
        print("usage: check-cycles.py SRC_DIR [SRC_DIR ...]" + "".join(
            f"\n{r}: not a directory" for r in missing), file=sys.stderr)
        return 2
    circles = [c for root in roots for c in check(root)]
    for c in circles:
        print(f"import circle: {c}")
    if circles:
        return 1
    print(f"check-cycles: no import circle in {' '.join(roots)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
