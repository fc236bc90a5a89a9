"""Each exception class, raised by the real server (or locally before any request)."""

from decimal import Decimal

import pytest

import carapi
from carapi import sandbox
from conftest import CODIGO, CODIGO_INEXISTENTE


def test_every_class_is_an_api_error():
    for classe in (
        carapi.EntradaInvalida,
        carapi.TokenInvalido,
        carapi.SaldoInsuficiente,
        carapi.NaoEncontrado,
        carapi.LimiteExcedido,
        carapi.ErroDeRede,
        carapi.RespostaPerdida,
        carapi.LimiteDeGasto,
        carapi.TempoEsgotado,
        carapi.ConfiguracaoInvalida,
    ):
        assert issubclass(classe, carapi.ApiError)
    assert issubclass(carapi.RespostaPerdida, carapi.ErroDeRede)


def test_invalid_input_is_refused_locally_before_any_request(client):
    with pytest.raises(carapi.EntradaInvalida) as e:
        client.car("DF-123")
    assert e.value.codigo == "CODIGO_CAR_INVALIDO" and e.value.status is None
    with pytest.raises(carapi.EntradaInvalida) as e:
        client.proprietario("529.982.247-24")
    assert e.value.codigo == "CPF_CNPJ_INVALIDO"
    assert client.historico()["total"] == 0, "nothing reached the server"


def test_server_400_is_entrada_invalida(client):
    with pytest.raises(carapi.EntradaInvalida) as e:
        client.atualizar_limites(diario=100_001)
    assert (e.value.status, e.value.codigo) == (400, "LIMITE_INVALIDO")
    assert not e.value.may_have_charged and not e.value.is_retryable
    with pytest.raises(carapi.EntradaInvalida) as e:
        client.criar_recarga(100)
    assert e.value.codigo == "VALOR_MINIMO"


def test_not_found_real_and_sandbox(client):
    with pytest.raises(carapi.NaoEncontrado) as e:
        client.car(CODIGO_INEXISTENTE)
    assert (e.value.status, e.value.codigo, e.value.sandbox) == (404, "CAR_NAO_ENCONTRADO", False)
    with pytest.raises(carapi.NaoEncontrado) as e:
        client.car(sandbox.CAR_NAO_EXISTE)
    assert e.value.sandbox is True
    with pytest.raises(carapi.NaoEncontrado) as e:
        client.proprietario(sandbox.CPF_NAO_ENCONTRADO)
    assert e.value.codigo == "CPF_CNPJ_NAO_ENCONTRADO"
    assert client.saldo()["saldoReais"] == Decimal("100.00"), "errors never debit"


def test_insufficient_balance_says_price_balance_and_shortfall(carapi_servidor):
    client = carapi_servidor.client(saldo="0.50")
    with pytest.raises(carapi.SaldoInsuficiente) as e:
        client.car(CODIGO)
    assert (e.value.status, e.value.codigo) == (402, "SALDO_INSUFICIENTE")
    assert str(e.value).startswith("402 SALDO_INSUFICIENTE: ")
    assert (e.value.preco, e.value.saldo, e.value.falta) == (Decimal("1.00"), Decimal("0.50"), Decimal("0.50"))
    with pytest.raises(carapi.SaldoInsuficiente) as e:
        client.car_completo(CODIGO)
    assert (e.value.preco, e.value.falta) == (Decimal("2.30"), Decimal("1.80"))
    with pytest.raises(carapi.SaldoInsuficiente) as e:
        client.car(sandbox.CAR_SEM_SALDO)
    assert e.value.sandbox is True
    assert (e.value.preco, e.value.saldo, e.value.falta) == (None, None, None), "the sandbox lacks nothing"
    assert client.saldo()["saldoReais"] == Decimal("0.50")


def test_no_attribute_repeats_the_message(client):
    with pytest.raises(carapi.NaoEncontrado) as e:
        client.car(CODIGO_INEXISTENTE)
    assert not hasattr(e.value, "detalhes")
    textos = [v for k, v in vars(e.value).items() if isinstance(v, str) and k != "mensagem"]
    assert str(e.value) not in textos


def test_every_error_has_a_code_and_a_lost_answer_matches_its_lote_row(carapi_servidor):
    client = carapi_servidor.client(saldo="10", max_spend="1.00")
    carapi_servidor.falhar("perder_resposta_apos_cobrar", rota="car")
    with pytest.raises(carapi.RespostaPerdida) as perdida:
        client.car(CODIGO)
    with pytest.raises(carapi.LimiteDeGasto) as gasto:
        client.car(CODIGO)
    assert (perdida.value.codigo, gasto.value.codigo) == ("RESPOSTA_PERDIDA", "LIMITE_DE_GASTO")
    outro = carapi_servidor.client(saldo="10")
    carapi_servidor.falhar("perder_resposta_apos_cobrar", rota="car", conta=outro)
    assert outro.lote([CODIGO], progresso=False).resultados[0].erro == perdida.value.codigo


def test_invalid_token(carapi_servidor):
    client = carapi.Client(base_url=carapi_servidor.base_url, api_key="car_" + "0" * 64)
    with pytest.raises(carapi.TokenInvalido) as e:
        client.saldo()
    assert e.value.status == 401


def test_daily_limit_is_limite_excedido_with_scope_and_retry_after(carapi_servidor):
    client = carapi_servidor.client(saldo="10", limite_diario=1)
    client.car(CODIGO)
    with pytest.raises(carapi.LimiteExcedido) as e:
        client.car(CODIGO)
    assert (e.value.status, e.value.codigo, e.value.limite) == (429, "LIMITE_EXCEDIDO", "diario")
    assert e.value.retry_after is not None and e.value.retry_after > 0
    assert e.value.is_retryable is False
    assert client.saldo()["saldoReais"] == Decimal("9.00")


def test_monthly_limit_fault_reports_its_scope(carapi_servidor):
    client = carapi_servidor.client(saldo="10")
    carapi_servidor.falhar("erro", codigo="LIMITE_EXCEDIDO", limite="mensal", retry_after=86_400 * 3, rota="/v1/car/{codigoCar}")
    with pytest.raises(carapi.LimiteExcedido) as e:
        client.car(CODIGO)
    assert e.value.limite == "mensal" and e.value.retry_after == 86_400 * 3


def test_transport_failure_is_erro_de_rede(carapi_servidor):
    url = carapi_servidor.base_url
    carapi_servidor.encerrar()
    client = carapi.Client(base_url=url, api_key="car_" + "0" * 64, timeout=2)
    with pytest.raises(carapi.ErroDeRede) as e:
        client.saldo()
    assert not isinstance(e.value, carapi.RespostaPerdida) and e.value.codigo == "ERRO_DE_REDE"
    assert e.value.may_have_charged is False and e.value.status is None


def test_server_error_is_api_error(carapi_servidor):
    client = carapi_servidor.client(saldo="10")
    carapi_servidor.falhar("erro", codigo="ERRO_INTERNO", rota="/v1/limites", vezes=None)
    with pytest.raises(carapi.ApiError) as e:
        client.limites()
    assert type(e.value) is carapi.ApiError
    assert (e.value.status, e.value.codigo) == (500, "ERRO_INTERNO")


def test_waiting_on_a_topup_gives_up_with_tempo_esgotado(carapi_servidor):
    client = carapi_servidor.client(saldo="0")
    criada = client.criar_recarga(500)
    with pytest.raises(carapi.TempoEsgotado) as e:
        client.aguardar_recarga(criada["recargaId"], timeout=1)
    assert e.value.recarga_id == criada["recargaId"] and e.value.ultimo_status == "Pendente"


def test_misconfiguration_and_float_money():
    with pytest.raises(carapi.ConfiguracaoInvalida):
        carapi.Client(base_url="ftp://127.0.0.1", api_key="k")
    with pytest.raises(TypeError):
        carapi.Client(base_url="http://127.0.0.1:9", api_key="k", max_spend=1.5)


def test_a_client_without_settings_names_the_python_argument_and_the_variable(monkeypatch):
    monkeypatch.delenv("CARAPI_BASE_URL", raising=False)
    monkeypatch.delenv("CARAPI_API_KEY", raising=False)
    with pytest.raises(carapi.ConfiguracaoInvalida) as e:
        carapi.Client()
    assert "base_url=" in str(e.value) and "CARAPI_BASE_URL" in str(e.value)
    assert "ClientBuilder" not in str(e.value)
    with pytest.raises(carapi.ConfiguracaoInvalida) as e:
        carapi.Client("http://127.0.0.1:9")
    assert "api_key=" in str(e.value) and "CARAPI_API_KEY" in str(e.value)
    assert "ClientBuilder" not in str(e.value)


def test_a_base_url_ending_in_v1_is_refused_with_the_fix(carapi_servidor):
    with pytest.raises(carapi.ConfiguracaoInvalida) as e:
        carapi.Client(carapi_servidor.base_url + "/v1/", "k")
    assert "sem /v1" in str(e.value) and repr(carapi_servidor.base_url) in str(e.value).replace('"', "'")


def test_pasted_car_codes_are_read_and_free_text_is_masked(client):
    pasted = CODIGO.replace("-", " ", 1).replace("-", "\u2013")
    assert client.car(pasted)["dados"]["codigoCar"] == CODIGO
    assert client.car(CODIGO.replace("-", "").lower())["dados"]["codigoCar"] == CODIGO
    assert [i["chaveConsulta"] for i in client.historico()["itens"]] == [CODIGO, CODIGO]
    misplaced = CODIGO[:9] + "-" + CODIGO[9:].replace("-", "", 1)
    with pytest.raises(carapi.EntradaInvalida) as e:
        client.car(misplaced)
    assert misplaced in str(e.value), "a CAR-like value is echoed as typed"
    spaced = "DF 5300108 XYZ"
    with pytest.raises(carapi.EntradaInvalida) as e:
        client.car(spaced)
    assert spaced in str(e.value), "the pasted forms are CAR-like too"
    with pytest.raises(carapi.EntradaInvalida) as e:
        client.car("Fulano de Tal")
    assert "Fulano" not in str(e.value) and "****** ** ***" in str(e.value)
