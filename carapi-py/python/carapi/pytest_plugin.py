"""pytest plugin of `carapi` (registered through the `pytest11` entry point): the fixture
`carapi_servidor`, a started `carapi.testing.ServidorTeste` per test, stopped after it.

    def test_minha_analise(carapi_servidor):
        client = carapi_servidor.client(saldo="10")
        r = client.car("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47")
        assert r["dados"]["uf"] == "DF"
        assert client.saldo()["saldoReais"] == Decimal("9.00")
"""

from __future__ import annotations

from typing import Iterator

import pytest

from .testing import ServidorTeste


@pytest.fixture
def carapi_servidor() -> Iterator[ServidorTeste]:
    """A fresh `ServidorTeste` (in-memory database, clock at the system time, no faults)."""
    srv = ServidorTeste()
    try:
        yield srv
    finally:
        srv.encerrar()
