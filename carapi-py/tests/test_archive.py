"""`Client(acervo=...)`: the archive of paid answers (the SDK's `carapi_sdk::archive`) from
Python: reuse within the policy with no request and no charge, `origem`/`compradoEm` on every
lookup, the same columns in `lote` and `to_pandas()`, and the declarations required up front."""

import datetime
import json
import re
from decimal import Decimal

import pytest

import carapi
from conftest import CODIGO, CODIGO_2, PRECO_CAR, PRECO_COMPLETO


def _client(srv, caminho, **opcoes):
    return carapi.Client(
        srv.base_url,
        srv.conta(saldo="100"),
        acervo=caminho,
        finalidade=opcoes.pop("finalidade", "due diligence de fornecedores"),
        base_legal=opcoes.pop("base_legal", "execucao-contrato"),
        **opcoes,
    )


def test_second_lookup_within_policy_answers_from_the_archive(carapi_servidor, tmp_path):
    c = _client(carapi_servidor, tmp_path / "acervo.sqlite3")
    primeira = c.car(CODIGO)
    assert primeira["origem"] == "api"
    assert isinstance(primeira["compradoEm"], datetime.datetime)
    assert primeira["compradoEm"].tzinfo is not None
    saldo = c.saldo()["saldoReais"]
    assert saldo == Decimal("100") - PRECO_CAR

    segunda = c.car(CODIGO)
    assert segunda["origem"] == "acervo"
    assert abs(segunda["compradoEm"] - primeira["compradoEm"]) < datetime.timedelta(seconds=1)
    assert segunda["dados"] == primeira["dados"]
    assert c.saldo()["saldoReais"] == saldo
    assert c.gasto()["total"] == PRECO_CAR
    # One charged request in the server's history: the second lookup sent none.
    assert [i["chaveConsulta"] for i in c.historico()["itens"]] == [CODIGO]


def test_a_new_client_on_the_same_file_reuses_it(carapi_servidor, tmp_path):
    caminho = tmp_path / "acervo.sqlite3"
    primeiro = _client(carapi_servidor, caminho)
    assert primeiro.car_completo(CODIGO)["origem"] == "api"
    # A str path, another account: read from the file, nothing charged.
    segundo = _client(carapi_servidor, str(caminho))
    r = segundo.car_completo(CODIGO)
    assert r["origem"] == "acervo"
    assert segundo.saldo()["saldoReais"] == Decimal("100")


def test_idade_maxima_zero_buys_again(carapi_servidor, tmp_path):
    c = _client(carapi_servidor, tmp_path / "a.sqlite3", idade_maxima=datetime.timedelta(0))
    assert c.car(CODIGO)["origem"] == "api"
    assert c.car(CODIGO)["origem"] == "api"
    assert c.saldo()["saldoReais"] == Decimal("100") - 2 * PRECO_CAR


def test_without_acervo_the_dicts_are_unchanged(client):
    r = client.car(CODIGO)
    assert "origem" not in r and "compradoEm" not in r
    assert "origem" not in client.lote([CODIGO], progresso=False).registros()[0]


@pytest.mark.parametrize("falta", ["finalidade", "base_legal"])
def test_missing_declaration_is_refused_naming_the_argument(carapi_servidor, tmp_path, falta):
    chave = carapi_servidor.conta(saldo="100")
    opcoes = {"finalidade": "monitoramento", "base_legal": "interesse-legitimo"}
    opcoes[falta] = None
    with pytest.raises(ValueError, match=falta):
        carapi.Client(carapi_servidor.base_url, chave, acervo=tmp_path / "a.sqlite3", **opcoes)
    opcoes[falta] = "  "
    with pytest.raises(ValueError, match=falta):
        carapi.AsyncClient(carapi_servidor.base_url, chave, acervo=tmp_path / "a.sqlite3", **opcoes)
    # Refused before any request: nothing in the account's history, nothing archived.
    assert carapi.Client(carapi_servidor.base_url, chave).historico()["total"] == 0
    assert not (tmp_path / "a.sqlite3").exists()


def test_unknown_legal_basis_lists_the_accepted_ones(carapi_servidor, tmp_path):
    with pytest.raises(ValueError, match="execucao-contrato"):
        _client(carapi_servidor, tmp_path / "a.sqlite3", base_legal="porque sim")


def test_lote_rows_and_to_pandas_say_where_each_row_came_from(carapi_servidor, tmp_path):
    pd = pytest.importorskip("pandas")
    c = _client(carapi_servidor, tmp_path / "acervo.sqlite3")
    c.car(CODIGO)
    lote = c.lote([CODIGO, "invalido", CODIGO_2], progresso=False)
    assert [r.origem for r in lote] == ["acervo", None, "api"]
    assert [r.cobrado for r in lote] == [False, False, True]
    assert lote.gasto == PRECO_CAR
    linhas = lote.registros()
    assert [linha["origem"] for linha in linhas] == ["acervo", None, "api"]
    assert isinstance(linhas[0]["compradoEm"], datetime.datetime)
    df = lote.to_pandas()
    assert {"origem", "compradoEm"} <= set(df.columns)
    assert list(df["origem"].fillna("")) == ["acervo", "", "api"]
    assert df["compradoEm"].dt.tz is not None
    assert pd.isna(df["compradoEm"].iloc[1])
    assert df["compradoEm"].iloc[0] <= df["compradoEm"].iloc[2]


def test_async_client_shares_the_archive(carapi_servidor, tmp_path):
    import asyncio

    async def duas() -> tuple:
        async with carapi.AsyncClient(
            carapi_servidor.base_url,
            carapi_servidor.conta(saldo="100"),
            acervo=tmp_path / "a.sqlite3",
            finalidade="monitoramento",
            base_legal="interesse-legitimo",
            idade_maxima=30,
        ) as ac:
            a = await ac.car_completo(CODIGO)
            b = await ac.car_completo(CODIGO)
            return a["origem"], b["origem"], (await ac.saldo())["saldoReais"]

    assert asyncio.run(duas()) == ("api", "acervo", Decimal("100") - PRECO_COMPLETO)


def _primeiro_documento(completo) -> str:
    cpfs = completo["dados"]["proprietariosCpfs"]
    assert cpfs, "a bundled record with owners"
    return re.split(r"[;,|]", cpfs)[0].strip()


def test_lgpd_tools_titular_expurgar_verificar_exportar(carapi_servidor, tmp_path):
    c = _client(carapi_servidor, tmp_path / "acervo.sqlite3")
    acervo = c.acervo
    assert isinstance(acervo, carapi.Acervo)
    assert acervo.cabeca() is None
    c.car(CODIGO)
    doc = _primeiro_documento(c.car_completo(CODIGO))
    c.proprietario(doc)
    cabeca = acervo.cabeca()
    assert cabeca is not None and cabeca.startswith("3:")

    entradas = acervo.listar()
    assert [e["operacao"] for e in entradas] == ["car", "car_completo", "proprietario"]
    assert entradas[0]["preco"] == PRECO_CAR
    assert entradas[0]["compradoEm"].tzinfo is not None
    assert entradas[0]["baseLegal"] == "execucao-contrato"
    assert acervo.mostrar(1) == entradas[0]
    assert acervo.mostrar(99) is None
    corpo = acervo.corpo(1)
    assert corpo is not None and CODIGO.encode() in corpo

    # The data subject's access request: every entry holding the document.
    assert [e["seq"] for e in acervo.titular(doc)] == [2, 3]

    # The record of processing for an auditor.
    csv = acervo.exportar()
    assert csv is not None and csv.count("\n") == 4 and "execucao-contrato" in csv
    acervo.exportar(tmp_path / "auditoria.json", formato="json")
    assert len(json.loads((tmp_path / "auditoria.json").read_text())) == 3
    with pytest.raises(ValueError, match="formato"):
        acervo.exportar(formato="xml")  # type: ignore[arg-type]

    # Elimination: the content goes, the charge record and the chain stay.
    assert acervo.expurgar(documento=doc) == 2
    assert acervo.titular(doc) == []
    assert acervo.corpo(2) is None and acervo.listar()[1]["expurgadoEm"] is not None
    v = acervo.verificar(cabeca)
    assert v["ok"] and v["entradas"] == 3 and v["expurgadas"] == 2 and v["falhas"] == []
    assert acervo.expurgar(antes_de=datetime.date(2000, 1, 1)) == 0
    with pytest.raises(ValueError, match="documento"):
        acervo.expurgar()
    with pytest.raises(ValueError):
        acervo.verificar("não é cabeça")


def test_verificar_against_a_kept_head_finds_a_truncated_archive(carapi_servidor, tmp_path):
    import sqlite3

    caminho = tmp_path / "acervo.sqlite3"
    c = _client(carapi_servidor, caminho, idade_maxima=0)
    c.car(CODIGO)
    c.car(CODIGO)
    acervo = carapi.Acervo(caminho)
    cabeca = acervo.cabeca()
    assert cabeca is not None
    with sqlite3.connect(caminho) as banco:
        banco.execute("DELETE FROM contents WHERE seq = 2")
        banco.execute("DELETE FROM entries WHERE seq = 2")
    assert acervo.verificar()["ok"], "consistent without the kept head"
    v = acervo.verificar(cabeca)
    assert not v["ok"]
    assert any("acervo truncado" in f for f in v["falhas"]), v["falhas"]


def test_vincular_after_a_key_rotation_lists_the_same_entries(carapi_servidor, tmp_path):
    c = _client(carapi_servidor, tmp_path / "acervo.sqlite3")
    c.car(CODIGO)
    acervo = c.acervo
    assert acervo is not None
    antiga = acervo.listar()[0]["conta"]
    nova = "0123456789abcdef"
    assert acervo.listar(conta=nova) == []
    acervo.vincular(antiga, nova)
    assert acervo.listar(conta=nova) == acervo.listar(conta=antiga) == acervo.listar()
    with pytest.raises(ValueError):
        acervo.vincular("xyz", nova)


def test_a_client_without_acervo_has_none_and_postgres_needs_the_feature(carapi_servidor, tmp_path):
    assert carapi_servidor.client(saldo="1").acervo is None
    with pytest.raises(OSError, match="archive-postgres") as e:
        carapi.Acervo("postgres://equipe:segredo@127.0.0.1:1/acervo")
    assert "segredo" not in str(e.value)


# The names of the SDK's `Entry` (its JSON and CSV exports, the CLI's `acervo listar -o json`).
ENTRY_NAMES = [
    "seq", "operacao", "chave", "preco", "dataConsulta", "compradoEm", "conta", "finalidade",
    "baseLegal", "hashConteudo", "hashAnterior", "hash", "expurgadoEm",
]


def test_entries_use_the_names_of_the_exports(carapi_servidor, tmp_path):
    c = _client(carapi_servidor, tmp_path / "acervo.sqlite3")
    c.car(CODIGO)
    acervo = c.acervo
    assert acervo is not None
    entrada = acervo.listar()[0]
    assert list(entrada) == ENTRY_NAMES
    exportada = json.loads(acervo.exportar(formato="json") or "[]")[0]
    assert set(exportada) == set(ENTRY_NAMES)
    assert exportada["hash"] == entrada["hash"] and exportada["finalidade"] == entrada["finalidade"]
    cabecalho = (acervo.exportar() or "").splitlines()[0]
    assert cabecalho.split(",") == ENTRY_NAMES


def test_a_purged_owner_is_refused_before_buying_and_listed(carapi_servidor, tmp_path):
    c = _client(carapi_servidor, tmp_path / "acervo.sqlite3")
    doc = _primeiro_documento(c.car_completo(CODIGO))
    c.proprietario(doc)
    acervo = c.acervo
    assert acervo is not None and acervo.expurgos(doc) == []
    acervo.expurgar(documento=doc)
    quando = acervo.expurgos(doc)
    assert len(quando) == 1 and quando[0].tzinfo is not None
    saldo = c.saldo()["saldoReais"]
    with pytest.raises(carapi.ErroDeAcervo) as e:
        c.proprietario(doc)
    assert e.value.codigo == "TITULAR_EXPURGADO" and e.value.tipo == "expurgado"
    assert e.value.expurgado_em == quando[0]
    assert doc not in str(e.value)
    assert c.saldo()["saldoReais"] == saldo, "nothing bought"


def test_an_altered_entry_is_an_error_naming_it_and_nothing_is_bought(carapi_servidor, tmp_path):
    import sqlite3

    caminho = tmp_path / "acervo.sqlite3"
    c = _client(carapi_servidor, caminho)
    c.car(CODIGO)
    with sqlite3.connect(caminho) as banco:
        (corpo,) = banco.execute("SELECT body FROM contents WHERE seq = 1").fetchone()
        banco.execute("UPDATE contents SET body = ? WHERE seq = 1", (bytes(corpo).replace(b"DF", b"GO", 1),))
    saldo = c.saldo()["saldoReais"]
    with pytest.raises(carapi.ErroDeAcervo) as e:
        _client(carapi_servidor, caminho).car(CODIGO)
    assert e.value.codigo == "ACERVO_ALTERADO" and e.value.seq == 1 and not e.value.is_retryable
    assert c.saldo()["saldoReais"] == saldo
