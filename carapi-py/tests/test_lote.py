"""`lote`: one result per key in input order, to pandas and geopandas."""

from decimal import Decimal

import pytest

import carapi
from carapi import sandbox
from carapi.testing import CODIGOS_CAR
from conftest import CODIGO, CODIGO_2, CODIGO_3, CODIGO_COM_POSICAO, CODIGO_INEXISTENTE, PRECO_CAR, PRECO_COMPLETO

CHAVES = [CODIGO_3, "invalido", CODIGO, CODIGO_INEXISTENTE, sandbox.CAR_BASICO, CODIGO_2]


def test_lote_keeps_input_order_status_and_charges(client):
    lote = client.lote(CHAVES, progresso=False)
    assert [r.chave for r in lote.resultados] == CHAVES
    assert [r.status for r in lote.resultados] == ["ok", "erro", "ok", "erro", "ok", "ok"]
    assert [r.erro for r in lote.resultados] == [
        None, "CODIGO_CAR_INVALIDO", None, "CAR_NAO_ENCONTRADO", None, None,
    ]
    assert [r.cobrado for r in lote.resultados] == [True, False, True, False, False, True]
    assert lote.resultados[4].sandbox is True
    assert lote.gasto == Decimal("3.00")
    assert client.saldo()["saldoReais"] == Decimal("97.00")


def test_lote_to_pandas(client):
    pd = pytest.importorskip("pandas")
    df = client.lote(CHAVES + [CODIGO_COM_POSICAO], progresso=False).to_pandas()
    assert list(df["chave"]) == CHAVES + [CODIGO_COM_POSICAO]
    linha = df[df["chave"] == CODIGO].iloc[0]
    assert linha["areaTotalHa"] == pytest.approx(2.0131)
    assert linha["modulosFiscais"] == pytest.approx(0.4026)
    com_posicao = df[df["chave"] == CODIGO_COM_POSICAO].iloc[0]
    assert -16.1 < com_posicao["latitude"] < -15.4 and -48.3 < com_posicao["longitude"] < -47.3
    assert isinstance(linha["dataCadastro"], pd.Timestamp)
    assert pd.api.types.is_float_dtype(df["areaTotalHa"])
    assert df[df["chave"] == "invalido"].iloc[0]["codigoErro"] == "CODIGO_CAR_INVALIDO"


def test_every_timestamp_of_to_pandas_is_aware_in_brasilia(client):
    pd = pytest.importorskip("pandas")
    df = client.lote([CODIGO, "invalido", CODIGO_2], progresso=False).to_pandas()
    assert str(df["dataCadastro"].dt.tz) == "America/Sao_Paulo"
    # The registry's wall time 09/05/2014 17:16:10 in Brasília (UTC-3 then, no daylight saving in May).
    assert df["dataCadastro"].iloc[0] == pd.Timestamp("2014-05-09T20:16:10Z")
    assert pd.isna(df["dataCadastro"].iloc[1])
    historico = pd.DataFrame(client.historico()["itens"])
    historico["data"] = pd.to_datetime(historico["data"], utc=True)
    # Comparable with the history's instants (aware): no "tz-naive and tz-aware" TypeError.
    assert (df["dataCadastro"].dropna() < historico["data"].min()).all()
    for coluna in df.columns:
        if pd.api.types.is_datetime64_any_dtype(df[coluna]):
            assert df[coluna].dt.tz is not None, coluna


def test_lote_to_geopandas(client):
    gpd = pytest.importorskip("geopandas")
    gdf = client.lote([CODIGO_COM_POSICAO, "invalido", CODIGO_2], progresso=False).to_geopandas()
    assert isinstance(gdf, gpd.GeoDataFrame)
    assert gdf.crs.to_epsg() == 4326
    assert list(gdf["chave"]) == [CODIGO_COM_POSICAO, "invalido", CODIGO_2]
    ponto = gdf.geometry.iloc[0]
    assert ponto.x == pytest.approx(gdf["longitude"].iloc[0])
    assert ponto.y == pytest.approx(gdf["latitude"].iloc[0])
    assert gdf.geometry.iloc[1] is None


def test_lote_completo_with_max_custo_stops_before_passing_it(client):
    lote = client.lote([CODIGO, CODIGO_2, CODIGO_3], consulta="completo", max_custo="5.00", progresso=False)
    assert [r.status for r in lote.resultados] == ["ok", "ok", "nao_consultada"]
    assert lote.resultados[2].erro == "MAX_CUSTO" and lote.resultados[2].cobrado is False
    assert lote.gasto == 2 * PRECO_COMPLETO
    assert "proprietariosNomes" in lote.resultados[0].dados


def test_lote_proprietario(client):
    lote = client.lote([sandbox.CPF_DOIS_CARS, sandbox.CPF_NAO_ENCONTRADO], consulta="proprietario", progresso=False)
    assert lote.resultados[0].dados["total"] == 2
    assert lote.resultados[1].erro == "CPF_CNPJ_NAO_ENCONTRADO"


def test_lote_lost_answer_is_uncertain_not_resent(carapi_servidor):
    client = carapi_servidor.client(saldo="10")
    carapi_servidor.falhar("perder_resposta_apos_cobrar", rota="/v1/car/{codigoCar}")
    lote = client.lote([CODIGO, CODIGO_2], progresso=False)
    assert lote.resultados[0].erro == "RESPOSTA_PERDIDA" and lote.resultados[0].cobrado is None
    assert lote.resultados[1].status == "ok"
    assert client.historico(endpoint="car")["total"] == 2


def test_missing_extra_names_it(client, monkeypatch):
    import builtins

    real = builtins.__import__

    def sem_pandas(nome, *a, **k):
        if nome == "pandas" or nome.startswith("pandas."):
            raise ImportError("no pandas")
        return real(nome, *a, **k)

    lote = client.lote([sandbox.CAR_BASICO], progresso=False)
    monkeypatch.setattr(builtins, "__import__", sem_pandas)
    monkeypatch.setattr("importlib.import_module", lambda n: sem_pandas(n))
    with pytest.raises(ImportError, match=r"carapi\[pandas\]"):
        lote.to_pandas()


def test_bad_consulta(client):
    with pytest.raises(ValueError):
        client.lote([CODIGO], consulta="recibo")


def test_lote_under_the_clients_spend_cap_reports_it_per_key(carapi_servidor):
    client = carapi_servidor.client(saldo="10", max_spend="1.00")
    lote = client.lote([CODIGO, CODIGO_2], progresso=False)
    assert [r.status for r in lote.resultados] == ["ok", "erro"]
    assert lote.resultados[1].erro == "LIMITE_DE_GASTO" and lote.resultados[1].cobrado is False
    assert isinstance(lote.resultados[1].excecao, carapi.LimiteDeGasto)


def test_lote_buys_each_normalised_key_once(carapi_servidor):
    client = carapi_servidor.client(saldo="10")
    pasted = CODIGO.lower().replace("-", " ", 1).replace("-", "\u2013")
    chaves = [CODIGO, CODIGO, pasted, CODIGO_2, "invalido"]
    lote = client.lote(chaves, progresso=False)
    assert [r.chave for r in lote] == chaves
    assert [r.status for r in lote] == ["ok", "ok", "ok", "ok", "erro"]
    assert [r.cobrado for r in lote] == [True, False, False, True, False]
    assert [r.duplicata_de for r in lote] == [None, 0, 0, None, None]
    assert lote[2].dados == lote[0].dados and lote[2].chave_normalizada == CODIGO
    assert [r.preco for r in lote] == [PRECO_CAR, None, None, PRECO_CAR, None]
    assert lote.gasto == 2 * PRECO_CAR
    assert carapi_servidor.conta_de(client)["debitado"] == 2 * PRECO_CAR
    assert client.historico(endpoint="car")["total"] == 2
    df = lote.to_pandas() if _has("pandas") else None
    if df is not None:
        assert list(df["repetida"]) == [False, True, True, False, False]


def _has(module):
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_an_empty_balance_stops_the_batch_at_the_first_402(carapi_servidor):
    client = carapi_servidor.client(saldo="1.00")
    codes = CODIGOS_CAR[:6]
    with pytest.warns(UserWarning, match="saldo insuficiente"):
        lote = client.lote([sandbox.CAR_SEM_SALDO] + codes, progresso=False)
    assert lote[0].erro == "SALDO_INSUFICIENTE" and lote[0].sandbox, "the sandbox's 402 stops nothing"
    assert [r.status for r in lote][1:] == ["ok", "erro"] + ["nao_consultada"] * 4
    assert lote[2].erro == "SALDO_INSUFICIENTE"
    assert {r.erro for r in lote[3:]} == {"SALDO_INSUFICIENTE"}
    assert lote.parada is not None and codes[1] in lote.parada
    # The sandbox value, one 200 and one 402: nothing after the first 402 was sent.
    assert client.historico()["total"] == 2


def test_a_daily_limit_stops_the_batch_at_once(carapi_servidor):
    client = carapi_servidor.client(saldo="100", limite_diario=2)
    with pytest.warns(UserWarning, match="limite diario"):
        lote = client.lote(CODIGOS_CAR[:6], progresso=False)
    assert [r.status for r in lote] == ["ok", "ok", "erro"] + ["nao_consultada"] * 3
    assert lote[2].erro == "LIMITE_EXCEDIDO" and isinstance(lote[2].excecao, carapi.LimiteExcedido)
    assert lote[2].excecao.limite == "diario"
    assert client.historico()["total"] == 3
    assert lote.gasto == 2 * PRECO_CAR


def test_estimar_lote_counts_and_prices_without_buying(carapi_servidor, tmp_path):
    client = carapi.Client(
        carapi_servidor.base_url, carapi_servidor.conta(saldo="100"), acervo=tmp_path / "a.sqlite3",
        finalidade="auditoria", base_legal="execucao-contrato",
    )
    client.car(CODIGO)
    antes = client.historico()["total"]
    chaves = [CODIGO, CODIGO_2, CODIGO_2.lower(), "invalido", sandbox.CAR_BASICO, CODIGO_3]
    e = client.estimar_lote(chaves)
    assert e == {
        "consulta": "car", "linhas": 6, "validas": 5, "invalidas": 1, "unicas": 4, "repetidas": 1,
        "ja_na_saida": 0, "sandbox": 1, "no_acervo": 1, "a_comprar": 2, "preco": PRECO_CAR,
        "custo_maximo": 2 * PRECO_CAR, "saldo": Decimal("99.00"),
    }
    assert client.historico()["total"] == antes, "no lookup sent"
    completo = client.estimar_lote([CODIGO, CODIGO_2], consulta="completo")
    assert completo["a_comprar"] == 2 and completo["custo_maximo"] == 2 * PRECO_COMPLETO


def test_to_pandas_has_the_state_and_ibge_code_and_integer_http(client):
    pd = pytest.importorskip("pandas")
    df = client.lote([CODIGO, "invalido", sandbox.CAR_BASICO, CODIGO_INEXISTENTE], progresso=False).to_pandas()
    assert str(df["httpStatus"].dtype) == "Int64"
    def values(column):
        return [None if pd.isna(v) else v for v in df[column]]

    assert values("httpStatus") == [200, None, 200, 404]
    assert values("siglaUf") == ["DF", None, None, "DF"]
    assert values("municipioIbgeDoCodigo") == ["5300108", None, None, "5300108"]
    colunas = list(df.columns)
    assert colunas.index("siglaUf") == colunas.index("uf") + 1
    assert colunas.index("municipioIbgeDoCodigo") == colunas.index("municipio") + 1
    assert pd.api.types.is_float_dtype(df["preco"])


def test_owner_batches_give_one_row_per_property_and_no_map(client):
    pytest.importorskip("pandas")
    from carapi.testing import DOCUMENTO

    lote = client.lote([DOCUMENTO, sandbox.CPF_NAO_ENCONTRADO], consulta="proprietario", progresso=False)
    itens = lote[0].dados["itens"]
    assert len(itens) >= 2
    df = lote.to_pandas()
    assert len(df) == len(itens) + 1
    assert list(df["registroCar"][: len(itens)]) == [i["registroCar"] for i in itens]
    assert df["areaTotalHa"][: len(itens)].map(lambda v: isinstance(v, float)).all()
    assert list(df["siglaUf"][: len(itens)]) == [i["registroCar"][:2] for i in itens]
    assert df["codigoErro"].iloc[-1] == "CPF_CNPJ_NAO_ENCONTRADO"
    with pytest.raises(ValueError, match="posição"):
        lote.to_geopandas()


def test_to_excel_reads_back_with_titles_numbers_and_brasilia_times(client, tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    import datetime

    lote = client.lote([CODIGO, "invalido", CODIGO_2], progresso=False)
    caminho = lote.to_excel(tmp_path / "lote.xlsx")
    assert caminho == tmp_path / "lote.xlsx"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lote.xlsx"], "no temporary file left"
    ws = openpyxl.load_workbook(caminho).active
    titulos = [c.value for c in ws[1]]
    for t in ("Chave", "Situação", "HTTP", "Cobrado", "Preço (R$)", "Área total (ha)", "UF", "Sigla da UF",
              "Município IBGE (do código CAR)", "Data de cadastro"):
        assert t in titulos, (t, titulos)
    linha = {t: c.value for t, c in zip(titulos, ws[2])}
    assert linha["Chave"] == CODIGO and linha["HTTP"] == 200 and linha["Cobrado"] is True
    assert linha["Área total (ha)"] == pytest.approx(2.0131) and linha["Preço (R$)"] == 1.0
    # The registry's wall time 09/05/2014 17:16:10, Brasília, without a zone (Excel has none).
    assert linha["Data de cadastro"] == datetime.datetime(2014, 5, 9, 17, 16, 10)
    assert ws.freeze_panes == "A2" and ws.auto_filter.ref
    invalida = {t: c.value for t, c in zip(titulos, ws[3])}
    assert invalida["Situação"] == "erro" and invalida["HTTP"] is None
