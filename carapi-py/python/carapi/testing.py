"""`ServidorTeste`: the reference server in-process as a stateful test double (the Rust
`carapi_server::testing::ServidorTeste`): a real server on `127.0.0.1:<free port>` over an
in-memory database with the bundled CAR records, a movable clock, faults on demand, and payment
of PIX top-ups without a bank.

    from carapi.testing import ServidorTeste

    with ServidorTeste() as srv:
        client = srv.client(saldo="50")
        srv.falhar("perder_resposta_apos_cobrar", rota="/v1/car/{codigoCar}")
        ...
        srv.avancar(120)             # reconciliation runs

With pytest, the fixture `carapi_servidor` gives a started `ServidorTeste` per test.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Optional, Union

from . import Client
from ._carapi import ServidorTeste as _ServidorNativo

__all__ = ["ServidorTeste"]

Dinheiro = Union[Decimal, int, str]


class ServidorTeste(_ServidorNativo):
    """A started test server; a context manager that stops it on exit.

    Args:
        limite_taxa: requests per second per key (default 10, the contract's); None turns the
            server's limiter off.
        banco: another database URL (`postgres://...`); default in-memory SQLite.

    Methods (see the stubs for full signatures): `conta(...) -> api_key`, `client(...)`,
    `falhar(tipo, rota=..., vezes=..., conta=..., **campos) -> id`, `remover_falha(id)`,
    `limpar_falhas()`, `avancar(segundos)`, `agora()`, `pagar(recarga_id, sem_webhook=False)`,
    `conta_de(api_key)`, `encerrar()`.
    """

    def __enter__(self) -> "ServidorTeste":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.encerrar()

    def client(
        self,
        saldo: Optional[Dinheiro] = None,
        *,
        max_spend: Optional[Dinheiro] = None,
        timeout: Optional[float] = None,
        rate_limit: Optional[int] = 10,
        **conta: Any,
    ) -> Client:
        """A `carapi.Client` for a new account of this server (`conta(saldo=..., **conta)`),
        with the client options given."""
        api_key = self.conta(saldo, **conta)
        return Client(
            base_url=self.base_url,
            api_key=api_key,
            max_spend=max_spend,
            timeout=timeout,
            rate_limit=rate_limit,
        )
