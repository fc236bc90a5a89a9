#!/usr/bin/env python3
"""ARCHITECTURE.md against the code: the layers of a crate and the paths the map names.

Layers. Every section titled "## Layers inside `CRATE`" is read the same way: its numbered
list gives the layers from the top (1) down, each item starting with the crate's top-level
modules in backticks before an em dash (`1. `startup`, `openapi` — what they are`), and one
sentence of the section states "In `CRATE`, N imports run back up". An import runs back up when
a file of a lower layer (a larger number) names an item of a higher one; imports are read as
`.ci/circles.py` reads them. Fails when a top-level module of the crate is in no layer (or in
two, or a listed one does not exist), or when the count differs from N (the imports are
printed).

Paths. Every path ARCHITECTURE.md names in backticks (`carapi-service/src/http/`, with
`{a,b}` alternatives) and every path a comment of the root Cargo.toml names must exist,
from the repository's root or, for a path written inside a crate (`http/webhooks.rs`), under
some crate's `src/`.

Usage: .ci/layers.py (from anywhere; reads the repository it sits in). Exits 1 on a mismatch.
"""
import importlib.util
import itertools
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_circles():
    spec = importlib.util.spec_from_file_location(
        "circles", os.path.join(ROOT, ".ci", "circles.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def layer_sections(text):
    """[(crate, [[module, ...] per layer], stated count or None)] of the document."""
    sections = []
    parts = re.split(r"^## ", text, flags=re.M)
    for part in parts:
        m = re.match(r"Layers inside `([\w-]+)`", part)
        if not m:
            continue
        crate = m.group(1)
        layers = []
        for item in re.findall(r"^\d+\. (.*?) — ", part, flags=re.M):
            layers.append(re.findall(r"`([\w]+)`", item))
        stated = re.search(
            rf"In `{re.escape(crate)}`, (\d+) imports? runs? back up", part)
        sections.append((crate, layers, int(stated.group(1)) if stated else None))
    return sections


def check_layers(crate, layers, stated, circles):
    problems = []
    mods, graph = circles.file_graph(os.path.join(ROOT, crate))
    top_level = {m[0] for m in mods if m}
    layer_of = {}
    for n, names in enumerate(layers, 1):
        for name in names:
            if name in layer_of:
                problems.append(f"{crate}: `{name}` is in layers {layer_of[name]} and {n}")
            elif name not in top_level:
                problems.append(f"{crate}: layer {n} lists `{name}`, which is no top-level module")
            layer_of.setdefault(name, n)
    for name in sorted(top_level - set(layer_of)):
        problems.append(f"{crate}: the top-level module `{name}` is in no layer")
    back_up = []
    for source, targets in graph.items():
        for target in targets:
            if source and target and source[0] in layer_of and target[0] in layer_of \
                    and layer_of[source[0]] > layer_of[target[0]]:
                back_up.append(
                    f"    {os.path.relpath(mods[source], os.path.join(ROOT, crate))} "
                    f"(layer {layer_of[source[0]]}) -> "
                    f"{os.path.relpath(mods[target], os.path.join(ROOT, crate))} "
                    f"(layer {layer_of[target[0]]})")
    if stated is None:
        problems.append(f"{crate}: the section states no count (\"In `{crate}`, N imports run back up\")")
    elif len(back_up) != stated:
        problems.append(f"{crate}: ARCHITECTURE.md says {stated} imports run back up, "
                        f"the code has {len(back_up)}:\n" + "\n".join(sorted(back_up)))
    return problems, len(back_up)


def expand(path):
    """`a/{b,c}/d` -> [`a/b/d`, `a/c/d`]."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return list(itertools.chain.from_iterable(
        expand(path[:m.start()] + alt + path[m.end():]) for alt in m.group(1).split(",")))


def exists(path):
    if os.path.exists(os.path.join(ROOT, path)):
        return True
    crates = [d for d in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, d, "src"))]
    return any(os.path.exists(os.path.join(ROOT, c, "src", path)) for c in crates)


def named_paths(architecture, cargo_toml):
    """The file paths the two documents name, with where."""
    found = []
    for n, line in enumerate(architecture.splitlines(), 1):
        for token in re.findall(r"`([^`\s]+)`", line):
            if "/" in token and not token.startswith("/") and "://" not in token \
                    and re.fullmatch(r"[\w.{},/*-]+", token) and "*" not in token:
                found.append(("ARCHITECTURE.md", n, token))
    for n, line in enumerate(cargo_toml.splitlines(), 1):
        if line.lstrip().startswith("#"):
            for token in re.findall(r"[\w.-]+(?:/[\w.{},-]+)+", line):
                if "." in token.rsplit("/", 1)[-1] or token.endswith("/"):
                    found.append(("Cargo.toml", n, token.rstrip(".,;:)")))
    return found


def main():
    circles = load_circles()
    with open(os.path.join(ROOT, "ARCHITECTURE.md"), encoding="utf-8") as f:
        architecture = f.read()
    with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
        cargo_toml = f.read()
    problems = []
    for crate, layers, stated in layer_sections(architecture):
        found, count = check_layers(crate, layers, stated, circles)
        problems += found
        if not found:
            print(f"{crate}: {len(layers)} layers, {count} imports back up, as documented")
    for where, line, path in named_paths(architecture, cargo_toml):
        missing = [p for p in expand(path) if not exists(p)]
        if missing:
            problems.append(f"{where}:{line}: `{path}` names what does not exist ({', '.join(missing)})")
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print("ARCHITECTURE.md: layers and paths as the code has them")


if __name__ == "__main__":
    main()
