"""carapi for Python: the charge-safe carapi SDK as a native extension.

`Client` is the Rust `carapi_sdk::Client` with a synchronous face: every operation of the
contract (docs/contrato.md) with the SDK's names, results as dicts with the contract's camelCase
keys (money as `decimal.Decimal`, timestamps as timezone-aware `datetime`), errors as the
exceptions of `carapi.erros`. A lookup whose answer was lost after it was sent is never sent
again by the client (`RespostaPerdida`), and `max_spend` caps what a client may spend.

    import carapi
    client = carapi.Client()            # CARAPI_BASE_URL, CARAPI_API_KEY
    r = client.car("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47")
    r["dados"]["areaTotalHa"]           # the registry's string, e.g. "20,1310"
    client.gasto()["confirmado"]        # Decimal('1.00')

`carapi.testing.ServidorTeste` runs the reference server in-process as a test double; the
pytest fixture `carapi_servidor` gives one per test.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable, Optional, Union

from . import sandbox
from ._carapi import SDK_VERSION
from ._carapi import Client as _ClientNativo
from .erros import (
    ApiError,
    ConfiguracaoInvalida,
    EntradaInvalida,
    ErroDeRede,
    LimiteDeGasto,
    LimiteExcedido,
    NaoEncontrado,
    RespostaPerdida,
    SaldoInsuficiente,
    TempoEsgotado,
    TokenInvalido,
)
from .lote import Lote, ResultadoLote

__version__ = SDK_VERSION

__all__ = [
    "Client",
    "AsyncClient",
    "Lote",
    "ResultadoLote",
    "sandbox",
    "ApiError",
    "ConfiguracaoInvalida",
    "EntradaInvalida",
    "ErroDeRede",
    "LimiteDeGasto",
    "LimiteExcedido",
    "NaoEncontrado",
    "RespostaPerdida",
    "SaldoInsuficiente",
    "TempoEsgotado",
    "TokenInvalido",
]


class Client(_ClientNativo):
    """Synchronous client of the carapi `/v1` API (the Rust `carapi_sdk::Client`).

    Args:
        base_url: the service's address without `/v1`; default `$CARAPI_BASE_URL`.
        api_key: the API key; default `$CARAPI_API_KEY`.
        max_spend: cap on what this client may spend on lookups, BRL (`Decimal`, `int` or
            `str`; never `float`): a lookup that could pass it raises `LimiteDeGasto` before
            it is sent.
        timeout: seconds per request (default 30).
        rate_limit: requests per second this client sends at most (default 10, the contract's
            limit); None turns the client's limiter off.
        poll_interval: seconds between reads of `aguardar_recarga` (5 or more).

    Thread-safe: clones share nothing in Python, but one client may be used from many threads
    (the GIL is released while a request waits).
    """

    def lote(
        self,
        chaves: Iterable[str],
        consulta: str = "car",
        max_custo: Optional[Union[Decimal, int, str]] = None,
        progresso: bool = True,
    ) -> Lote:
        """Looks up every key in `chaves` with `consulta` (`"car"`, `"completo"` or
        `"proprietario"`) and returns a `Lote` with one `ResultadoLote` per key, in input order.

        An error of a key (invalid code, not found, lost answer) is kept in its entry; the batch
        goes on. `max_custo` (BRL) stops sending once the batch's spend plus the next lookup's
        price would pass it (the remaining keys get status `"nao_consultada"`). `progresso`
        shows a progress bar on long batches (tqdm when installed).
        """
        from .lote import executar

        return executar(self, chaves, consulta, max_custo, progresso)


def __getattr__(nome: str) -> Any:
    # `carapi.AsyncClient` without importing asyncio for every user of the synchronous client.
    if nome == "AsyncClient":
        from .aio import AsyncClient

        return AsyncClient
    raise AttributeError(f"module 'carapi' has no attribute {nome!r}")
