#!/usr/bin/env python3
"""Self-test of .ci/names.py: in a crate made for the test, a Portuguese machinery name planted
as each kind of declaration (local, parameter, private field, variant, closure parameter,
match binding, item, test file name) and in a script is reported, and what the rule allows
(contract words, `#[test]` function names, string literals, comments) is not. Exits 1 when the
check misses a planted name or reports an allowed one.
Usage: .ci/names_test.py
"""
import importlib.util
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

PLANTED_LIB = """\
//! A crate with one Portuguese machinery name of each kind (and allowed Portuguese).

/// Allowed: contract words (`saldo`, `recarga`), string literals and comments.
pub fn saldo_of(recarga: u32) -> String {
    let saldo = recarga + 1; // espera: a comment is no name
    format!("espera {saldo}")
}

/// Allowed: the plural of the contract's `chave`.
pub fn count(chaves: &[u32]) -> usize {
    chaves.len()
}

pub fn local() -> u32 {
    let espera = 1;
    espera
}

pub fn parameter(tentativa: u32) -> u32 {
    tentativa
}

pub struct Private {
    contador: u32,
}

pub enum Kind {
    Falha,
    Ok,
}

pub fn closure(v: &[u32]) -> u32 {
    v.iter().map(|linha| linha + 1).sum()
}

pub fn arm(v: Option<u32>) -> u32 {
    match v {
        Some(resto) => resto,
        None => 0,
    }
}

pub struct Relogio;

#[pyclass]
pub struct Exposed {
    #[pyo3(get)]
    pendentes_pagos: u32,
    #[pyo3(get, name = "pagos")]
    gravados: u32,
}

#[pymethods]
impl Exposed {
    #[pyo3(signature = (caminho=None))]
    fn pagar(&self, caminho: Option<u32>) -> u32 {
        let volta = caminho.unwrap_or(0);
        volta
    }

    #[pyo3(name = "limpar")]
    fn limpar_falhas(&self) {}
}

#[pyfunction]
fn gravar_arquivo(destino: u32) -> u32 {
    destino
}

#[pyfunction(name = "agora")]
fn agora_utc() {}

fn caminho_privado() {}

#[cfg(test)]
mod tests {
    #[test]
    fn cobra_uma_vez_so() {
        let ok = 1;
        assert_eq!(ok, 1);
    }
}
"""

CLEAN_LIB = """\
//! An English crate: nothing to report.

pub fn wait(attempt: u32) -> u32 {
    let saldo = attempt;
    saldo
}
"""

PLANTED_EXPECTED = {
    "local espera": "src/lib.rs",
    "parameter tentativa": "src/lib.rs",
    "field contador": "src/lib.rs",
    "variant Falha": "src/lib.rs",
    "closure parameter linha": "src/lib.rs",
    "match binding resto": "src/lib.rs",
    "type Relogio": "src/lib.rs",
    "test file 'dinheiro'": "tests/dinheiro.rs",
    # The Python package's public names are allowed, not what they hide or rename.
    "field gravados": "src/lib.rs",
    "local volta": "src/lib.rs",
    "function limpar_falhas": "src/lib.rs",
    "function agora_utc": "src/lib.rs",
    "function caminho_privado": "src/lib.rs",
}

ALLOWED = ["saldo", "recarga", "cobra_uma_vez_so", "espera {saldo}", "Ok",
           # Python's public names: a method and its keyword, a function and its keyword, a
           # field exposed with `#[pyo3(get)]`; and the plural of the contract's `chave`.
           "pagar", "caminho", "gravar_arquivo", "destino", "pendentes_pagos", "chaves"]


def load_names():
    spec = importlib.util.spec_from_file_location("names", os.path.join(HERE, "names.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    names = load_names()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        planted = os.path.join(tmp, "planted")
        write(planted, "src/lib.rs", PLANTED_LIB)
        write(planted, "tests/dinheiro.rs", "#[test]\nfn cobra() {}\n")
        found = names.check_crate(planted)
        for what, rel in PLANTED_EXPECTED.items():
            if not any(rel in f and f.endswith(what) for f in found):
                failures.append(f"missed: {what} in {rel}")
        for allowed in ALLOWED:
            if any(f.endswith(" " + allowed) or f.endswith(repr(allowed)) for f in found):
                failures.append(f"reported what the rule allows: {allowed}")
        first = names.check_declarations_only(planted)
        if any("espera" in f or "tentativa" in f for f in first):
            failures.append("--declarations-only reports locals or parameters")

        clean = os.path.join(tmp, "clean")
        write(clean, "src/lib.rs", CLEAN_LIB)
        write(clean, "tests/money.rs", "#[test]\nfn charges_once() {}\n")
        if names.check_crate(clean):
            failures.append(f"reported an English crate: {names.check_crate(clean)}")

        scripts = os.path.join(tmp, "ci")
        write(scripts, "check.py", "def contar(arquivo):\n    total = len(arquivo)\n    return total\n")
        write(scripts, "run", "#!/usr/bin/env bash\nsaida=1\nfor pedido in a b; do echo $pedido; done\n")
        found = names.check_ci_scripts(scripts)
        for name in ("contar", "arquivo", "saida", "pedido"):
            if not any(f.endswith(": " + name) for f in found):
                failures.append(f"missed in the scripts: {name}")
        if any(f.endswith(": total") for f in found):
            failures.append("reported an English script name: total")
    for f in failures:
        print(f)
    if failures:
        sys.exit(1)
    print(f"names.py self-test: {len(PLANTED_EXPECTED)} planted names found, allowed ones left alone")


if __name__ == "__main__":
    main()
