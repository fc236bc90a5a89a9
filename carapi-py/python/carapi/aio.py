"""`AsyncClient`: the same methods as `carapi.Client`, as coroutines.

Each call runs the synchronous client's method in a worker thread; the method releases the GIL
while it waits, so the event loop keeps running and calls may overlap (the client's rate limit
and spend cap still hold: they live in the one Rust client shared by all of them).

Cancellation: a cancelled task (`asyncio.wait_for` time-out, `TaskGroup` cancellation) cannot
stop a request already sent. Its lookup goes on in its thread and ends as its answer says
(`gasto()["confirmado"]` for a 200, `"incerto"` for a lost answer, nothing for an error); until
then `gasto()` counts it as `"incerto"` (possibly charged), never as nothing. A cancelled `lote`
sends no further key. `aclose()` (and the end of `async with`) waits for those calls.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import os
import threading
from decimal import Decimal
from typing import Any, Callable, Dict, Iterable, List, Literal, Optional, Set, TypeVar, Union, cast

from . import Acervo, Client
from .lote import CONSULTAS, Consulta, Lote, e_sandbox, executar
from .tipos import (
    CarCompletoResponse,
    CarResponse,
    ConsumoItem,
    FaixasResponse,
    Gasto,
    HistoricoResponse,
    LimitesResponse,
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

# Key of each charged method's price in `Client.precos()`.
_PRECO_DE = {"car": "carBasico", "car_completo": "carCompleto", "proprietario": "proprietario",
             "recibo": "recibo", "recibo_para_arquivo": "recibo"}


def _doc(sync: Callable[..., Any]) -> Callable[[F], F]:
    """The docstring of `carapi.Client`'s method, for the coroutine of the same name."""

    def aplicar(f: F) -> F:
        f.__doc__ = f"Coroutine of `carapi.Client.{sync.__name__}`.\n\n{sync.__doc__ or ''}"
        return f

    return aplicar


class _Chamada:
    """One call in a worker thread: whether it ended, and the price it is counted at in
    `gasto()` if its task was cancelled before it ended."""

    __slots__ = ("fim", "cancelada", "preco")

    def __init__(self) -> None:
        self.fim = False
        self.cancelada = False
        self.preco: Optional[Decimal] = None


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
        self._trava = threading.Lock()
        self._cancelados: Dict[int, _Chamada] = {}
        self._rodando: Set[asyncio.Future[Any]] = set()
        self._seq = itertools.count()

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
        while self._rodando:
            await asyncio.gather(*list(self._rodando), return_exceptions=True)
        self.sync.close()

    def close(self) -> None:
        """Closes the client now (`carapi.Client.close`); calls in flight end normally."""
        self.sync.close()

    @property
    def fechado(self) -> bool:
        """True once closed."""
        return self.sync.fechado

    async def _rodar(self, f: Callable[[], T], preco: Callable[[], Optional[Decimal]] = lambda: None) -> T:
        """Runs `f` in a worker thread. If the awaiting task is cancelled while `f` runs, the
        call is counted in `gasto()` at `preco()` (read in the thread before `f`) until it ends."""
        chamada = _Chamada()
        ident = next(self._seq)

        def corpo() -> T:
            chamada.preco = preco()
            try:
                return f()
            finally:
                with self._trava:
                    chamada.fim = True
                    self._cancelados.pop(ident, None)

        fut = asyncio.get_running_loop().run_in_executor(None, corpo)
        self._rodando.add(fut)
        fut.add_done_callback(self._rodando.discard)
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            with self._trava:
                if not chamada.fim:
                    chamada.cancelada = True
                    self._cancelados[ident] = chamada
            raise

    def _preco(self, metodo: str, chave: str, consulta: str = "car") -> Callable[[], Optional[Decimal]]:
        """The price a charged call is counted at if cancelled: zero for a sandbox value, else
        the account's price (cached by the client; None when it cannot be read)."""

        def ler() -> Optional[Decimal]:
            if e_sandbox(chave, consulta):
                return Decimal("0")
            try:
                return cast(Dict[str, Decimal], self.sync.precos())[_PRECO_DE[metodo]]
            except Exception:  # the lookup will meet the same error and report it
                return None

        return ler

    def gasto(self) -> Gasto:
        """`carapi.Client.gasto()` (local, not a coroutine), plus the lookups of cancelled
        tasks still running, as `incerto` (or `nao_precificadas` when their price is unknown)."""
        with self._trava:
            pendentes = [c.preco for c in self._cancelados.values()]
        # Read after the snapshot: a call that ended meanwhile is already in the client's figure
        # (counted twice for an instant at most, never missed).
        g = self.sync.gasto()
        extra = sum((p for p in pendentes if p is not None), Decimal("0"))
        incerto = g["incerto"] + extra
        return {
            "confirmado": g["confirmado"],
            "incerto": incerto,
            "total": g["confirmado"] + incerto,
            "nao_precificadas": g["nao_precificadas"] + sum(p is None for p in pendentes),
        }

    @_doc(Client.car)
    async def car(self, codigo: str) -> CarResponse:
        return await self._rodar(lambda: self.sync.car(codigo), self._preco("car", codigo))

    @_doc(Client.car_completo)
    async def car_completo(self, codigo: str) -> CarCompletoResponse:
        return await self._rodar(lambda: self.sync.car_completo(codigo), self._preco("car_completo", codigo))

    @_doc(Client.recibo)
    async def recibo(self, codigo: str) -> bytes:
        return await self._rodar(lambda: self.sync.recibo(codigo), self._preco("recibo", codigo))

    @_doc(Client.recibo_para_arquivo)
    async def recibo_para_arquivo(self, codigo: str, caminho: Union[str, "os.PathLike[str]"]) -> ReciboInfo:
        return await self._rodar(
            lambda: self.sync.recibo_para_arquivo(codigo, caminho), self._preco("recibo_para_arquivo", codigo)
        )

    @_doc(Client.proprietario)
    async def proprietario(self, documento: str) -> ProprietarioResponse:
        return await self._rodar(
            lambda: self.sync.proprietario(documento), self._preco("proprietario", documento, "proprietario")
        )

    @_doc(Client.saldo)
    async def saldo(self) -> SaldoResponse:
        return await self._rodar(self.sync.saldo)

    @_doc(Client.precos)
    async def precos(self) -> Precos:
        return await self._rodar(self.sync.precos)

    @_doc(Client.historico)
    async def historico(
        self,
        page: Optional[int] = 1,
        size: Optional[int] = 20,
        busca: Optional[str] = None,
        endpoint: Optional[EndpointFiltro] = None,
        status: Optional[Literal["sucesso", "erro"]] = None,
    ) -> HistoricoResponse:
        return await self._rodar(lambda: self.sync.historico(page, size, busca, endpoint, status))

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
        return await self._rodar(lambda: list(self.sync.historico_todo(page, size, busca, endpoint, status)))

    @_doc(Client.limites)
    async def limites(self) -> LimitesResponse:
        return await self._rodar(self.sync.limites)

    @_doc(Client.atualizar_limites)
    async def atualizar_limites(
        self, *, diario: Optional[int] = _OMITIDO, mensal: Optional[Dinheiro] = _OMITIDO
    ) -> LimitesResponse:
        campos: Dict[str, Any] = {}
        if diario is not _OMITIDO:
            campos["diario"] = diario
        if mensal is not _OMITIDO:
            campos["mensal"] = mensal
        return await self._rodar(lambda: self.sync.atualizar_limites(**campos))

    @_doc(Client.uso)
    async def uso(self) -> UsoResponse:
        return await self._rodar(self.sync.uso)

    @_doc(Client.faixas_recarga)
    async def faixas_recarga(self, valor: Optional[Dinheiro] = None) -> FaixasResponse:
        return await self._rodar(lambda: self.sync.faixas_recarga(valor))

    @_doc(Client.criar_recarga)
    async def criar_recarga(self, valor: Dinheiro, confirmar_novos_precos: bool = False) -> RecargaCriadaResponse:
        return await self._rodar(lambda: self.sync.criar_recarga(valor, confirmar_novos_precos))

    @_doc(Client.recarga)
    async def recarga(self, recarga_id: str) -> RecargaStatusResponse:
        return await self._rodar(lambda: self.sync.recarga(recarga_id))

    @_doc(Client.aguardar_recarga)
    async def aguardar_recarga(self, recarga_id: str, timeout: float = 600.0) -> RecargaStatusResponse:
        return await self._rodar(lambda: self.sync.aguardar_recarga(recarga_id, timeout))

    @_doc(Client.recargas)
    async def recargas(
        self, page: Optional[int] = None, size: Optional[int] = None, status: Optional[StatusRecarga] = None
    ) -> RecargasResponse:
        return await self._rodar(lambda: self.sync.recargas(page, size, status))

    @_doc(Client.resolver_incertos)
    async def resolver_incertos(self) -> Resolucao:
        return await self._rodar(self.sync.resolver_incertos)

    @_doc(Client.lote)
    async def lote(
        self,
        chaves: Iterable[str],
        consulta: Consulta = "car",
        max_custo: Optional[Dinheiro] = None,
        progresso: bool = True,
    ) -> Lote:
        lista = [str(c) for c in chaves]
        if consulta not in CONSULTAS:
            raise ValueError(f"consulta inválida: {consulta!r} (car, completo ou proprietario)")
        parar = threading.Event()
        metodo = CONSULTAS[consulta][0]
        try:
            # If cancelled, at most the lookup in flight is still sent: counted at one price.
            return await self._rodar(
                lambda: executar(self.sync, lista, consulta, max_custo, progresso, parar),
                self._preco(metodo, "", consulta),
            )
        except asyncio.CancelledError:
            parar.set()
            raise

    def __repr__(self) -> str:
        return f"carapi.AsyncClient(base_url={self.sync.base_url!r})"

