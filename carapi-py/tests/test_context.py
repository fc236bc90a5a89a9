"""`with` and `async with` close the client; a closed client refuses calls and keeps its spend."""

import asyncio
from decimal import Decimal

import pytest

import carapi
from conftest import CODIGO, PRECO_CAR


def test_with_closes_the_client(carapi_servidor):
    chave = carapi_servidor.conta(saldo="10")
    with carapi.Client(base_url=carapi_servidor.base_url, api_key=chave) as client:
        assert isinstance(client, carapi.Client) and not client.fechado
        client.car(CODIGO)
    assert client.fechado
    with pytest.raises(RuntimeError, match="fechado"):
        client.saldo()
    assert client.gasto()["confirmado"] == PRECO_CAR, "the spend survives the close"
    assert "fechado" in repr(client) and client.base_url == carapi_servidor.base_url
    client.close()  # again: nothing happens


def test_with_closes_on_an_exception_and_lets_it_through(carapi_servidor):
    chave = carapi_servidor.conta(saldo="10")
    with pytest.raises(KeyError):
        with carapi.Client(base_url=carapi_servidor.base_url, api_key=chave) as client:
            raise KeyError("x")
    assert client.fechado


def test_async_with_closes_the_client(carapi_servidor):
    chave = carapi_servidor.conta(saldo="10")

    async def principal():
        async with carapi.AsyncClient(base_url=carapi_servidor.base_url, api_key=chave) as ac:
            assert isinstance(ac, carapi.AsyncClient)
            await ac.car(CODIGO)
        assert ac.fechado
        with pytest.raises(RuntimeError, match="fechado"):
            await ac.saldo()
        return ac.gasto()

    assert asyncio.run(principal())["confirmado"] == PRECO_CAR
    assert carapi_servidor.conta_de(chave)["saldo"] == Decimal("9.00")
