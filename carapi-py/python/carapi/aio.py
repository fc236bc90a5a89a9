"""`AsyncClient`: the same methods as `carapi.Client`, as coroutines.

Each call runs the synchronous client's method in a worker thread (`asyncio.to_thread`); the
method releases the GIL while it waits, so the event loop keeps running and calls may overlap
(the client's rate limit and spend cap still hold: they live in the one Rust client shared by
all of them).
"""

from __future__ import annotations

import asyncio
import os
from decimal import Decimal
from typing import Any, Iterable, List, Optional, Union

from . import Client
from .lote import Lote
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


class AsyncClient:
    """`carapi.Client` with coroutine methods; the arguments are those of `carapi.Client`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sync = Client(*args, **kwargs)
        """The synchronous client underneath (same spend, limiter and connections)."""

    async def car(self, codigo: str) -> CarResponse:
        return await asyncio.to_thread(self.sync.car, codigo)

    async def car_completo(self, codigo: str) -> CarCompletoResponse:
        return await asyncio.to_thread(self.sync.car_completo, codigo)

    async def recibo(self, codigo: str) -> bytes:
        return await asyncio.to_thread(self.sync.recibo, codigo)

    async def recibo_para_arquivo(self, codigo: str, caminho: Union[str, "os.PathLike[str]"]) -> ReciboInfo:
        return await asyncio.to_thread(self.sync.recibo_para_arquivo, codigo, caminho)

    async def proprietario(self, documento: str) -> ProprietarioResponse:
        return await asyncio.to_thread(self.sync.proprietario, documento)

    async def saldo(self) -> SaldoResponse:
        return await asyncio.to_thread(self.sync.saldo)

    async def precos(self) -> Precos:
        return await asyncio.to_thread(self.sync.precos)

    async def historico(self, **filtros: Any) -> HistoricoResponse:
        return await asyncio.to_thread(lambda: self.sync.historico(**filtros))

    async def historico_todo(self, **filtros: Any) -> List[ConsumoItem]:
        """Every item of every page, as one list."""
        return await asyncio.to_thread(lambda: list(self.sync.historico_todo(**filtros)))

    async def limites(self) -> LimitesResponse:
        return await asyncio.to_thread(self.sync.limites)

    async def atualizar_limites(self, **campos: Any) -> LimitesResponse:
        return await asyncio.to_thread(lambda: self.sync.atualizar_limites(**campos))

    async def uso(self) -> UsoResponse:
        return await asyncio.to_thread(self.sync.uso)

    async def faixas_recarga(self, valor: Optional[Dinheiro] = None) -> FaixasResponse:
        return await asyncio.to_thread(self.sync.faixas_recarga, valor)

    async def criar_recarga(self, valor: Dinheiro, confirmar_novos_precos: bool = False) -> RecargaCriadaResponse:
        return await asyncio.to_thread(self.sync.criar_recarga, valor, confirmar_novos_precos)

    async def recarga(self, recarga_id: str) -> RecargaStatusResponse:
        return await asyncio.to_thread(self.sync.recarga, recarga_id)

    async def aguardar_recarga(self, recarga_id: str, timeout: float = 600.0) -> RecargaStatusResponse:
        return await asyncio.to_thread(self.sync.aguardar_recarga, recarga_id, timeout)

    async def recargas(self, **filtros: Any) -> RecargasResponse:
        return await asyncio.to_thread(lambda: self.sync.recargas(**filtros))

    def gasto(self) -> Gasto:
        """Local, no request: not a coroutine."""
        return self.sync.gasto()

    async def resolver_incertos(self) -> Resolucao:
        return await asyncio.to_thread(self.sync.resolver_incertos)

    async def lote(self, chaves: Iterable[str], **opcoes: Any) -> Lote:
        return await asyncio.to_thread(lambda: self.sync.lote(list(chaves), **opcoes))
