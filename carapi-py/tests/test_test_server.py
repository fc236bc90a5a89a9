"""The test double's surface: which records it holds, the key of a test client, accounts given
as a key or a client, routes named as the history names them, limiters off for load tests."""

import threading
from decimal import Decimal

import pytest

import carapi
from carapi import testing
from carapi.testing import ServidorTeste
from conftest import CODIGO


def test_the_records_it_holds_are_listed_and_answer(client):
    assert len(testing.IMOVEIS) == 80 == len(set(testing.CODIGOS_CAR))
    assert testing.CODIGO_CAR in testing.CODIGOS_CAR and testing.CODIGO_SEM_RECIBO in testing.CODIGOS_CAR
    assert {i["uf"] for i in testing.IMOVEIS} >= {"DF", "MT", "SP"}
    for codigo in testing.CODIGOS_CAR[::20]:
        assert client.car(codigo)["dados"]["codigoCar"] == codigo
    sem_recibo = [i for i in testing.IMOVEIS if not i["recibo"]]
    assert testing.CODIGO_SEM_RECIBO in [i["codigoCar"] for i in sem_recibo]
    with pytest.raises(carapi.NaoEncontrado) as e:
        client.recibo(testing.CODIGO_SEM_RECIBO)
    assert e.value.codigo == "RECIBO_NAO_ENCONTRADO"
    dono = client.proprietario(testing.DOCUMENTO)
    assert dono["total"] >= 2
    assert {i["registroCar"] for i in dono["itens"]} <= set(testing.CODIGOS_CAR)


def test_a_test_client_has_its_key_and_accounts_take_a_key_or_a_client(carapi_servidor):
    client = carapi_servidor.client(saldo="5")
    assert isinstance(client, testing.ClienteTeste) and isinstance(client, carapi.Client)
    outro = carapi.Client(base_url=carapi_servidor.base_url, api_key=client.api_key)
    assert outro.saldo()["saldoReais"] == Decimal("5.00"), "the same account"
    assert carapi_servidor.conta_de(client) == carapi_servidor.conta_de(client.api_key)
    with pytest.raises(TypeError, match="não um id"):
        carapi_servidor.conta_de(carapi_servidor.conta_de(client)["contaId"])


def test_fault_routes_by_history_name_or_short_name_and_account_by_client(carapi_servidor):
    alvo = carapi_servidor.client(saldo="10")
    vizinho = carapi_servidor.client(saldo="10")
    # The history's name of the route, as `historico()["itens"][i]["endpoint"]` shows it.
    carapi_servidor.falhar("erro", codigo="ERRO_INTERNO", rota="/v1/car/{codigo}", conta=alvo)
    with pytest.raises(carapi.ApiError) as e:
        alvo.car(CODIGO)
    assert e.value.codigo == "ERRO_INTERNO"
    assert vizinho.car(CODIGO)["success"] is True
    carapi_servidor.falhar("erro", codigo="CAR_NAO_ENCONTRADO", rota="completo", conta=alvo.api_key)
    with pytest.raises(carapi.NaoEncontrado):
        alvo.car_completo(CODIGO)
    assert alvo.car_completo(CODIGO)["success"] is True, "vezes=1 by default"
    assert testing.ROTAS["/v1/proprietario/{cpf_cnpj}"] == "/v1/proprietario/{cpfCnpj}"


def test_load_tests_turn_both_limiters_off():
    with ServidorTeste(limite_taxa=None) as srv:
        client = srv.client(saldo="0", rate_limit=None)
        erros = []

        def varios():
            for _ in range(15):
                try:
                    client.saldo()
                except carapi.ApiError as e:  # pragma: no cover - the failure being tested
                    erros.append(e)

        threads = [threading.Thread(target=varios) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert erros == []
