import pytest
import carapi

def test_lookup_is_charged_once(carapi_servidor):
    client = carapi_servidor.client(saldo="10")
    carapi_servidor.falhar("perder_resposta_apos_cobrar", rota="/v1/car/{codigoCar}")
    with pytest.raises(carapi.RespostaPerdida):
        client.car("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47")
    assert client.historico()["total"] == 1          # sent once, never re-sent

def test_topup_confirmed_by_reconciliation(carapi_servidor):
    client = carapi_servidor.client(saldo="0")
    recarga = client.criar_recarga(500)
    carapi_servidor.pagar(recarga["recargaId"], sem_webhook=True)
    carapi_servidor.avancar(120)                      # the reconciliation pass runs
    assert client.recarga(recarga["recargaId"])["status"] == "Confirmado"
