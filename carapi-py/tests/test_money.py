"""What makes the SDK safe with money, from Python: a lost charged answer is never re-sent, the
spend cap refuses before sending, and a top-up is confirmed by reconciliation when the test
clock moves."""

from datetime import timedelta
from decimal import Decimal

import pytest

import carapi
from conftest import CODIGO, CODIGO_2, PRECO_CAR


def test_lost_charged_answer_is_not_resent(carapi_servidor):
    chave = carapi_servidor.conta(saldo="10")
    client = carapi.Client(base_url=carapi_servidor.base_url, api_key=chave)
    client.precos()  # the lost lookup is priced at once
    carapi_servidor.falhar("perder_resposta_apos_cobrar", rota="/v1/car/{codigoCar}")

    with pytest.raises(carapi.RespostaPerdida) as e:
        client.car(CODIGO)
    assert e.value.may_have_charged is True and e.value.is_retryable is False
    assert e.value.operacao == "car"

    # Sent once, charged once: the client did not send it again.
    h = client.historico(endpoint="car")
    assert h["total"] == 1 and h["itens"][0]["cobrado"] is True
    assert carapi_servidor.conta_de(chave)["debitado"] == PRECO_CAR
    assert client.gasto()["incerto"] == PRECO_CAR
    assert client.gasto()["confirmado"] == Decimal("0")

    r = client.resolver_incertos()
    assert r == {"cobradas": 1, "nao_cobradas": 0, "pendentes": 0}
    assert client.gasto()["confirmado"] == PRECO_CAR and client.gasto()["incerto"] == Decimal("0")


def test_spend_cap_refuses_before_sending(carapi_servidor):
    client = carapi_servidor.client(saldo="10", max_spend="2.00")
    assert client.max_spend == Decimal("2.00")
    client.car(CODIGO)
    client.car(CODIGO_2)
    with pytest.raises(carapi.LimiteDeGasto) as e:
        client.car(CODIGO)
    assert e.value.limite == Decimal("2.00") and e.value.preco == PRECO_CAR
    assert e.value.status is None and e.value.may_have_charged is False
    assert client.historico(endpoint="car")["total"] == 2, "the third lookup was never sent"
    assert client.saldo()["saldoReais"] == Decimal("8.00")
    assert client.gasto()["total"] == Decimal("2.00")


def test_topup_confirmed_by_reconciliation_after_the_clock_moves(carapi_servidor):
    chave = carapi_servidor.conta(saldo="0")
    client = carapi.Client(base_url=carapi_servidor.base_url, api_key=chave)
    criada = client.criar_recarga(Decimal("500"))
    antes = carapi_servidor.agora()

    # Paid at the bank, but the webhook never arrives.
    carapi_servidor.pagar(criada["recargaId"], sem_webhook=True)
    assert client.recarga(criada["recargaId"])["status"] == "Pendente"
    assert client.saldo()["saldoReais"] == Decimal("0.00")

    avanco = carapi_servidor.avancar(120)
    assert avanco["reconciliadas"] == 1
    assert avanco["agora"] - antes >= timedelta(seconds=120)

    fim = client.recarga(criada["recargaId"])
    assert fim["status"] == "Confirmado" and fim["pago"] is True
    assert client.saldo()["saldoReais"] == fim["totalCreditado"] >= Decimal("500")
    assert carapi_servidor.conta_de(chave)["razaoConsistente"] is True


def test_faults_are_counted_and_removable(carapi_servidor):
    client = carapi_servidor.client(saldo="10")
    id_ = carapi_servidor.falhar("erro", codigo="CAR_NAO_ENCONTRADO", rota="/v1/car/{codigoCar}", vezes=None)
    for _ in range(2):
        with pytest.raises(carapi.NaoEncontrado):
            client.car(CODIGO)
    assert carapi_servidor.remover_falha(id_) is True
    assert client.car(CODIGO)["dados"]["codigoCar"] == CODIGO
    with pytest.raises(ValueError):
        carapi_servidor.falhar("erro", codigo="ERRO_INTERNO", rota="/v1/nao/existe")
