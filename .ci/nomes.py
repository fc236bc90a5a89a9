#!/usr/bin/env python3
"""The naming rule of ARCHITECTURE.md: machinery is named in English in every crate.

Lists every file, module, type, trait, function, constant, static and named field declared in
the crates' `src/` and benchmarks (`bench/`, `benches/`) whose name holds a Portuguese word of machinery (the list below: the words the
workspace once used for its own machinery). The contract's words (`saldo`, `recarga`, `car`,
`conta`, ...) are not in the list: they stay Portuguese. Not checked: string literals (what users
read), unit tests (`#[cfg(test)]` modules and `#[test]` functions, whose names describe
behaviour), and the functions of the Python binding (`carapi-py`), whose names are the Python
package's public Portuguese names. Exits 1 when a name breaks the rule.
Usage: .ci/nomes.py CRATE_DIR...
"""
import os
import re
import sys

MAQUINARIA = set("""
abrir acrescimos agora ajuda ambiente apagar ataque binario duble elevar escala fria isolamento alca aplicar argumentos arquivo arquivos assentar atraso avancar
avanco avisar banco barra borda bruto cabecalho calendario campo campos carencia carga casos
chaves comando comandos completar concluir conexao conexoes configuracao construtor contagem
conteudo converter coordenacao corpo cortar cortaveis cortavel custo descarga desfecho
embutidos encerrar entrada envio erro erros escritor espera esperar estado estrangeiros falha
falhas fechar ficticios folga fonte gancho gerar gravador gravar incerta incerto incertos
indice iniciar janela leitor leitores leitura leituras ler linha linhas marca marcar memoria
montagem opcoes operacoes ordem ordenar pagamento pagar pagina paginacao paginas parar pedido
pedidos plano progresso registro relogio reserva reservar resposta resumo rodar rota rotas
saida segredo semente servico servidor sinteticos sondar tabela tarefa tarefas taxa teste
texto textos topo trabalho vaga validacao validar vazio verboso verificar
""".split())

# Whole names that are the contract's own (fields of its resources) though a word of them is
# also a machinery word elsewhere.
CONTRATO = {"total_paginas", "hoje_erros", "erros", "registro_car", "incerto"}

DECL = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|extern)\s+)*"
    r"(fn|struct|enum|trait|type|const|static|mod)\s+([A-Za-z_][A-Za-z0-9_]*)"
)
CAMPO = re.compile(r"^\s*pub(?:\([^)]*\))?\s+([a-z_][a-z0-9_]*)\s*:")


def palavras(nome):
    nome = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", nome)
    return [p for p in nome.lower().split("_") if p]


def sem_testes(texto):
    linhas = texto.split("\n")
    fora = []
    pular = 0
    profundidade = 0
    proxima_e_teste = False
    for linha in linhas:
        if pular:
            profundidade += linha.count("{") - linha.count("}")
            if profundidade <= 0:
                pular = 0
            fora.append("")
            continue
        s = linha.strip()
        if s.startswith("#[cfg(test)]") or s.startswith("#[test]") or s.startswith("#[tokio::test"):
            proxima_e_teste = True
            fora.append("")
            continue
        if proxima_e_teste and ("{" in s) and re.match(r"(pub(\([^)]*\))?\s+)?(async\s+)?(mod|fn)\b", s):
            profundidade = linha.count("{") - linha.count("}")
            pular = 1 if profundidade > 0 else 0
            proxima_e_teste = False
            fora.append("")
            continue
        if proxima_e_teste and re.match(r"(pub(\([^)]*\))?\s+)?mod\s+\w+\s*;", s):
            proxima_e_teste = False
            fora.append("")
            continue
        if proxima_e_teste and not s.startswith("#"):
            proxima_e_teste = False
        fora.append(linha)
    return fora


def checar(raiz):
    achados = []
    python = os.path.basename(os.path.normpath(raiz)) == "carapi-py"
    for pasta in ("src", "bench", "benches"):
        achados += checar_pasta(os.path.join(raiz, pasta), python)
    return achados


def checar_pasta(src, python):
    """The files of one folder of a crate (its library, binaries or benchmarks)."""
    achados = []
    for base, _, arquivos in os.walk(src):
        for a in sorted(arquivos):
            # Unit-test files (`tests.rs`, `*_cases.rs`: `#[cfg(test)]` modules of their own).
            if not a.endswith(".rs") or a == "tests.rs" or a.endswith("_cases.rs"):
                continue
            caminho = os.path.join(base, a)
            rel = os.path.relpath(caminho, src)
            if "tests" in rel.split(os.sep)[:-1]:
                continue
            for parte in rel[:-3].split(os.sep):
                if any(p in MAQUINARIA for p in palavras(parte)):
                    achados.append(f"{caminho}: file or folder {parte!r}")
            texto = open(caminho, encoding="utf-8").read()
            for n, linha in enumerate(sem_testes(texto), 1):
                linha = linha.split("//")[0]
                m = DECL.match(linha)
                nome = None
                if m and not (python and m.group(1) == "fn"):
                    nome = m.group(2)
                else:
                    c = CAMPO.match(linha)
                    if c and not python:
                        nome = c.group(1)
                if nome and nome not in CONTRATO and any(p in MAQUINARIA for p in palavras(nome)):
                    achados.append(f"{caminho}:{n}: {nome}")
    return achados


def main():
    achados = [a for raiz in sys.argv[1:] for a in checar(raiz)]
    for a in achados:
        print(a)
    if achados:
        print(f"{len(achados)} machinery names in Portuguese (ARCHITECTURE.md, the naming rule)",
              file=sys.stderr)
        sys.exit(1)
    print("naming rule: ok")


main()
