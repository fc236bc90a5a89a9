"""Mistakes an analyst makes, one per line marked `# ERRO`: mypy --strict and pyright must report
every marked line (test_typing.py). Never run."""

from __future__ import annotations

from decimal import Decimal

import carapi
from carapi.testing import ServidorTeste


async def enganos(client: carapi.Client, ac: carapi.AsyncClient, srv: ServidorTeste) -> None:
    client.lote(["DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"], consulta="carr")  # ERRO
    await ac.historico(pagina=2)  # ERRO
    await ac.lote(["x"], consulta="recibo")  # ERRO
    client.historico(status="ok")  # ERRO
    client.recargas(status="pago")  # ERRO
    client.atualizar_limites(diaria=10)  # ERRO
    await ac.atualizar_limites(mensal=1.5)  # ERRO
    carapi.Client(max_spend=10.5)  # ERRO
    area: Decimal = client.car("x")["dados"]["areaTotalHa"]  # ERRO
    client.car("x")["dados"]["area"]  # ERRO
    saldo: str = (await ac.saldo())["saldoReais"]  # ERRO
    for r in client.lote(["x"]):
        r.valor  # ERRO
    ac.car("x")["dados"]  # ERRO
    srv.falhar("explodir")  # ERRO
    srv.client(saldo=1.0)  # ERRO
    acervo = carapi.Acervo()
    acervo.exportar(formato="xml")  # ERRO
    acervo.expurgar("123.456.789-09")  # ERRO
    acervo.listar()[0]["comprado"]  # ERRO
    acervo.listar()[0]["bought_at"]  # ERRO
    client.estimar_lote(["x"], consulta="recibo")  # ERRO
    client.lote(["x"]).to_excel(10)  # ERRO
    print(area, saldo)
