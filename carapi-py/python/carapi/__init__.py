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

`carapi.AsyncClient` has the same methods as coroutines. `carapi.testing.ServidorTeste` runs
the reference server in-process as a test double; the pytest fixture `carapi_servidor` gives one
per test.
"""

from __future__ import annotations

import atexit
import os
from decimal import Decimal
from typing import Iterable, Optional, Union

from . import sandbox
from ._carapi import SDK_VERSION
from ._carapi import fechar_todos as _fechar_todos
from ._carapi import Acervo
from ._carapi import Client as _ClientNativo
from .erros import (
    ApiError,
    Cancelado,
    ConfiguracaoInvalida,
    ErroDeAcervo,
    EntradaInvalida,
    ErroDeRede,
    LimiteDeGasto,
    LimiteExcedido,
    NaoEncontrado,
    RespostaPerdida,
    SaidaEmUso,
    SaldoInsuficiente,
    TempoEsgotado,
    TokenInvalido,
)
from .lote import Consulta, Lote, LoteInterrompido, ResultadoLote
from .tipos import EstimativaLote

__version__ = SDK_VERSION

__all__ = [
    "Client",
    "Acervo",
    "AsyncClient",
    "Lote",
    "LoteInterrompido",
    "ResultadoLote",
    "Consulta",
    "sandbox",
    "ApiError",
    "Cancelado",
    "ConfiguracaoInvalida",
    "ErroDeAcervo",
    "EntradaInvalida",
    "ErroDeRede",
    "LimiteDeGasto",
    "LimiteExcedido",
    "NaoEncontrado",
    "RespostaPerdida",
    "SaidaEmUso",
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
        acervo: keep every charged 200 in the archive of paid answers (the CLI's
            `carapi acervo`): a path (str or os.PathLike) of an SQLite file, True for the data
            directory's file, or a team's PostgreSQL URL ("postgres://...", in an extension
            built with the `archive-postgres` feature). `car`, `car_completo` and
            `proprietario` then answer from it while fresh (no request, no charge) and their
            dict gains `origem` ("api" or "acervo") and `compradoEm` (aware datetime); `lote`
            rows and `to_pandas()` gain the same columns. `client.acervo` is the archive with
            its LGPD tools (`carapi.Acervo`: `titular`, `expurgar`, `verificar`, `exportar`).
        finalidade: the purpose declared with each archived lookup (LGPD art. 6, I); required
            with `acervo`.
        base_legal: the LGPD hypothesis (art. 7 or 11) as the CLI's `--base-legal` spells it
            ("consentimento", "obrigacao-legal", "execucao-contrato", "interesse-legitimo",
            "protecao-credito", ...); required with `acervo`.
        idade_maxima: the oldest archived answer reused, in days or a `datetime.timedelta`;
            default 30 days; 0 buys every time.

    Raises:
        ConfiguracaoInvalida: no base URL or key, or a URL that is not http(s).
        TypeError: `max_spend` given as `float`.
        ValueError: `acervo` without `finalidade` or `base_legal` (named in the message), an
            unknown `base_legal`, a negative `idade_maxima`; before any request.
        OSError: the archive cannot be opened.

    One client may be used from many threads (the GIL is released while a request waits).
    `with carapi.Client() as client:` closes it at the end of the block (`close()`).

    Processes: after `os.fork` (multiprocessing's `fork` start method, the default on Linux
    before Python 3.14) a child makes its own runtime and connections on its first call, and
    the parent's client keeps working. In the child, `gasto()` counts the child's own spending
    from the fork on and `max_spend` caps that spending: each process has the whole cap, so give
    each worker its share (e.g. build the client in the pool's initializer with
    `max_spend=total / workers`).
    """

    ultimo_lote: Optional[Lote] = None
    """The last batch of `lote()` on this client, also when it was interrupted (Ctrl-C) or
    failed midway: what was paid for stays reachable."""

    def lote(
        self,
        chaves: Iterable[str],
        consulta: Consulta = "car",
        max_custo: Optional[Union[Decimal, int, str]] = None,
        progresso: bool = True,
        saida: Union[str, "os.PathLike[str]", None] = None,
    ) -> Lote:
        """Looks up every distinct key of `chaves` once with `consulta` and returns a `Lote` with
        one `ResultadoLote` per input row, in input order.

        Endpoint and price per key: `"car"` `GET /v1/car/{codigoCar}` R$ 1,00 (legado R$ 0,50),
        `"completo"` `GET /v1/car/{codigoCar}/completo` R$ 2,30 (legado R$ 1,50),
        `"proprietario"` `GET /v1/proprietario/{cpfCnpj}` R$ 2,60 (legado R$ 1,50); charged
        only on HTTP 200, sandbox values free. One free `GET /v1/saldo` first (the prices).
        `estimar_lote()` gives the counts and the most it can cost first, for free.

        Keys are read as people paste them (CAR codes with spaces or dashes of other kinds, or
        none; masked CPF/CNPJ) and a key repeated in several rows is bought once: its other rows
        get the same answer with `cobrado` False and `duplicata_de` (the first row's index).

        The batch stops at a 402 (no balance), at a daily or monthly limit's 429 and at a 401,
        as the CLI's `carapi lote`: the keys after it get `"nao_consultada"` with that code, and
        `Lote.parada` (also a warning) says why. Ctrl-C (or a Jupyter interrupt) is taken
        between keys: the key in flight ends and is kept, then `LoteInterrompido` (a
        `KeyboardInterrupt`) carries the partial batch in `.parcial`; `client.ultimo_lote` holds
        it too.

        Args:
            chaves: CAR codes (or CPF/CNPJ for `"proprietario"`).
            consulta: `"car"`, `"completo"` or `"proprietario"`.
            max_custo: stop sending once the batch's spend plus the next lookup's price would
                pass it, BRL (`Decimal`, `int` or `str`); the rest get status
                `"nao_consultada"`, `erro` `"MAX_CUSTO"`.
            progresso: a progress bar for 20 keys or more (tqdm when installed, in a terminal
                or in Jupyter with the `notebook` extra).
            saida: a records file (JSON Lines, e.g. `"lote.jsonl"`) that makes the batch
                resumable, in the format and with the lock of the CLI's `carapi lote --saida`:
                each answer is written as it arrives, a rerun with the same file buys only the
                keys without a final answer (found or not found), and a second run on the same
                file (of this package or the CLI) is refused at once (`SaidaEmUso`).

        Returns:
            `Lote`: `.resultados` (`ResultadoLote`: chave, status `"ok"`/`"erro"`/
            `"nao_consultada"`, dados, erro code, http, cobrado, preco, duplicata_de, sandbox,
            excecao), `.gasto` (BRL), `.parada`, `.to_pandas()`, `.to_geopandas()`,
            `.to_excel()`.

        Raises:
            ValueError: unknown `consulta`; a `saida` with answers of another kind of lookup, or
            named `.csv`/`.xlsx`/`.geojson`. TypeError: `max_custo` as `float`. SaidaEmUso:
            another run holds `saida`. LoteInterrompido: Ctrl-C. The exceptions of `precos()`.
            An error of one key (invalid code, not found, lost answer, spend cap) is kept in its
            rows (`erro` is the exception's `codigo`); the batch goes on.
        """
        from ._batch import execute

        return execute(self, chaves, consulta, max_custo, progresso, saida)

    def estimar_lote(
        self,
        chaves: Iterable[str],
        consulta: Consulta = "car",
        saida: Union[str, "os.PathLike[str]", None] = None,
    ) -> EstimativaLote:
        """What `lote(chaves, consulta, saida=saida)` would do, before spending anything (the
        CLI's preview): one free `GET /v1/saldo` (prices and balance), the archive read when the
        client has one, the records of `saida` read when given. Sends no lookup.

        Returns:
            dict (`carapi.tipos.EstimativaLote`): linhas, validas, invalidas, unicas (distinct
            valid keys), repetidas (rows repeating an earlier key), ja_na_saida (keys `saida`
            already answers), sandbox (free keys), no_acervo (keys the archive answers now, no
            charge), a_comprar, preco (one lookup, BRL), custo_maximo (`preco * a_comprar`, the
            most the batch can cost: a 404 costs nothing), saldo (BRL). Give `max_custo=` to
            `lote` to cap it.

        Raises:
            ValueError: unknown `consulta`. The exceptions of `saldo()`; `ErroDeAcervo` when
            the archive cannot be read.
        """
        from ._batch import estimate

        return estimate(self, chaves, consulta, saida)


# A program that ends without `close()` still keeps what it paid for: every client is closed
# (its purchases ended, counted and archived) before the interpreter goes.
atexit.register(_fechar_todos)

from .aio import AsyncClient  # noqa: E402  (aio subclasses nothing but needs Client)
