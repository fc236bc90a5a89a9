"""Shared values of the Python suite. The suite runs against the real reference server
(`carapi.testing.ServidorTeste`, in-process, over loopback sockets); the fixture
`carapi_servidor` comes from the package's pytest plugin."""

from decimal import Decimal

import pytest

# Bundled SICAR records (carapi-loader/data/sicar/imoveis_df.csv).
CODIGO = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"
CODIGO_2 = "DF-5300108-4DC991CE146D4B03A9E1BC5E97B5D199"
CODIGO_3 = "DF-5300108-D1D4E6B4201C4408BB9109F4A5665083"
# A bundled record from the public WFS with its polygon: it has a real position (the CSV records
# above carry none).
CODIGO_COM_POSICAO = "DF-5300108-0000AE7221F4458582BE077E36495213"
# Well formed, not in the base.
CODIGO_INEXISTENTE = "DF-5300108-00000000000000000000000000000ABC"

# The current price table (docs/contrato.md, "Prices"), BRL.
PRECO_CAR = Decimal("1.00")
PRECO_COMPLETO = Decimal("2.30")
PRECO_PROPRIETARIO = Decimal("2.60")
PRECO_RECIBO = Decimal("11.00")


@pytest.fixture
def client(carapi_servidor):
    """A client of a new account with R$ 100,00."""
    return carapi_servidor.client(saldo="100")
