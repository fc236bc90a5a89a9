#!/usr/bin/env python3
"""Import circles between the files of a crate's `src/`, and between its folders.

A file depends on another when it names an item the other defines, by path (`crate::a::b`,
`super::x`, `self::x`, a child's name) in a `use` line or in code; a name re-exported with
`pub use` resolves to the file that defines it, and the re-export itself is not a use. Module
declarations (`mod x;`) are ownership, not use, and are not counted. Prints every strongly
connected component of more than one file, and of more than one folder: inside every folder,
its files and subfolders are grouped (a subfolder counts as one node with all it holds), so
`a.rs` using `b/x.rs` while `b/y.rs` uses `a.rs` is a circle even though no two files form one.
Exits 1 when there is any. Usage: .ci/circles.py CRATE_DIR [CRATE_DIR...]
"""
import os
import re
import sys


def modules(src):
    mods = {}
    for root, _, files in os.walk(src):
        for a in files:
            if not a.endswith(".rs"):
                continue
            path = os.path.join(root, a)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel[-1] == "mod":
                rel = rel[:-1]
            if rel in (["lib"], ["main"]):
                rel = []
            mods.setdefault(tuple(rel), path)
    return mods


def without_comments(text):
    # A file's unit tests (`#[cfg(test)] module tests`, at its end) are not part of its imports.
    text = re.split(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)[0]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(l.split("//")[0] for l in text.splitlines())


def expand_use(body):
    """`a::{b, c::{d}}` -> [a::b, a::c::d] (enough for the paths we care about)."""
    body = body.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", body, flags=re.S)
    if not m:
        return [body.split(" as ")[0].strip()]
    prefix, inner = m.group(1), m.group(2)
    parts, level, current = [], 0, ""
    for ch in inner:
        if ch == "{":
            level += 1
        elif ch == "}":
            level -= 1
        if ch == "," and level == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    result = []
    for p in parts:
        if p.strip():
            result += expand_use(prefix + p.strip())
    return result


def paths(text):
    """(paths this file uses, paths it re-exports with `pub use`)."""
    text = without_comments(text)
    used, reexported = [], []
    for m in re.finditer(r"(\bpub(?:\([a-z:]+\))?\s+)?\buse\s+([^;]+);", text):
        items = expand_use(re.sub(r"\s+", "", m.group(2)).replace(",", ", "))
        (reexported if m.group(1) else used).extend(items)
    rest = re.sub(r"\bpub(?:\([a-z:]+\))?\s+use\s+[^;]+;", "", text)
    rest = re.sub(r"\buse\s+[^;]+;", "", rest)
    used += re.findall(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", rest)
    return used, reexported


def defined(text):
    return set(re.findall(
        r"\b(?:struct|enum|fn|trait|type|const|static|union|macro_rules!)\s+([A-Za-z_][A-Za-z0-9_]*)",
        without_comments(text)))


def resolve(module, path, mods, reexports=None, depth=0):
    """The module that defines what `caminho` names, seen from `mod` (re-exports followed)."""
    parts = [p for p in path.split("::") if p]
    if not parts:
        return None
    if parts[0] == "crate":
        base, rest = [], parts[1:]
    elif parts[0] in ("super", "self"):
        base = list(module)
        rest = parts
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    else:
        # A bare path is relative to this module (a child, `use x::...` after `module x;`).
        base, rest = list(module), parts
        if tuple(base + rest[:1]) not in mods:
            return None
    best, consumed = None, 0
    for i in range(len(rest) + 1):
        candidate = tuple(base + rest[:i])
        if candidate in mods:
            best, consumed = candidate, i
    if best is None or reexports is None or depth > 10:
        return best
    if consumed < len(rest):
        name = rest[consumed]
        exported, defs = reexports[best]
        if name not in defs:
            for target in exported:
                last = target.split("::")[-1]
                if last == name or last == "*":
                    r = resolve(best, target if last == name else target[:-1] + name,
                                 mods, reexports, depth + 1)
                    if r is not None and (last == name or name in reexports[r][1]):
                        return r
    return best


def components(graph):
    index, low, stack, on_stack, result = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            result.append(comp)

    for v in graph:
        if v not in index:
            visit(v)
    return result


def file_graph(crate):
    """(module path -> file, module path -> the modules it imports) of `crate`'s `src/`; a
    module path is a tuple (`("store", "sqlite")`), the crate root `()`."""
    src = os.path.join(crate, "src")
    mods = modules(src)
    graph = {m: set() for m in mods}
    texts = {}
    for m, path in mods.items():
        with open(path, encoding="utf-8") as f:
            texts[m] = f.read()
    reexports = {m: (paths(t)[1], defined(t)) for m, t in texts.items()}
    for m, text in texts.items():
        for c in paths(text)[0]:
            target = resolve(m, c, mods, reexports)
            if target is not None and target != m and target != ():
                graph[m].add(target)
    return mods, graph


def main():
    total = 0
    for crate in sys.argv[1:]:
        mods, graph = file_graph(crate)
        for comp in components(graph):
            if len(comp) > 1:
                total += 1
                names = sorted(os.path.relpath(mods[m], crate) for m in comp)
                print(f"{crate}: circle of {len(comp)} files: {' '.join(names)}")
                if os.environ.get("CIRCLES_EDGES"):
                    for a in sorted(comp):
                        for b in sorted(graph[a] & set(comp)):
                            print(f"    {os.path.relpath(mods[a], crate)} -> {os.path.relpath(mods[b], crate)}")
        total += folder_circles(crate, mods, graph)
    if total:
        sys.exit(1)
    print("no import circles")


def folder_circles(crate, mods, graph):
    """Circles between the children (files and subfolders) of every folder of the crate; a
    circle of files alone is already reported by the file check."""
    total = 0
    folders = {m[:i] for m in mods for i in range(len(m))}
    for parent in sorted(folders):
        children = [m for m in mods if len(m) > len(parent) and m[: len(parent)] == parent]
        # Each child is grouped under its first step below `parent`: a subfolder is one node with
        # everything it holds (its module.rs included).
        group = {m: m[: len(parent) + 1] for m in children}
        edges = {n: set() for n in group.values()}
        for a in children:
            for b in graph[a]:
                if b in group and group[a] != group[b]:
                    edges[group[a]].add(group[b])
        for comp in components(edges):
            if len(comp) < 2 or not any(n in folders for n in comp):
                continue
            total += 1
            names = sorted("/".join(n) + ("/" if n in folders else ".rs") for n in comp)
            where = "/".join(parent) or "src"
            print(f"{crate}: circle of {len(comp)} folders and files in {where}: {' '.join(names)}")
            if os.environ.get("CIRCLES_EDGES"):
                for a in children:
                    for b in sorted(graph[a]):
                        if b in group and group[a] != group[b] and group[a] in comp and group[b] in comp:
                            print(f"    {os.path.relpath(mods[a], crate)} -> {os.path.relpath(mods[b], crate)}")
    return total


if __name__ == "__main__":
    main()
