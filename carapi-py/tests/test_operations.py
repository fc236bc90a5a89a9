"""Every operation of the contract from Python against the reference server."""

from datetime import datetime
from decimal import Decimal

import carapi
from carapi import sandbox
from conftest import (
    CODIGO,
    PRECO_CAR,
    PRECO_COMPLETO,
    PRECO_PROPRIETARIO,
    PRECO_RECIBO,
)


def test_lookups_charge_the_prices_and_keep_the_contracts_keys(carapi_servidor, client):
    basico = client.car(CODIGO)
    # `sandbox` is present (and true) only for reserved values (docs/contrato.md).
    assert basico["success"] is True and "sandbox" not in basico
    assert basico["dados"]["codigoCar"] == CODIGO
    # The registry's string, exactly as the contract sends it.
    assert basico["dados"]["areaTotalHa"] == "2,0131"
    assert isinstance(basico["dataConsulta"], datetime)
    assert basico["dataConsulta"].tzinfo is not None

    completo = client.car_completo(CODIGO.lower())
    assert completo["dados"]["codigoCar"] == CODIGO
    documento = completo["dados"]["proprietariosCpfs"].split(",")[0].strip()

    dono = client.proprietario(documento)
    assert any(i["registroCar"] == CODIGO for i in dono["itens"])
    assert dono["total"] == len(dono["itens"]) and dono["truncado"] is False

    pdf = client.recibo(CODIGO)
    assert isinstance(pdf, bytes) and pdf.startswith(b"%PDF-")

    esperado = PRECO_CAR + PRECO_COMPLETO + PRECO_PROPRIETARIO + PRECO_RECIBO
    saldo = client.saldo()
    assert saldo["saldoReais"] == Decimal("100") - esperado
    assert isinstance(saldo["saldoReais"], Decimal)
    assert saldo["precos"]["carBasico"] == PRECO_CAR
    assert saldo["usoHoje"] == {"requisicoes": 4, "gasto": esperado, "erros": 0}
    assert client.gasto()["confirmado"] == esperado
    assert client.gasto()["incerto"] == Decimal("0")

    uso = client.uso()
    assert uso["periodoDias"] == 30
    assert sum(i["valorTotal"] for i in uso["itens"]) == esperado

    h = client.historico()
    assert h["total"] == 4 and h["itens"][0]["endpoint"] == "/v1/car/{codigo}/recibo"
    assert isinstance(h["itens"][0]["data"], datetime)
    assert h["itens"][0]["saldoDepois"] == saldo["saldoReais"]
    assert client.historico(endpoint="car")["total"] == 1
    assert client.historico(status="erro")["total"] == 0
    assert client.historico(busca=CODIGO[:12], size=1)["totalPaginas"] >= 3


def test_receipt_streams_to_a_file(client, tmp_path):
    info = client.recibo_para_arquivo(CODIGO, tmp_path)
    assert info["filename"] == f"{CODIGO}.pdf"
    conteudo = (tmp_path / info["filename"]).read_bytes()
    assert conteudo.startswith(b"%PDF-") and len(conteudo) == info["bytes"]


def test_sandbox_values_are_free_and_marked(client):
    r = client.car(sandbox.CAR_BASICO)
    assert r["sandbox"] is True
    assert client.car_completo(sandbox.CAR_BASICO)["sandbox"] is True
    dois = client.proprietario(sandbox.CPF_DOIS_CARS)
    assert dois["sandbox"] is True and len(dois["itens"]) == 2 and not dois["truncado"]
    assert client.proprietario(sandbox.CNPJ_TRUNCADO)["truncado"] is True
    assert client.recibo(sandbox.CAR_BASICO).startswith(b"%PDF-")
    assert client.saldo()["saldoReais"] == Decimal("100.00")
    assert client.gasto()["total"] == Decimal("0")


def test_limits_merge_patch(client):
    assert client.limites()["limiteDiarioRequisicoes"] is None
    l = client.atualizar_limites(diario=50, mensal=Decimal("250.50"))
    assert (l["limiteDiarioRequisicoes"], l["limiteMensalReais"]) == (50, Decimal("250.50"))
    # Omitted keeps, None removes.
    l = client.atualizar_limites(mensal=None)
    assert (l["limiteDiarioRequisicoes"], l["limiteMensalReais"]) == (50, None)
    l = client.atualizar_limites(diario=None)
    assert (l["limiteDiarioRequisicoes"], l["limiteMensalReais"]) == (None, None)
    s = client.saldo()
    assert (s["limiteDiarioRequisicoes"], s["limiteMensalReais"]) == (None, None)


def test_topup_tiers_creation_and_listing(carapi_servidor):
    client = carapi_servidor.client(saldo="0")
    faixas = client.faixas_recarga(Decimal("1000"))
    assert faixas["valorMinimo"] == Decimal("500")
    preview = faixas["preview"]
    assert preview["totalCreditado"] == preview["valorPago"] + preview["valorBonus"]

    criada = client.criar_recarga(1000)
    assert criada["status"] == "Pendente" and criada["reaproveitada"] is False
    de_novo = client.criar_recarga("1000")
    assert de_novo["reaproveitada"] is True and de_novo["recargaId"] == criada["recargaId"]

    carapi_servidor.pagar(criada["recargaId"])
    fim = client.aguardar_recarga(criada["recargaId"], timeout=60)
    assert fim["status"] == "Confirmado" and fim["pago"] is True
    assert fim["saldoAtual"] == preview["totalCreditado"]
    assert client.recarga(criada["recargaId"])["status"] == "Confirmado"

    lista = client.recargas(status="Confirmado")
    assert lista["total"] == 1
    assert isinstance(lista["itens"][0]["dataConfirmacao"], datetime)
    assert client.recargas(status="Pendente")["total"] == 0


def test_client_reads_the_environment(carapi_servidor, monkeypatch):
    chave = carapi_servidor.conta(saldo="5")
    monkeypatch.setenv("CARAPI_BASE_URL", carapi_servidor.base_url)
    monkeypatch.setenv("CARAPI_API_KEY", chave)
    client = carapi.Client()
    assert client.base_url == carapi_servidor.base_url
    assert client.saldo()["saldoReais"] == Decimal("5.00")


def test_async_client_overlaps_calls(carapi_servidor):
    import asyncio

    chave = carapi_servidor.conta(saldo="10")

    async def principal():
        client = carapi.AsyncClient(base_url=carapi_servidor.base_url, api_key=chave)
        r = await asyncio.gather(client.car(CODIGO), client.saldo(), client.car(sandbox.CAR_BASICO))
        assert r[0]["dados"]["codigoCar"] == CODIGO and r[2]["sandbox"] is True
        itens = await client.historico_todo(size=1)
        return client, itens

    client, itens = asyncio.run(principal())
    assert len(itens) == 1 and client.gasto()["confirmado"] == PRECO_CAR


def test_sandbox_values_skip_the_clients_rate_limiter(carapi_servidor):
    import time

    # One request per second, the slowest limiter: 200 limited lookups would need 199 s at
    # least (the contract exempts the sandbox values from every limit). The bound below is that
    # impossibility, not a speed.
    client = carapi_servidor.client(saldo="0", rate_limit=1)
    inicio = time.monotonic()
    for _ in range(100):
        assert client.car(sandbox.CAR_BASICO)["sandbox"] is True
        assert client.proprietario(sandbox.CPF_DOIS_CARS)["sandbox"] is True
    assert time.monotonic() - inicio < 100
    assert client.gasto()["total"] == Decimal("0")
