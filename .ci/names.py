#!/usr/bin/env python3
"""The naming rule of ARCHITECTURE.md: machinery is named in English in every crate.

Reads the Rust sources of each crate given (`src/`, `tests/`, `e2e/`, `bench/`, `benches/`,
`build.rs`) with a small lexer (comments and string literals are not names) and lists every
name the code declares whose words hold a Portuguese word of machinery ([`MACHINERY`]: the
words the workspace used, or could use, for its own machinery):

- items: files, folders, modules, types, traits, functions, constants, statics, macros and
  `use ... as` aliases;
- fields (`pub` or not) and enum variants;
- parameters, closure parameters, `let`/`if let`/`for` bindings and the bindings of `match`
  arms;
- test files: the file names of integration tests and benchmarks;
- the scripts of `.ci/`: Python functions, classes, parameters and assigned names, and the
  variables of the shell scripts.

Not checked: what users read (string literals), comments, the names of `#[test]` functions
(sentences that describe behaviour, in Portuguese if they like), and names that are the
contract's own though a word of them is also machinery elsewhere ([`CONTRACT_NAMES`], and the
error codes of docs/contrato.md as `CarNaoEncontrado` or `car_nao_encontrado`). The contract's
words (`saldo`, `recarga`, `conta`, `consulta`, `chave`, `chaves`, ...), `sigla` (a state's two
letters: Python's `sigla_uf` and its column `siglaUf`) and the house's `incerto` (a lookup that
may have been charged) are not in [`MACHINERY`]. Nor are the Python package's public names,
which its users read and type: the functions of a `#[pymethods]` impl block or marked
`#[pyfunction]` (their Rust name is checked when `name = "..."` gives Python another one) with
their parameters (Python's keywords), and the fields of a `#[pyclass]` exposed with
`#[pyo3(get)]`; the locals inside them are checked.

`--declarations-only`: the first, narrower check for crates not renamed yet (items and `pub`
fields of `src/` and the benchmarks outside unit tests, the first word list, the Python
binding's functions excepted).

Exits 1 when a name breaks the rule.
Usage: .ci/names.py [--declarations-only] CRATE_DIR...   (.ci/names.py --ci checks .ci/)
"""
import ast
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MACHINERY = set("""
abaixo abandono aberta abertas aberturas abrir acao aceitar aceitas acesso acessos achadas
achado achados acrescimos adiante admitida adversario agora agulha ajuda ajustar ajuste alca
alem alfa alfabeto alfanumerico alternados alto altura alvo amanha amb ambiente amostra
andamento aneis anel ano anos anterior anteriores antiga antigo aos apagar aplicar aquecer
argumentos armazenado arquivo arquivos assentamento assentar assinatura assunto atacante atacar
ataque ate atendida ativo atras atraso atualizar autenticado autoridade avancar
avanco avisar aviso avisos baixo banco bancos barra binario bloco blocos bloqueados bloquear
bom bombear borda bruta bruto buraco buscas cabeca cabecalho cabecalhos calendario camada
caminho caminhos campo campos cancelado cancelados cancelamento cancelar candidata carencia
carga carregado caso casos catalogo cenario centro chega cheio cinza
cliente clientes codificacao coluna colunas comando comandos commitado completar componentes
concluir concorrencia conectar conexao conexoes confere conferir configuracao configurado
confirmada conflito consistente construido construtor contado contador contagem contar contem
conteudo contrato converter coordenacao coordenadas copia copiados copias cor corpo corrompida
cortar cortaveis cortavel corte cortes cota cotas credenciais creditada creditadas creditar
credito creditos criacao criada criadas criado criados criar cronometrar curta curto custo dado
datas debitado debito debitos debitou declarado decorrido demonstracao densos dentro descarga
desconhecido descricao desde desfecho deslocamento destino desvio detalhe devido devolver
devolvidos dez dia diferencial digitos dinheiro direto disposicao divergente dois dono donos
duas duble duracao duracoes durante duro duzentos eco elemento elevar em embutidos emitido
empurrar encerrar encontrada encontrado endereco enderecos engolir enorme entrada entradas
entrega entrelinha enviados envio errada errado erro erros escala escolha escopo escrever
escrita escritor espacos espera esperada esperado esperados esperar esquecidos esquema
essencial estado estilo estragado estragar estrago estrangeiros etapa evento exata
exato exceto exemplo exemplos existe expoente extracao falha falhas falta faltam faltando fase
fatia fatias fazer fechamento fechar feicoes feitas feito feitos ficticios figura figuras fila
filho filhos filtro filtros fim fixo folga fonte fontes fora forjado forma fracao fresco fria
gancho geometria gerado gerador gerados gerar grande grandes grau graus gravador gravados
gravar grupo grupos guarda guardada hora horas hostis ida ignorado ignorados importacao
importar indice indisponivel inexistente informado ingles
inicial iniciar inicio inicios inserir insuficiente inteira inteiro inteiros interno
interrompida intervalo invalida invalido inventados isolamento ja janela janelas lado
lancamento largada largura latencia leitor leitores leitura leituras lenta lento lentos ler
liberar lida lidas lido lidos limitadas limitado limpa linha linhas lista livre livres lixo
loja lojas longa longo lote lugar macio mais malformada malformadas mantida mapeado marca
marcar mascarado mediana medida medidas medido medir meio melhor memoria menor menos mensagem
metodo metricas migracoes migrador milesimos minha minhas minutos modelo modo montagem motivo
mover movida muitos multipoligono nada nao negativo negrito ninguem nova novo nulo numerico
numericos objeto ociosas ocioso onde ontem opcoes operacoes orcamento ordem ordenado ordenador
ordenados ordenar ordens ordinais origem outra outras outro outros pacotes padrao paga
pagamento pagante pagar pagina paginacao paginas palavra para paradas parado parados parametro
parar parte partes passadas passar passo passos pasta pastas pedido pedidos pedir pendentes
pequena pequeno perde perder perdeu perdidas perdidos perfil permissao permissoes pico pior
placar plano planos poligono poligonos ponto pontos por porta portugues posicao posicoes poucos
povos prazo prefixo preparada preparar presa pressao pressionadas primeira primeiro processo
processos produtores progresso proibido proibidos propria pulados quadros quantas quantidades
quantos quarto que quebra quebras quem quente quentes quer quinhentos raiz rajada razao razoes
reabrir recebido recebidos reconciliacao reconciliadas reconstruidos recursos recusa recusada
recusadas recusado recusados recusar recusas rede reducao reduzir reescrita refeita refeitos
referencia regiao registrar registro registros regra regras relativo relogio repetida repetido
repetir requisicao reserva reservado reservar resetar respondidas resposta respostas resta
restante restaurado resto resultado resultados resumo retomar reusada reusadas reuso ritmo
rodada rodadas rodar rota rotas rotulo rotulos ruim ruins saida salto saltos segredo segredos
seguidos seguinte segunda segundo segundos segurando segurar sem semana semear semente sendo
senha separador separar sequencias serie servico servidor servidores servidos servir 
silenciosas sinal sintetico sinteticos sob sobre soma sondagem sondar sorteados substituir
sucessos sufixo suspenso tabela tamanho tamanhos tarde tarefa tarefas taxa tem tempo temporario
tempos tentativa tentativas teste testes texto textos titular titulares titulo todas todos
tolerancia tomar topo trabalho tradicionais trava trocada tudo ultima ultimas ultimo um uma
usuario vaga valida validacao validar valores variavel varrer vazamento vazamentos vazia vazio
vazios vencedor verboso verificar versao versoes vez vezes vigias visao vistas visto vistos
vitima vitimas vivo volta voltas voo
""".split())

# The first list, for --declarations-only (crates not renamed yet).
FIRST_MACHINERY = set("""
abrir acrescimos agora ajuda ambiente apagar ataque binario duble elevar escala fria isolamento
alca aplicar argumentos arquivo arquivos assentar atraso avancar avanco avisar banco barra borda
bruto cabecalho calendario campo campos carencia carga casos comando comandos completar
concluir conexao conexoes configuracao construtor contagem conteudo converter coordenacao corpo
cortar cortaveis cortavel custo descarga desfecho embutidos encerrar entrada envio erro erros
escritor espera esperar estado estrangeiros falha falhas fechar ficticios folga fonte gancho
gerar gravador gravar indice iniciar janela leitor leitores leitura
leituras ler linha linhas marca marcar memoria montagem opcoes operacoes ordem ordenar pagamento
pagar pagina paginacao paginas parar pedido pedidos plano progresso registro relogio reserva
reservar resposta resumo rodar rota rotas saida segredo semente servico servidor sinteticos
sondar tabela tarefa tarefas taxa teste texto textos topo trabalho vaga validacao validar vazio
verboso verificar
""".split())

# Whole names that are the contract's own (fields of its resources) though a word of them is
# also a machinery word elsewhere.
CONTRACT_NAMES = {
    "total_paginas", "hoje_erros", "erros", "registro_car",
    # The SDK's name of `PUT /v1/limites` (`Client::atualizar_limites`).
    "atualizar_limites",
    # The ledger's origin of an account's first credit, as `razao conferir` shows it.
    "saldo_inicial",
    # Columns of the public SICAR extracts (docs/dominio.md).
    "dat_criacao", "data_atualizacao",
    # The registry's codes of a record's status and kind (docs/dominio.md).
    "Ativo", "Pendente", "Suspenso", "Cancelado", "Rural", "Assentamento", "PovosTradicionais",
    # Creating an account, shaped as the contract's `NovaRecarga` and `RecargaCriada`.
    "NovaConta", "ContaCriada", "NovaContaBuilder", "NovaContaRecord", "TestNovaConta",
    # The contract's operations: `POST /v1/recargas` (`Client::criar_recarga`), and the SDK's
    # operation names of `POST /v1/recargas` and `PUT /v1/limites` (`Op`).
    "criar_recarga", "CriarRecarga", "AtualizarLimites",
    # The contract's resources: the body of `POST /v1/recargas` and its 201.
    "NovaRecarga", "RecargaCriadaResponse",
    # The contract's limits: the rate, the daily and the monthly one (`EscopoLimite::Taxa`).
    "EscopoLimite", "Taxa",
    # The contract's reserved sandbox values (docs/contrato.md, "Sandbox").
    "CAR_NAO_EXISTE", "CAR_SEM_SALDO", "CPF_DOIS_CARS", "CPF_NAO_ENCONTRADO",
    # Error codes the contract names outside its table of errors.
    "ContaSemUsuario", "SpecNaoEncontrada",
    # The history's `status=erro` (`StatusConsulta::Erro`).
    "Erro",
    # The SDK's money figures: a 402's shortfall (`Falta`, `client/falta.rs`), what
    # `Client::settle_incertos` settled (`Settlement`), what a spend cap had reserved
    # (`Error::SpendLimit`).
    "Falta", "falta", "nao_precificadas", "nao_cobradas", "cobradas", "pendentes", "reservado",
}

KEYWORDS = set("""
as async await box break const continue crate dyn else enum extern false fn for if impl in let
loop match mod move mut pub ref return self Self static struct super trait true type union unsafe
use where while yield
""".split())
OPEN, CLOSE = ("(", "[", "{"), (")", "]", "}")
PUNCT = ["..=", "...", "<<=", ">>=", "::", "=>", "->", "||", "&&", "..", "==", "!=", "<=", ">=",
         "+=", "-=", "*=", "/=", "%=", "^=", "&=", "|=", "<<", ">>"]
IDENT = re.compile(r"(?:r#)?[^\W\d]\w*", re.U)
NUMBER = re.compile(r"\d[\w.]*")
TEST_ATTRIBUTE = re.compile(r"(tokio :: )?test\b|rstest\b|test_case\b|sqlx :: test\b")


def words(name):
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return [w for w in name.lower().split("_") if w]


def error_code_names():
    """The contract's error codes (docs/contrato.md, "Errors") as Rust names."""
    try:
        with open(os.path.join(ROOT, "docs", "contrato.md"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return set()
    names = set()
    for code in re.findall(r"^\|\s*\d{3}\s*\|\s*([A-Z][A-Z_]+)\s*\|", text, flags=re.M):
        names.add(code.lower())
        names.add("".join(w.capitalize() for w in code.lower().split("_")))
    return names


def is_machinery(name, vocabulary):
    if name in CONTRACT_NAMES or name in ERROR_CODES:
        return False
    return any(w in vocabulary for w in words(name))


# ---- lexer ----------------------------------------------------------------------------------

def lex(text):
    """Tokens `(kind, text, line)`, kind one of ident, lifetime, str, char, num, punct,
    comment."""
    i, n, line = 0, len(text), 1
    out = []
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c.isspace():
            i += 1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(("comment", text[i:end], line))
            i = end
            continue
        if text.startswith("/*", i):
            depth, end = 1, i + 2
            while end < n and depth:
                if text.startswith("/*", end):
                    depth, end = depth + 1, end + 2
                elif text.startswith("*/", end):
                    depth, end = depth - 1, end + 2
                else:
                    end += 1
            out.append(("comment", text[i:end], line))
            line += text.count("\n", i, end)
            i = end
            continue
        raw = re.match(r'(b|c)?r(#*)"', text[i:i + 300]) if c in "bcr" else None
        if raw:
            close = text.find('"' + raw.group(2), i + raw.end())
            end = n if close < 0 else close + 1 + len(raw.group(2))
            out.append(("str", text[i:end], line))
            line += text.count("\n", i, end)
            i = end
            continue
        if c == '"' or (c in "bc" and text.startswith('"', i + 1)):
            end = i + (1 if c == '"' else 2)
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            end += 1
            out.append(("str", text[i:end], line))
            line += text.count("\n", i, end)
            i = end
            continue
        if c == "'" or (c == "b" and text.startswith("'", i + 1)):
            start = i + (1 if c == "'" else 2)
            char = re.match(r"(\\(?:u\{[0-9a-fA-F]+\}|x..|.)|[^\\\n])'", text[start:start + 12], re.S)
            if char:
                out.append(("char", text[i:start + char.end()], line))
                i = start + char.end()
                continue
            life = IDENT.match(text, i + 1)
            if life and c == "'":
                out.append(("lifetime", text[i:life.end()], line))
                i = life.end()
                continue
        ident = IDENT.match(text, i)
        if ident:
            out.append(("ident", ident.group(0), line))
            i = ident.end()
            continue
        number = NUMBER.match(text, i)
        if number:
            s = number.group(0)
            if ".." in s:
                s = s[:s.index("..")]
            out.append(("num", s, line))
            i += len(s)
            continue
        for p in PUNCT:
            if text.startswith(p, i):
                out.append(("punct", p, line))
                i += len(p)
                break
        else:
            out.append(("punct", c, line))
            i += 1
    return out


# ---- the names a file declares --------------------------------------------------------------

def matching(toks, i):
    """Index of the bracket that closes the one at `i`."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j][1] if toks[j][0] == "punct" else ""
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def split_top(toks, separators):
    """`toks` split at the punctuation in `separators` outside brackets and angle brackets."""
    parts, current, depth, angle = [], [], 0, 0
    for t in toks:
        s = t[1] if t[0] == "punct" else None
        if s in OPEN:
            depth += 1
        elif s in CLOSE:
            depth -= 1
        elif s == "<":
            angle += 1
        elif s == ">":
            angle = max(0, angle - 1)
        elif s == ">>":
            angle = max(0, angle - 2)
        if s in separators and depth == 0 and angle == 0:
            parts.append(current)
            current = []
        else:
            current.append(t)
    parts.append(current)
    return parts


def pattern_bindings(toks):
    """The names a pattern binds: lowercase identifiers that are no path, call, struct name,
    field name (`field: pattern`) or keyword."""
    found = []
    for k, t in enumerate(toks):
        if t[0] != "ident":
            continue
        name = t[1].removeprefix("r#")
        if name in KEYWORDS or name == "_" or not (name[0].islower() or name[0] == "_"):
            continue
        after = toks[k + 1][1] if k + 1 < len(toks) else ""
        before = toks[k - 1][1] if k else ""
        if after in ("(", "{", "::", "!", ":") or before in ("::", ".", "'"):
            continue
        found.append((name, t[2]))
    return found


def before_type(toks):
    """A parameter's pattern: what comes before its top-level `:`."""
    return split_top(toks, {":"})[0]


def python_function(attribute):
    """`#[pyfunction]`: a function of the Python package (its name and keywords are public)."""
    return attribute.split(" ")[0] == "pyfunction"


def python_rename(attribute):
    """`#[pyo3(name = "...")]` or `#[pyfunction(name = "...")]`: Python sees another name."""
    return attribute.split(" ")[0] in ("pyo3", "pyfunction", "pyclass") \
        and re.search(r"\bname =", attribute) is not None


class Declarations:
    """Walks the tokens of one file and collects `(name, line, kind)` of what it declares."""

    def __init__(self, text):
        self.toks = [t for t in lex(text) if t[0] != "comment"]
        self.found = []
        self.attributes = []
        # The `fn` tokens of the methods of `#[pymethods]` impl blocks: Python's public names.
        self.python_methods = set()

    def add(self, name, line, kind):
        self.found.append((name.removeprefix("r#"), line, kind))

    def run(self):
        toks = self.toks
        test_next = False
        i = 0
        while i < len(toks):
            kind, text, _ = toks[i]
            if kind == "punct" and text == "#" and i + 1 < len(toks) and toks[i + 1][1] in ("[", "!"):
                start = i + 1 if toks[i + 1][1] == "[" else i + 2
                end = matching(toks, start)
                attribute = " ".join(t[1] for t in toks[start + 1:end])
                if TEST_ATTRIBUTE.match(attribute):
                    test_next = True
                self.attributes.append(attribute)
                i = end + 1
                continue
            if kind == "ident":
                i = self.keyword(i, test_next)
                if text in ("fn", "struct", "enum", "union", "mod", "trait", "type", "const",
                            "static", "impl", "use"):
                    test_next = False
                    self.attributes = []
                continue
            if kind == "punct" and text == "|" and self.closure_starts(i):
                i = self.closure(i)
                continue
            i += 1
        return self.found

    def closure_starts(self, i):
        before = self.toks[i - 1] if i else ("punct", "{", 0)
        return before[1] in ("(", ",", "=", "{", ";", "=>", "move", "return", "[", "||", "&&",
                             "!", ":", "else")

    def closure(self, i):
        toks = self.toks
        j, depth = i + 1, 0
        while j < len(toks) and not (toks[j][1] == "|" and depth == 0):
            if toks[j][1] in OPEN:
                depth += 1
            elif toks[j][1] in CLOSE:
                depth -= 1
            j += 1
        for param in split_top(toks[i + 1:j], {","}):
            for name, line in pattern_bindings(before_type(param)):
                self.add(name, line, "closure parameter")
        return j + 1

    def keyword(self, i, test_next):
        toks = self.toks
        word = toks[i][1]
        after = toks[i + 1] if i + 1 < len(toks) else ("", "", 0)
        if i and toks[i - 1][1] in ("::", "."):
            return i + 1
        if word == "fn" and after[0] == "ident":
            python = i in self.python_methods or any(python_function(a) for a in self.attributes)
            # A Python function's Rust name is checked when it is not the Python one
            # (`#[pyo3(name = "...")]`, `#[pyfunction(name = "...")]`); its parameters are
            # Python's keyword names.
            renamed = any(python_rename(a) for a in self.attributes)
            if not test_next and not (python and not renamed):
                self.add(after[1], after[2], "function")
            if python:
                return self.skip_generics(i + 2)
            return self.parameters(i + 2)
        if word == "impl" and any(a.split(" ")[0] == "pymethods" for a in self.attributes):
            self.mark_python_methods(i)
            return i + 1
        if word in ("struct", "union") and after[0] == "ident":
            self.add(after[1], after[2], "type")
            # The fields of a metric's label set are its label names: what operators read.
            if any("EncodeLabelSet" in a for a in self.attributes):
                return self.body_start(i + 2)
            # `#[pyclass(get_all)]`: every field is a Python attribute.
            get_all = any(a.startswith("pyclass") and " get_all" in a for a in self.attributes)
            return self.struct_body(i + 2, get_all)
        if word == "enum" and after[0] == "ident":
            self.add(after[1], after[2], "type")
            return self.enum_body(i + 2)
        if word in ("trait", "type", "mod") and after[0] == "ident":
            self.add(after[1], after[2], {"mod": "module", "type": "type", "trait": "trait"}[word])
            return i + 2
        if word in ("const", "static"):
            j = i + 1
            if toks[j][1] == "mut":
                j += 1
            if toks[j][0] == "ident" and toks[j][1] not in ("fn", "unsafe", "async", "extern", "_") \
                    and j + 1 < len(toks) and toks[j + 1][1] == ":":
                self.add(toks[j][1], toks[j][2], "constant")
            return j
        if word == "macro_rules" and after[1] == "!":
            self.add(toks[i + 2][1], toks[i + 2][2], "macro")
            return self.skip_macro_body(i + 3)
        if word == "as" and after[0] == "ident" and self.in_use(i):
            if after[1] != "_":
                self.add(after[1], after[2], "import alias")
            return i + 2
        if word == "let":
            j = self.until_top(i + 1, {"=", ";"}, stop_at_colon=True)
            for name, line in pattern_bindings(toks[i + 1:j]):
                self.add(name, line, "local")
            return j
        if word == "for" and after[1] != "<":
            j = self.until_top(i + 1, {"in"}, keyword=True)
            if j < len(toks) and toks[j][1] == "in":
                for name, line in pattern_bindings(toks[i + 1:j]):
                    self.add(name, line, "local")
            return i + 1
        if word == "match":
            self.match_arms(i)
        return i + 1

    def skip_macro_body(self, j):
        toks = self.toks
        while j < len(toks) and toks[j][1] not in OPEN:
            j += 1
        return matching(toks, j) + 1 if j < len(toks) else j

    def in_use(self, i):
        toks = self.toks
        j = i
        while j > 0:
            s = toks[j][1]
            if s == "use":
                return True
            if s == ";" or (s in ("{", "}") and not (s == "{" and toks[j - 1][1] == "::")
                            and not (s == "}" and self.closes_use_group(j))):
                return False
            j -= 1
        return False

    def closes_use_group(self, j):
        toks = self.toks
        depth = 0
        for k in range(j, -1, -1):
            if toks[k][1] == "}":
                depth += 1
            elif toks[k][1] == "{":
                depth -= 1
                if depth == 0:
                    return k > 0 and toks[k - 1][1] == "::"
        return False

    def until_top(self, i, stops, stop_at_colon=False, keyword=False):
        toks = self.toks
        depth = 0
        j = i
        while j < len(toks):
            s = toks[j][1]
            if depth == 0 and ((s in stops and (toks[j][0] == "ident") == keyword)
                               or (stop_at_colon and s == ":")):
                return j
            if s in OPEN:
                depth += 1
            elif s in CLOSE:
                depth -= 1
                if depth < 0:
                    return j
            j += 1
        return j

    def skip_generics(self, j):
        toks = self.toks
        if j < len(toks) and toks[j][1] == "<":
            angle = 0
            while j < len(toks):
                angle += {"<": 1, ">": -1, ">>": -2}.get(toks[j][1], 0)
                j += 1
                if angle <= 0:
                    break
        return j

    def parameters(self, j):
        toks = self.toks
        j = self.skip_generics(j)
        if j >= len(toks) or toks[j][1] != "(":
            return j
        end = matching(toks, j)
        for param in split_top(toks[j + 1:end], {","}):
            for name, line in pattern_bindings(before_type(param)):
                self.add(name, line, "parameter")
        return end + 1

    def body_start(self, j):
        toks = self.toks
        j = self.skip_generics(j)
        while j < len(toks) and toks[j][1] not in ("{", "(", ";"):
            j += 1
        return j

    def mark_python_methods(self, i):
        """Records the `fn` tokens directly inside the body of the impl block at `i`."""
        toks = self.toks
        j = i
        while j < len(toks) and toks[j][1] not in ("{", ";"):
            j += 1
        if j >= len(toks) or toks[j][1] != "{":
            return
        end, depth = matching(toks, j), 0
        for k in range(j + 1, end):
            s = toks[k][1] if toks[k][0] == "punct" else None
            if s in OPEN:
                depth += 1
            elif s in CLOSE:
                depth -= 1
            elif depth == 0 and toks[k] == ("ident", "fn", toks[k][2]):
                self.python_methods.add(k)

    def struct_body(self, j, python_fields=False):
        j = self.body_start(j)
        if j < len(self.toks) and self.toks[j][1] == "{":
            end = matching(self.toks, j)
            self.fields(self.toks[j + 1:end], python_fields)
            return end + 1
        return j

    def fields(self, body, python_fields=False):
        for field in split_top(body, {","}):
            k, python = 0, python_fields
            while k < len(field):
                if field[k][1] == "#":
                    close = k + 1 + matching(field[k + 1:], 0)
                    attribute = " ".join(t[1] for t in field[k + 2:close])
                    # `#[pyo3(get)]`: the field is a Python attribute of that name.
                    if attribute.startswith("pyo3") and re.search(r"\b(get|set)\b", attribute):
                        python = not python_rename(attribute)
                    k = close + 1
                elif field[k][1] == "pub":
                    k += 1
                    if k < len(field) and field[k][1] == "(":
                        k = k + matching(field[k:], 0) + 1
                else:
                    break
            if k + 1 < len(field) and field[k][0] == "ident" and field[k + 1][1] == ":" \
                    and not python:
                self.add(field[k][1], field[k][2], "field")

    def enum_body(self, j):
        toks = self.toks
        j = self.body_start(j)
        if j >= len(toks) or toks[j][1] != "{":
            return j
        end = matching(toks, j)
        for variant in split_top(toks[j + 1:end], {","}):
            k = 0
            while k < len(variant) and variant[k][1] == "#":
                k = k + 1 + matching(variant[k + 1:], 0) + 1
            if k < len(variant) and variant[k][0] == "ident":
                self.add(variant[k][1], variant[k][2], "variant")
                if k + 1 < len(variant) and variant[k + 1][1] == "{":
                    self.fields(variant[k + 2:k + 1 + matching(variant[k + 1:], 0)])
        return end + 1

    def match_arms(self, i):
        toks = self.toks
        j = self.until_top(i + 1, {"{"})
        if j >= len(toks) or toks[j][1] != "{":
            return
        end = matching(toks, j)
        k = j + 1
        while k < end:
            arrow = self.until_top(k, {"=>"})
            if arrow >= end:
                return
            pattern = toks[k:arrow]
            guard = [n for n, t in enumerate(pattern) if t[1] == "if" and t[0] == "ident"]
            for name, line in pattern_bindings(pattern[:guard[0]] if guard else pattern):
                self.add(name, line, "match binding")
            k = arrow + 1
            if k < end and toks[k][1] == "{":
                k = matching(toks, k) + 1
                if k < end and toks[k][1] == ",":
                    k += 1
            else:
                k = self.until_top(k, {","}) + 1


# ---- the extended check ---------------------------------------------------------------------

SOURCE_FOLDERS = ("src", "tests", "e2e", "bench", "benches")
TEST_FOLDERS = ("tests", "e2e", "bench", "benches")


def rust_files(crate):
    for folder in SOURCE_FOLDERS:
        top = os.path.join(crate, folder)
        for base, dirs, files in os.walk(top):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(".rs"):
                    yield folder, os.path.join(base, f), os.path.relpath(os.path.join(base, f), top)
    build = os.path.join(crate, "build.rs")
    if os.path.exists(build):
        yield "", build, "build.rs"


def check_crate(crate):
    findings = []
    for folder, path, rel in rust_files(crate):
        kind = "test file" if folder in TEST_FOLDERS else "file or folder"
        for part in rel[:-3].split(os.sep):
            if is_machinery(part, MACHINERY):
                findings.append(f"{path}: {kind} {part!r}")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name, line, what in Declarations(text).run():
            if is_machinery(name, MACHINERY):
                findings.append(f"{path}:{line}: {what} {name}")
    return findings


def check_ci_scripts(folder):
    """The identifiers of the scripts in `folder`: Python by its syntax tree, shell scripts by
    their assignments, `for` and `read` variables."""
    findings = []
    for f in sorted(os.listdir(folder)):
        path = os.path.join(folder, f)
        if not os.path.isfile(path):
            continue
        for part in words(f.rsplit(".", 1)[0].replace("-", "_")):
            if part in MACHINERY:
                findings.append(f"{path}: script name {f!r}")
                break
        with open(path, encoding="utf-8", errors="replace") as h:
            text = h.read()
        names = []
        if f.endswith(".py"):
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                    names.append((node.name, node.lineno))
                elif isinstance(node, ast.arg):
                    names.append((node.arg, node.lineno))
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.append((node.id, node.lineno))
        elif text.startswith("#!") and "sh" in text.split("\n", 1)[0]:
            for n, line in enumerate(text.splitlines(), 1):
                code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
                for m in re.finditer(r"(?:^|[\s;(])(?:local\s+|export\s+|readonly\s+)?([A-Za-z_]\w*)(?:\[\w*\])?\+?=", code):
                    names.append((m.group(1), n))
                for m in re.finditer(r"\bfor\s+([A-Za-z_]\w*)\s+in\b|\bread\s+(?:-\w+\s+)*([A-Za-z_]\w*)", code):
                    names.append((m.group(1) or m.group(2), n))
        for name, line in names:
            if is_machinery(name, MACHINERY):
                findings.append(f"{path}:{line}: {name}")
    return findings


# ---- the first check (--declarations-only) --------------------------------------------------

DECLARATION = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|extern)\s+)*"
    r"(fn|struct|enum|trait|type|const|static|mod)\s+([A-Za-z_][A-Za-z0-9_]*)"
)
PUB_FIELD = re.compile(r"^\s*pub(?:\([^)]*\))?\s+([a-z_][a-z0-9_]*)\s*:")


def without_tests(text):
    out, skip, depth, next_is_test = [], False, 0, False
    for line in text.split("\n"):
        if skip:
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                skip = False
            out.append("")
            continue
        s = line.strip()
        if s.startswith(("#[cfg(test)]", "#[test]", "#[tokio::test")):
            next_is_test = True
            out.append("")
            continue
        if next_is_test and "{" in s and re.match(r"(pub(\([^)]*\))?\s+)?(async\s+)?(mod|fn)\b", s):
            depth = line.count("{") - line.count("}")
            skip = depth > 0
            next_is_test = False
            out.append("")
            continue
        if next_is_test and re.match(r"(pub(\([^)]*\))?\s+)?mod\s+\w+\s*;", s):
            next_is_test = False
            out.append("")
            continue
        if next_is_test and not s.startswith("#"):
            next_is_test = False
        out.append(line)
    return out


def check_declarations_only(crate):
    findings = []
    python = os.path.basename(os.path.normpath(crate)) == "carapi-py"
    for folder in ("src", "bench", "benches"):
        top = os.path.join(crate, folder)
        for base, _, files in os.walk(top):
            for f in sorted(files):
                if not f.endswith(".rs") or f == "tests.rs" or f.endswith("_cases.rs"):
                    continue
                path = os.path.join(base, f)
                rel = os.path.relpath(path, top)
                if "tests" in rel.split(os.sep)[:-1]:
                    continue
                for part in rel[:-3].split(os.sep):
                    if is_machinery(part, FIRST_MACHINERY):
                        findings.append(f"{path}: file or folder {part!r}")
                with open(path, encoding="utf-8") as h:
                    lines = without_tests(h.read())
                for n, line in enumerate(lines, 1):
                    line = line.split("//")[0]
                    m = DECLARATION.match(line)
                    name = None
                    if m and not (python and m.group(1) == "fn"):
                        name = m.group(2)
                    else:
                        field = PUB_FIELD.match(line)
                        if field and not python:
                            name = field.group(1)
                    if name and is_machinery(name, FIRST_MACHINERY):
                        findings.append(f"{path}:{n}: {name}")
    return findings


ERROR_CODES = error_code_names()


def main(argv):
    declarations_only = "--declarations-only" in argv
    ci = "--ci" in argv
    crates = [a for a in argv if not a.startswith("--")]
    findings = []
    for crate in crates:
        findings += check_declarations_only(crate) if declarations_only else check_crate(crate)
    if ci:
        findings += check_ci_scripts(os.path.join(ROOT, ".ci"))
    for f in findings:
        print(f)
    if findings:
        print(f"{len(findings)} machinery names in Portuguese (ARCHITECTURE.md, the naming rule)",
              file=sys.stderr)
        return 1
    print("naming rule: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
