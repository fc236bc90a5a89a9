"""`AsyncClient`: the same methods as `carapi.Client`, as coroutines.

Each call runs the synchronous client's method in a worker thread; the method releases the GIL
while it waits, so the event loop keeps running and calls may overlap (the client's rate limit
and spend cap still hold: they live in the one Rust client shared by all of them).

Cancellation (`asyncio.wait_for` time-out, `TaskGroup` cancellation): a call whose task is
cancelled before its request was sent is never sent. Still queued for a worker thread, it never
calls the client; waiting in the client (the rate limiter, the spend cap, the archive), it gives
up at once through the SDK's cancellation token, and the limiter's place goes to the next call.
Only a call already sent (its request on the wire) cannot be recalled: it runs to its end in the
client and counts as its answer says (`gasto()["confirmado"]` for a 200, `"incerto"` for a lost
answer, nothing for an error); until it ends `gasto()` counts it as `"incerto"` (possibly
charged). A cancelled `lote` sends no further key. `aclose()` (and the end of `async with`)
waits for the calls still running.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import threading
from decimal import Decimal
from typing import Any, Callable, Dict, Iterable, List, Literal, Optional, Set, TypeVar, Union

from . import Acervo, Client
from ._batch import ENTRIES, execute
from ._carapi import CancelToken, com_cancelamento
from ._carapi import Client as NativeClient
from .erros import Cancelado
from .lote import Consulta, Lote
from .tipos import (
    CarCompletoResponse,
    CarResponse,
    ConsumoItem,
    FaixasResponse,
    Gasto,
    HistoricoResponse,
    LimitesResponse,
    EstimativaLote,
    Precos,
    ProprietarioResponse,
    RecargaCriadaResponse,
    RecargasResponse,
    RecargaStatusResponse,
    ReciboInfo,
    Resolucao,
    SaldoResponse,
    UsoResponse,
)

__all__ = ["AsyncClient"]

Dinheiro = Union[Decimal, int, str]
EndpointFiltro = Literal[
    "car", "completo", "recibo", "proprietario",
    "/v1/car/{codigo}", "/v1/car/{codigo}/completo", "/v1/car/{codigo}/recibo",
    "/v1/proprietario/{cpf_cnpj}",
]
StatusRecarga = Literal["Pendente", "Confirmado", "Rejeitado"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
_A = TypeVar("_A", bound="AsyncClient")

_OMITIDO: Any = object()
"""Default of `atualizar_limites`'s fields: omitted keeps the limit (None removes it)."""

# Each charged method's row of the SDK's table of lookups (its price field, sandbox values).


def _doc(sync: Callable[..., Any]) -> Callable[[F], F]:
    """The docstring of `carapi.Client`'s method, for the coroutine of the same name."""

    def aplicar(f: F) -> F:
        f.__doc__ = f"Coroutine of `carapi.Client.{sync.__name__}`.\n\n{sync.__doc__ or ''}"
        return f

    return aplicar


class _Call:
    """One call in a worker thread: its cancellation token, and whether its task was cancelled
    before the worker started it."""

    __slots__ = ("token", "cancelled")

    def __init__(self) -> None:
        self.token = CancelToken()
        self.cancelled = False


class AsyncClient:
    """`carapi.Client` with coroutine methods; the arguments are those of `carapi.Client`.

    `async with carapi.AsyncClient() as ac:` closes it at the end (after the calls still
    running in worker threads). See the module's docs for cancelled tasks.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        max_spend: Optional[Dinheiro] = None,
        timeout: Optional[float] = None,
        *,
        rate_limit: Optional[int] = 10,
        poll_interval: Optional[float] = None,
        acervo: Union[str, "os.PathLike[str]", bool, None] = None,
        finalidade: Optional[str] = None,
        base_legal: Optional[str] = None,
        idade_maxima: Union[int, float, datetime.timedelta, None] = None,
    ) -> None:
        self.sync: Client = Client(
            base_url,
            api_key,
            max_spend,
            timeout,
            rate_limit=rate_limit,
            poll_interval=poll_interval,
            acervo=acervo,
            finalidade=finalidade,
            base_legal=base_legal,
            idade_maxima=idade_maxima,
        )
        """The synchronous client underneath (same spend, limiter and connections)."""
        self._lock = threading.Lock()
        self._running: Set[asyncio.Future[Any]] = set()

    @property
    def acervo(self) -> Optional[Acervo]:
        """The archive of paid answers and its LGPD tools (`carapi.Acervo`, synchronous: each
        call reads or writes the archive), or None without `acervo=`."""
        return self.sync.acervo

    async def __aenter__(self: _A) -> _A:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Waits for the calls still running in worker threads (also those of cancelled
        tasks), then closes the client (`carapi.Client.close`)."""
        while self._running:
            await asyncio.gather(*list(self._running), return_exceptions=True)
        # `close` waits for the client's purchases (an archive's commits): not on the loop.
        await asyncio.get_running_loop().run_in_executor(None, self.sync.close)

    def close(self) -> None:
        """Closes the client (`carapi.Client.close`: waits, blocking, for the lookups already
        sent); calls of worker threads not yet sent then raise `RuntimeError`."""
        self.sync.close()

    @property
    def fechado(self) -> bool:
        """True once closed."""
        return self.sync.fechado

    @property
    def ultimo_lote(self) -> Optional[Lote]:
        """The last batch of `lote()` (`carapi.Client.ultimo_lote`)."""
        return self.sync.ultimo_lote

    async def _run(self, f: Callable[[NativeClient], T]) -> T:
        """Runs `f` in a worker thread on a handle of the client that the task's cancellation
        stops while nothing was sent (see the module docs). A cancelled call that was already
        sent runs to its end in the client, which counts it in `gasto()` as `incerto` until its
        answer arrives."""
        call = _Call()
        handle = com_cancelamento(self.sync, call.token)

        def body() -> T:
            with self._lock:
                if call.cancelled:
                    raise Cancelado("chamada cancelada antes do envio: nada foi enviado nem cobrado",
                                    codigo="CANCELADO")
            return f(handle)

        fut = asyncio.get_running_loop().run_in_executor(None, body)
        self._running.add(fut)
        fut.add_done_callback(self._running.discard)
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            with self._lock:
                call.cancelled = True
            # A call waiting in the client (limiter, spend cap, archive) gives up; one sent ends.
            call.token.cancel()
            raise

    def gasto(self) -> Gasto:
        """`carapi.Client.gasto()` (local, not a coroutine): the lookups of cancelled tasks that
        were sent and are still running are in `incerto` (the client counts every lookup in
        flight there until its answer arrives)."""
        return self.sync.gasto()

    @_doc(Client.car)
    async def car(self, codigo: str) -> CarResponse:
        return await self._run(lambda c: c.car(codigo))

    @_doc(Client.car_completo)
    async def car_completo(self, codigo: str) -> CarCompletoResponse:
        return await self._run(lambda c: c.car_completo(codigo))

    @_doc(Client.recibo)
    async def recibo(self, codigo: str) -> bytes:
        return await self._run(lambda c: c.recibo(codigo))

    @_doc(Client.recibo_para_arquivo)
    async def recibo_para_arquivo(self, codigo: str, caminho: Union[str, "os.PathLike[str]"]) -> ReciboInfo:
        return await self._run(lambda c: c.recibo_para_arquivo(codigo, caminho))

    @_doc(Client.proprietario)
    async def proprietario(self, documento: str) -> ProprietarioResponse:
        return await self._run(lambda c: c.proprietario(documento))

    @_doc(Client.saldo)
    async def saldo(self) -> SaldoResponse:
        return await self._run(lambda c: c.saldo())

    @_doc(Client.precos)
    async def precos(self) -> Precos:
        return await self._run(lambda c: c.precos())

    @_doc(Client.historico)
    async def historico(
        self,
        page: Optional[int] = 1,
        size: Optional[int] = 20,
        busca: Optional[str] = None,
        endpoint: Optional[EndpointFiltro] = None,
        status: Optional[Literal["sucesso", "erro"]] = None,
    ) -> HistoricoResponse:
        return await self._run(lambda c: c.historico(page, size, busca, endpoint, status))

    @_doc(Client.historico_todo)
    async def historico_todo(
        self,
        page: Optional[int] = None,
        size: Optional[int] = None,
        busca: Optional[str] = None,
        endpoint: Optional[EndpointFiltro] = None,
        status: Optional[Literal["sucesso", "erro"]] = None,
    ) -> List[ConsumoItem]:
        """Every item of every page, as one list."""
        return await self._run(lambda c: list(c.historico_todo(page, size, busca, endpoint, status)))

    @_doc(Client.limites)
    async def limites(self) -> LimitesResponse:
        return await self._run(lambda c: c.limites())

    @_doc(Client.atualizar_limites)
    async def atualizar_limites(
        self, *, diario: Optional[int] = _OMITIDO, mensal: Optional[Dinheiro] = _OMITIDO
    ) -> LimitesResponse:
        campos: Dict[str, Any] = {}
        if diario is not _OMITIDO:
            campos["diario"] = diario
        if mensal is not _OMITIDO:
            campos["mensal"] = mensal
        return await self._run(lambda c: c.atualizar_limites(**campos))

    @_doc(Client.uso)
    async def uso(self) -> UsoResponse:
        return await self._run(lambda c: c.uso())

    @_doc(Client.faixas_recarga)
    async def faixas_recarga(self, valor: Optional[Dinheiro] = None) -> FaixasResponse:
        return await self._run(lambda c: c.faixas_recarga(valor))

    @_doc(Client.criar_recarga)
    async def criar_recarga(self, valor: Dinheiro, confirmar_novos_precos: bool = False) -> RecargaCriadaResponse:
        return await self._run(lambda c: c.criar_recarga(valor, confirmar_novos_precos))

    @_doc(Client.recarga)
    async def recarga(self, recarga_id: str) -> RecargaStatusResponse:
        return await self._run(lambda c: c.recarga(recarga_id))

    @_doc(Client.aguardar_recarga)
    async def aguardar_recarga(self, recarga_id: str, timeout: float = 600.0) -> RecargaStatusResponse:
        return await self._run(lambda c: c.aguardar_recarga(recarga_id, timeout))

    @_doc(Client.recargas)
    async def recargas(
        self, page: Optional[int] = None, size: Optional[int] = None, status: Optional[StatusRecarga] = None
    ) -> RecargasResponse:
        return await self._run(lambda c: c.recargas(page, size, status))

    @_doc(Client.resolver_incertos)
    async def resolver_incertos(self) -> Resolucao:
        return await self._run(lambda c: c.resolver_incertos())

    @_doc(Client.lote)
    async def lote(
        self,
        chaves: Iterable[str],
        consulta: Consulta = "car",
        max_custo: Optional[Dinheiro] = None,
        progresso: bool = True,
        saida: Union[str, "os.PathLike[str]", None] = None,
    ) -> Lote:
        rows = [str(c) for c in chaves]
        entry = ENTRIES.get(consulta)
        if entry is None:
            raise ValueError(f"consulta inválida: {consulta!r} ({', '.join(ENTRIES)})")
        stop = threading.Event()
        token = CancelToken()

        try:
            # If cancelled, at most the lookup in flight is still sent (counted by the client).
            return await self._run(
                lambda _: execute(self.sync, rows, consulta, max_custo, progresso, saida, stop, token)
            )
        except asyncio.CancelledError:
            stop.set()
            token.cancel()
            raise

    @_doc(Client.estimar_lote)
    async def estimar_lote(
        self,
        chaves: Iterable[str],
        consulta: Consulta = "car",
        saida: Union[str, "os.PathLike[str]", None] = None,
    ) -> EstimativaLote:
        rows = [str(c) for c in chaves]
        return await self._run(lambda _: self.sync.estimar_lote(rows, consulta, saida))

    def __repr__(self) -> str:
        return f"carapi.AsyncClient(base_url={self.sync.base_url!r})"

