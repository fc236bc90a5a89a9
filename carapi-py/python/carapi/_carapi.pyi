"""Stubs of the native module `carapi._carapi` (carapi-py/src). Use the public names of
`carapi` and `carapi.testing`; this module is their implementation."""

from __future__ import annotations

import datetime
import os
from decimal import Decimal
from typing import Dict, Iterator, List, Literal, Optional, TypeVar, Union

from .testing import ImovelTeste

from .tipos import (
    CarCompletoResponse,
    CarResponse,
    ConsumoItem,
    EstadoConta,
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
    Avanco,
)

Dinheiro = Union[Decimal, int, str]
EndpointFiltro = Literal[
    "car", "completo", "recibo", "proprietario",
    "/v1/car/{codigo}", "/v1/car/{codigo}/completo", "/v1/car/{codigo}/recibo",
    "/v1/proprietario/{cpf_cnpj}",
]

_C = TypeVar("_C", bound="Client")

SDK_VERSION: str
SANDBOX: Dict[str, str]
IMOVEIS_TESTE: List[ImovelTeste]
DOCUMENTO_TESTE: str

def parse_decimal(texto: str) -> Optional[Decimal]: ...
def parse_data(texto: str) -> Optional[datetime.datetime]: ...
def parse_dms(texto: str) -> Optional[Decimal]: ...
def validar_codigo_car(codigo: str) -> str: ...
def validar_documento(documento: str) -> str: ...

class Paginas(Iterator[ConsumoItem]):
    def __iter__(self) -> Paginas: ...
    def __next__(self) -> ConsumoItem: ...

class Client:
    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        max_spend: Optional[Dinheiro] = None,
        timeout: Optional[float] = None,
        *,
        rate_limit: Optional[int] = 10,
        poll_interval: Optional[float] = None,
        acervo: Union[str, os.PathLike[str], bool, None] = None,
        finalidade: Optional[str] = None,
        base_legal: Optional[str] = None,
        idade_maxima: Union[int, float, datetime.timedelta, None] = None,
    ) -> None: ...
    @property
    def base_url(self) -> str: ...
    @property
    def max_spend(self) -> Optional[Decimal]: ...
    @property
    def fechado(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self: _C) -> _C: ...
    def __exit__(self, *exc: object) -> bool: ...
    def car(self, codigo: str) -> CarResponse: ...
    def car_completo(self, codigo: str) -> CarCompletoResponse: ...
    def recibo(self, codigo: str) -> bytes: ...
    def recibo_para_arquivo(self, codigo: str, caminho: Union[str, os.PathLike[str]]) -> ReciboInfo: ...
    def proprietario(self, documento: str) -> ProprietarioResponse: ...
    def saldo(self) -> SaldoResponse: ...
    def precos(self) -> Precos: ...
    def historico(
        self,
        page: Optional[int] = 1,
        size: Optional[int] = 20,
        busca: Optional[str] = None,
        endpoint: Optional[EndpointFiltro] = None,
        status: Optional[Literal["sucesso", "erro"]] = None,
    ) -> HistoricoResponse: ...
    def historico_todo(
        self,
        page: Optional[int] = None,
        size: Optional[int] = None,
        busca: Optional[str] = None,
        endpoint: Optional[EndpointFiltro] = None,
        status: Optional[Literal["sucesso", "erro"]] = None,
    ) -> Paginas: ...
    def limites(self) -> LimitesResponse: ...
    def atualizar_limites(
        self, *, diario: Optional[int] = ..., mensal: Optional[Dinheiro] = ...
    ) -> LimitesResponse: ...
    def uso(self) -> UsoResponse: ...
    def faixas_recarga(self, valor: Optional[Dinheiro] = None) -> FaixasResponse: ...
    def criar_recarga(self, valor: Dinheiro, confirmar_novos_precos: bool = False) -> RecargaCriadaResponse: ...
    def recarga(self, recarga_id: str) -> RecargaStatusResponse: ...
    def aguardar_recarga(self, recarga_id: str, timeout: float = 600.0) -> RecargaStatusResponse: ...
    def recargas(
        self,
        page: Optional[int] = None,
        size: Optional[int] = None,
        status: Optional[Literal["Pendente", "Confirmado", "Rejeitado"]] = None,
    ) -> RecargasResponse: ...
    def gasto(self) -> Gasto: ...
    def resolver_incertos(self) -> Resolucao: ...

class ServidorTeste:
    def __init__(self, *, limite_taxa: Optional[int] = 10, banco: Optional[str] = None) -> None: ...
    @property
    def base_url(self) -> str: ...
    def conta(
        self,
        saldo: Optional[Dinheiro] = None,
        legado: bool = False,
        documento: Optional[str] = None,
        *,
        sem_documento: bool = False,
        limite_diario: Optional[int] = None,
        limite_mensal: Optional[Dinheiro] = None,
    ) -> str: ...
    def falhar(
        self,
        tipo: Literal["erro", "atraso", "resetar_conexao", "perder_resposta_apos_cobrar", "cortar_corpo"],
        *,
        rota: Optional[str] = None,
        metodo: Optional[str] = None,
        conta: Optional[str] = None,
        vezes: Optional[int] = 1,
        codigo: Optional[str] = ...,
        retry_after: Optional[int] = ...,
        limite: Optional[Literal["taxa", "diario", "mensal"]] = ...,
        ms: Optional[int] = ...,
        bytes: Optional[int] = ...,
    ) -> int: ...
    def remover_falha(self, id: int) -> bool: ...
    def limpar_falhas(self) -> None: ...
    def agora(self) -> datetime.datetime: ...
    def avancar(self, segundos: float) -> Avanco: ...
    def pagar(self, recarga_id: str, *, sem_webhook: bool = False) -> None: ...
    def conta_de(self, conta: str) -> EstadoConta: ...
    def encerrar(self) -> None: ...
