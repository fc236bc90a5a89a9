//! The crate's house rules, read from its own sources: machinery named in English (the
//! contract's words stay Portuguese where they name its operations, resources, fields and money;
//! what users read and type is Portuguese and lives in strings and help texts, not in names),
//! `pub` only for what another crate uses, and no `allow(missing_docs)` in production code.

use std::path::{Path, PathBuf};

/// Portuguese words this crate once named machinery with (files, modules, types, functions,
/// fields, locals). The contract's words (`saldo`, `recarga`, `valor`, `conta`, `limite`,
/// `diario` of `limiteDiarioRequisicoes`, `chave` of `chaveConsulta`: a lookup's key, ...) and
/// `lote`, the command's name, are not here.
const MACHINERY_PT: &[&str] = &[
    "abrir",
    "aguardar",
    "ajuda",
    "ajuste",
    "alvo",
    "anterior",
    "anteriores",
    "aprovado",
    "aprovar",
    "argumento",
    "argumentos",
    "arquivo",
    "booleano",
    "bruto",
    "cabecalho",
    "caminho",
    "caminhos",
    "campo",
    "campos",
    "celula",
    "chaveiro",
    "coluna",
    "colunas",
    "comando",
    "concluir",
    "consultar",
    "credencial",
    "credenciais",
    "custo",
    "destino",
    "dica",
    "dinheiro",
    "encerrar",
    "entrada",
    "erro",
    "erros",
    "escritor",
    "escrever",
    "estado",
    "estrangeiros",
    "executar",
    "exemplos",
    "exportar",
    "fim",
    "fonte",
    "formato",
    "guardar",
    "humano",
    "indisponivel",
    "iniciar",
    "inteiro",
    "largura",
    "leitor",
    "ler",
    "linha",
    "linhas",
    "medida",
    "mensagem",
    "mostrar",
    "nome",
    "nomes",
    "novo",
    "opcional",
    "opcoes",
    "origem",
    "parada",
    "parar",
    "plano",
    "planejar",
    "quebrar",
    "registrar",
    "registro",
    "registros",
    "resposta",
    "resultado",
    "resumo",
    "rodar",
    "saida",
    "salvar",
    "salvo",
    "servidor",
    "sinal",
    "tabela",
    "tela",
    "texto",
    "tipo",
    "traduzir",
    "verboso",
    "visitar",
];

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The lowercase words of an identifier (`set_width` → `set`, `width`; `BatchKind` → `batch`,
/// `kind`).
fn words(ident: &str) -> Vec<String> {
    let mut out = vec![];
    for part in ident.split('_').filter(|p| !p.is_empty()) {
        let mut w = String::new();
        for c in part.chars() {
            if c.is_uppercase() && !w.is_empty() && !part.chars().all(char::is_uppercase) {
                out.push(std::mem::take(&mut w));
            }
            w.extend(c.to_lowercase());
        }
        out.push(w);
    }
    out
}

/// The names a file defines or binds outside strings and comments: items, fields, parameters
/// and `let` bindings (a line-based reading, enough for rustfmt-formatted code). Test functions
/// are left out: their names say what a user does, in the user's words (`--saida`, `--coluna`).
fn names(code: &str) -> Vec<String> {
    let mut out = vec![];
    let mut after_test_attr = false;
    for line in code.lines() {
        if std::mem::replace(&mut after_test_attr, line.trim() == "#[test]") {
            continue;
        }
        let line = line.split("//").next().unwrap_or("");
        let line = strip_strings(line);
        let toks: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|t| !t.is_empty())
            .collect();
        for w in toks.windows(2) {
            if matches!(
                w[0],
                "fn" | "struct"
                    | "enum"
                    | "trait"
                    | "type"
                    | "const"
                    | "static"
                    | "mod"
                    | "let"
                    | "mut"
            ) {
                out.push(w[1].to_owned());
            }
        }
        // `name: Type` (fields, parameters, struct literals).
        let t = line.trim_start().trim_start_matches("pub(crate) ");
        if let Some((name, _)) = t.split_once(": ")
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            out.push(name.to_owned());
        }
    }
    out
}

/// `line` without the contents of its string literals.
fn strip_strings(line: &str) -> String {
    let mut out = String::new();
    let mut in_str = false;
    let mut escaped = false;
    for c in line.chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn machinery_is_named_in_english() {
    let mut found = vec![];
    for dir in ["src", "tests"] {
        for path in rust_files(&crate_dir().join(dir)) {
            let rel = path
                .strip_prefix(crate_dir())
                .unwrap()
                .display()
                .to_string();
            let mut idents: Vec<String> = path
                .strip_prefix(crate_dir().join(dir))
                .unwrap()
                .with_extension("")
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            if rel.ends_with("house.rs") {
                continue;
            }
            idents.extend(names(&std::fs::read_to_string(&path).unwrap()));
            for ident in idents {
                if words(&ident)
                    .iter()
                    .any(|w| MACHINERY_PT.contains(&w.as_str()))
                {
                    found.push(format!("{rel}: {ident}"));
                }
            }
        }
    }
    found.dedup();
    assert!(
        found.is_empty(),
        "Portuguese machinery names:\n{}",
        found.join("\n")
    );
}

#[test]
fn only_what_another_crate_uses_is_pub() {
    // The binary calls `main`; the help tests walk `help::command()`.
    let allowed = [
        "src/lib.rs: pub mod help;",
        "src/lib.rs: pub fn main() -> ExitCode {",
        "src/help.rs: pub fn command() -> Command {",
    ];
    let mut public = vec![];
    for path in rust_files(&crate_dir().join("src")) {
        let rel = path
            .strip_prefix(crate_dir())
            .unwrap()
            .display()
            .to_string();
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let t = line.trim_start();
            if t.starts_with("pub ") {
                public.push(format!("{rel}: {t}"));
            }
        }
    }
    public.sort();
    let mut allowed = allowed.map(str::to_owned).to_vec();
    allowed.sort();
    assert_eq!(public, allowed, "pub(crate) by default");
}

#[test]
fn production_code_documents_without_allow_missing_docs() {
    let offenders: Vec<String> = rust_files(&crate_dir().join("src"))
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains("allow(missing_docs)")
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "{offenders:?}");
}

#[test]
fn the_word_splitter_reads_both_cases() {
    assert_eq!(words("set_width"), ["set", "width"]);
    assert_eq!(words("BatchKind"), ["batch", "kind"]);
    assert_eq!(words("MAX_PAGE_SIZE"), ["max", "page", "size"]);
    assert!(
        names("    pub(crate) fn set_largura(&mut self, largura: Option<u16>) {")
            .contains(&"set_largura".to_owned())
    );
    assert!(
        names("    let (a, b) = \"linha\";")
            .iter()
            .all(|n| n != "linha")
    );
}
