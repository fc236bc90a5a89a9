"""`lote`: one result per key in input order, to pandas and geopandas."""

from decimal import Decimal

import pytest

import carapi
from carapi import sandbox
from conftest import CODIGO, CODIGO_2, CODIGO_3, CODIGO_COM_POSICAO, CODIGO_INEXISTENTE, PRECO_COMPLETO

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
    assert df[df["chave"] == "invalido"].iloc[0]["erro"] == "CODIGO_CAR_INVALIDO"


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
