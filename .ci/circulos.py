#!/usr/bin/env python3
"""Import circles between the files of a crate's `src/`, and between its folders.

A file depends on another when it names an item the other defines, by path (`crate::a::b`,
`super::x`, `self::x`, a child's name) in a `use` line or in code; a name re-exported with
`pub use` resolves to the file that defines it, and the re-export itself is not a use. Module
declarations (`mod x;`) are ownership, not use, and are not counted. Prints every strongly
connected component of more than one file, and of more than one folder: inside every folder,
its files and subfolders are grouped (a subfolder counts as one node with all it holds), so
`a.rs` using `b/x.rs` while `b/y.rs` uses `a.rs` is a circle even though no two files form one.
Exits 1 when there is any. Usage: .ci/circulos.py CRATE_DIR [CRATE_DIR...]
"""
import os
import re
import sys


def modulos(src):
    mods = {}
    for raiz, _, arquivos in os.walk(src):
        for a in arquivos:
            if not a.endswith(".rs"):
                continue
            caminho = os.path.join(raiz, a)
            rel = os.path.relpath(caminho, src)[:-3].split(os.sep)
            if rel[-1] == "mod":
                rel = rel[:-1]
            if rel in (["lib"], ["main"]):
                rel = []
            mods.setdefault(tuple(rel), caminho)
    return mods


def sem_comentarios(texto):
    # A file's unit tests (`#[cfg(test)] mod tests`, at its end) are not part of its imports.
    texto = re.split(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", texto)[0]
    texto = re.sub(r"/\*.*?\*/", "", texto, flags=re.S)
    return "\n".join(l.split("//")[0] for l in texto.splitlines())


def expandir_use(corpo):
    """`a::{b, c::{d}}` -> [a::b, a::c::d] (enough for the paths we care about)."""
    corpo = corpo.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", corpo, flags=re.S)
    if not m:
        return [corpo.split(" as ")[0].strip()]
    prefixo, dentro = m.group(1), m.group(2)
    partes, nivel, atual = [], 0, ""
    for ch in dentro:
        if ch == "{":
            nivel += 1
        elif ch == "}":
            nivel -= 1
        if ch == "," and nivel == 0:
            partes.append(atual)
            atual = ""
        else:
            atual += ch
    partes.append(atual)
    res = []
    for p in partes:
        if p.strip():
            res += expandir_use(prefixo + p.strip())
    return res


def caminhos(texto):
    """(paths this file uses, paths it re-exports with `pub use`)."""
    texto = sem_comentarios(texto)
    usados, reexportados = [], []
    for m in re.finditer(r"(\bpub(?:\([a-z:]+\))?\s+)?\buse\s+([^;]+);", texto):
        lista = expandir_use(re.sub(r"\s+", "", m.group(2)).replace(",", ", "))
        (reexportados if m.group(1) else usados).extend(lista)
    resto = re.sub(r"\bpub(?:\([a-z:]+\))?\s+use\s+[^;]+;", "", texto)
    resto = re.sub(r"\buse\s+[^;]+;", "", resto)
    usados += re.findall(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", resto)
    return usados, reexportados


def definidos(texto):
    return set(re.findall(
        r"\b(?:struct|enum|fn|trait|type|const|static|union|macro_rules!)\s+([A-Za-z_][A-Za-z0-9_]*)",
        sem_comentarios(texto)))


def resolver(mod, caminho, mods, reexp=None, profundidade=0):
    """The module that defines what `caminho` names, seen from `mod` (re-exports followed)."""
    partes = [p for p in caminho.split("::") if p]
    if not partes:
        return None
    if partes[0] == "crate":
        base, resto = [], partes[1:]
    elif partes[0] in ("super", "self"):
        base = list(mod)
        resto = partes
        while resto and resto[0] in ("super", "self"):
            if resto[0] == "super":
                base = base[:-1]
            resto = resto[1:]
    else:
        # A bare path is relative to this module (a child, `use x::...` after `mod x;`).
        base, resto = list(mod), partes
        if tuple(base + resto[:1]) not in mods:
            return None
    melhor, usado = None, 0
    for i in range(len(resto) + 1):
        cand = tuple(base + resto[:i])
        if cand in mods:
            melhor, usado = cand, i
    if melhor is None or reexp is None or profundidade > 10:
        return melhor
    if usado < len(resto):
        nome = resto[usado]
        exp, defs = reexp[melhor]
        if nome not in defs:
            for alvo in exp:
                ultimo = alvo.split("::")[-1]
                if ultimo == nome or ultimo == "*":
                    r = resolver(melhor, alvo if ultimo == nome else alvo[:-1] + nome,
                                 mods, reexp, profundidade + 1)
                    if r is not None and (ultimo == nome or nome in reexp[r][1]):
                        return r
    return melhor


def componentes(grafo):
    indice, baixo, pilha, na_pilha, res = {}, {}, [], set(), []
    contador = [0]
    sys.setrecursionlimit(10000)

    def visitar(v):
        indice[v] = baixo[v] = contador[0]
        contador[0] += 1
        pilha.append(v)
        na_pilha.add(v)
        for w in grafo[v]:
            if w not in indice:
                visitar(w)
                baixo[v] = min(baixo[v], baixo[w])
            elif w in na_pilha:
                baixo[v] = min(baixo[v], indice[w])
        if baixo[v] == indice[v]:
            comp = []
            while True:
                w = pilha.pop()
                na_pilha.discard(w)
                comp.append(w)
                if w == v:
                    break
            res.append(comp)

    for v in grafo:
        if v not in indice:
            visitar(v)
    return res


def main():
    total = 0
    for crate in sys.argv[1:]:
        src = os.path.join(crate, "src")
        mods = modulos(src)
        grafo = {m: set() for m in mods}
        textos = {}
        for m, caminho in mods.items():
            with open(caminho, encoding="utf-8") as f:
                textos[m] = f.read()
        reexp = {m: (caminhos(t)[1], definidos(t)) for m, t in textos.items()}
        for m, texto in textos.items():
            for c in caminhos(texto)[0]:
                alvo = resolver(m, c, mods, reexp)
                if alvo is not None and alvo != m and alvo != ():
                    grafo[m].add(alvo)
        for comp in componentes(grafo):
            if len(comp) > 1:
                total += 1
                nomes = sorted(os.path.relpath(mods[m], crate) for m in comp)
                print(f"{crate}: circle of {len(comp)} files: {' '.join(nomes)}")
                if os.environ.get("CIRCULOS_ARESTAS"):
                    for a in sorted(comp):
                        for b in sorted(grafo[a] & set(comp)):
                            print(f"    {os.path.relpath(mods[a], crate)} -> {os.path.relpath(mods[b], crate)}")
        total += circulos_de_pastas(crate, mods, grafo)
    if total:
        sys.exit(1)
    print("no import circles")


def circulos_de_pastas(crate, mods, grafo):
    """Circles between the children (files and subfolders) of every folder of the crate; a
    circle of files alone is already reported by the file check."""
    total = 0
    pastas = {m[:i] for m in mods for i in range(len(m))}
    for pai in sorted(pastas):
        filhos = [m for m in mods if len(m) > len(pai) and m[: len(pai)] == pai]
        # Each child is grouped under its first step below `pai`: a subfolder is one node with
        # everything it holds (its mod.rs included).
        grupo = {m: m[: len(pai) + 1] for m in filhos}
        arestas = {n: set() for n in grupo.values()}
        for a in filhos:
            for b in grafo[a]:
                if b in grupo and grupo[a] != grupo[b]:
                    arestas[grupo[a]].add(grupo[b])
        for comp in componentes(arestas):
            if len(comp) < 2 or not any(n in pastas for n in comp):
                continue
            total += 1
            nomes = sorted("/".join(n) + ("/" if n in pastas else ".rs") for n in comp)
            onde = "/".join(pai) or "src"
            print(f"{crate}: circle of {len(comp)} folders and files in {onde}: {' '.join(nomes)}")
            if os.environ.get("CIRCULOS_ARESTAS"):
                for a in filhos:
                    for b in sorted(grafo[a]):
                        if b in grupo and grupo[a] != grupo[b] and grupo[a] in comp and grupo[b] in comp:
                            print(f"    {os.path.relpath(mods[a], crate)} -> {os.path.relpath(mods[b], crate)}")
    return total


if __name__ == "__main__":
    main()
