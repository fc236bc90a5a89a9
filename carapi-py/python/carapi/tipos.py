"""The shapes of `carapi`'s results, as `TypedDict`s for editors and mypy: the contract's
resources (docs/contrato.md, "Resources and their fields") with its camelCase keys. Money is
`Decimal` (BRL), timestamps are timezone-aware `datetime`; the registry's fields in `dados`
(`areaTotalHa`, `dataCadastro`, `latitude`, ...) are the registry's strings."""

from __future__ import annotations

import datetime
import pathlib
from decimal import Decimal
from typing import List, Literal, Optional

try:  # Python >= 3.8
    from typing import TypedDict
except ImportError:  # pragma: no cover
    from typing_extensions import TypedDict

__all__ = [
    "CarDadosBasicos", "CarDadosCompletos", "CarResponse", "CarCompletoResponse",
    "ProprietarioItem", "ProprietarioResponse", "Precos", "UsoHoje", "UsoMes", "SaldoResponse",
    "ConsumoItem", "HistoricoResponse", "LimitesResponse", "UsoItem", "UsoResponse",
    "FaixaBonus", "PreviewRecarga", "FaixasResponse", "PreviewBonus", "RecargaCriadaResponse",
    "RecargaStatusResponse", "RecargaItem", "RecargasResponse", "Gasto", "Resolucao",
    "ReciboInfo", "Avanco", "EstadoConta", "EntradaAcervo", "VerificacaoAcervo", "EstimativaLote",
]


class CarDadosBasicos(TypedDict):
    codigoCar: str
    nomeImovel: Optional[str]
    areaTotalHa: Optional[str]
    dataCadastro: Optional[str]
    matriculaNumero: Optional[str]
    matriculaData: Optional[str]
    matriculaCartorio: Optional[str]
    tipoImovel: Optional[str]
    municipio: Optional[str]
    uf: Optional[str]
    codigoProtocolo: Optional[str]
    latitude: Optional[str]
    longitude: Optional[str]
    modulosFiscais: Optional[str]


class CarDadosCompletos(CarDadosBasicos):
    proprietariosNomes: Optional[str]
    proprietariosCpfs: Optional[str]


class _Sandbox(TypedDict, total=False):
    sandbox: bool
    """Present (and true) only for the reserved sandbox values."""
    origem: Literal["api", "acervo"]
    """Present only with `Client(acervo=...)`: bought now ("api") or read from the archive
    ("acervo": no request, no charge)."""
    compradoEm: datetime.datetime
    """Present only with `Client(acervo=...)`: when the answer was bought (aware, UTC)."""


class CarResponse(_Sandbox):
    success: bool
    cache: bool
    dados: CarDadosBasicos
    dataConsulta: datetime.datetime
    dataExpiracao: Optional[datetime.datetime]


class CarCompletoResponse(_Sandbox):
    success: bool
    cache: bool
    dados: CarDadosCompletos
    dataConsulta: datetime.datetime
    dataExpiracao: Optional[datetime.datetime]


class ProprietarioItem(TypedDict):
    registroCar: str
    codigoProtocolo: Optional[str]
    nomeImovel: Optional[str]
    matriculaNumero: Optional[str]
    municipio: Optional[str]
    uf: Optional[str]
    areaTotalHa: Optional[str]
    proprietarioConsultado: Optional[str]


class ProprietarioResponse(_Sandbox):
    success: bool
    total: int
    limite: int
    truncado: bool
    itens: List[ProprietarioItem]


class Precos(TypedDict):
    carBasico: Decimal
    carCompleto: Decimal
    proprietario: Decimal
    recibo: Decimal


class UsoHoje(TypedDict):
    requisicoes: int
    gasto: Decimal
    erros: int


class UsoMes(TypedDict):
    requisicoes: int
    gasto: Decimal


class SaldoResponse(TypedDict):
    success: bool
    saldoReais: Decimal
    limiteDiarioRequisicoes: Optional[int]
    limiteMensalReais: Optional[Decimal]
    precos: Precos
    usoHoje: UsoHoje
    usoMes: UsoMes


class ConsumoItem(TypedDict):
    data: datetime.datetime
    endpoint: str
    chaveConsulta: Optional[str]
    statusHttp: int
    cobrado: bool
    valorCobrado: Decimal
    saldoAntes: Optional[Decimal]
    saldoDepois: Optional[Decimal]


class HistoricoResponse(TypedDict):
    success: bool
    page: int
    size: int
    total: int
    totalPaginas: int
    itens: List[ConsumoItem]


class LimitesResponse(TypedDict):
    success: bool
    message: str
    limiteDiarioRequisicoes: Optional[int]
    limiteMensalReais: Optional[Decimal]


class UsoItem(TypedDict):
    endpoint: str
    quantidade: int
    valorTotal: Decimal


class UsoResponse(TypedDict):
    success: bool
    periodoDias: int
    itens: List[UsoItem]


class FaixaBonus(TypedDict):
    valorMinimo: Decimal
    valorMaximo: Optional[Decimal]
    percentualBonus: Decimal


class PreviewRecarga(TypedDict):
    valorPago: Decimal
    percentualBonus: Decimal
    valorBonus: Decimal
    totalCreditado: Decimal


class FaixasResponse(TypedDict):
    success: bool
    valorMinimo: Decimal
    usaPrecoLegado: bool
    precosAtuais: Precos
    precosAposRecarga: Precos
    confirmarNovosPrecosObrigatorio: bool
    faixas: List[FaixaBonus]
    preview: Optional[PreviewRecarga]


class PreviewBonus(TypedDict):
    percentualBonus: Decimal
    valorBonus: Decimal
    totalCreditado: Decimal


class RecargaCriadaResponse(TypedDict):
    success: bool
    reaproveitada: bool
    recargaId: str
    paymentId: str
    valor: Decimal
    status: str
    qrCode: str
    qrCodeBase64: str
    previewBonus: PreviewBonus
    message: str


class RecargaStatusResponse(TypedDict):
    success: bool
    pago: bool
    recargaId: str
    valor: Decimal
    valorBonus: Optional[Decimal]
    percentualBonus: Optional[Decimal]
    totalCreditado: Optional[Decimal]
    status: str
    qrCode: Optional[str]
    qrCodeBase64: Optional[str]
    saldoAtual: Decimal
    message: str


class RecargaItem(TypedDict):
    recargaId: str
    data: datetime.datetime
    dataConfirmacao: Optional[datetime.datetime]
    valorPago: Decimal
    valorBonus: Decimal
    percentualBonus: Decimal
    totalCreditado: Decimal
    status: str


class RecargasResponse(TypedDict):
    success: bool
    page: int
    size: int
    total: int
    totalPaginas: int
    itens: List[RecargaItem]


class Gasto(TypedDict):
    """`Client.gasto()`: what this client spent on lookups, BRL."""

    confirmado: Decimal
    incerto: Decimal
    total: Decimal
    nao_precificadas: int


class EntradaAcervo(TypedDict):
    """One entry of the archive of paid answers (`carapi.Acervo.listar()`, `titular()`,
    `mostrar()`), with the names of the SDK's `Entry` (the CLI's `carapi acervo listar -o json`
    and `exportar`): the contract's camelCase Portuguese."""

    seq: int
    operacao: Literal["car", "car_completo", "proprietario", "recibo"]
    """The lookup (the SDK's name, which the chain hashes)."""
    chave: Optional[str]
    """The key looked up (CAR code, bare CPF/CNPJ); None once purged."""
    preco: Optional[Decimal]
    """The price charged, BRL; None when the account's prices were unknown."""
    dataConsulta: Optional[str]
    """`dataConsulta` of the answer as received; None for a receipt."""
    compradoEm: datetime.datetime
    """When it was bought (aware, UTC)."""
    conta: str
    """The account: the first 16 hex digits of the SHA-256 of its API key."""
    finalidade: str
    baseLegal: str
    hashConteudo: str
    hashAnterior: str
    hash: str
    expurgadoEm: Optional[datetime.datetime]


class VerificacaoAcervo(TypedDict):
    """`carapi.Acervo.verificar()`: the hash chain walked."""

    ok: bool
    entradas: int
    expurgadas: int
    cabeca: Optional[str]
    """The head now, `"SEQ:HASH"`; None while the archive is empty."""
    falhas: List[str]


class Resolucao(TypedDict):
    """`Client.resolver_incertos()`: lookups settled against the history."""

    cobradas: int
    nao_cobradas: int
    pendentes: int


class ReciboInfo(TypedDict):
    path: pathlib.Path
    filename: str
    bytes: int


class Avanco(TypedDict):
    """`ServidorTeste.avancar()`: the clock after the move, top-ups reconciled."""

    agora: datetime.datetime
    reconciliadas: int


class EstadoConta(TypedDict):
    """`ServidorTeste.conta_de()`: the account as the store has it."""

    contaId: int
    saldo: Decimal
    legado: bool
    limiteDiario: Optional[int]
    limiteMensal: Optional[Decimal]
    debitado: Decimal
    razaoConsistente: bool


class EstimativaLote(TypedDict):
    """`Client.estimar_lote()`: what a batch would do, before spending anything."""

    consulta: str
    linhas: int
    """Input rows."""
    validas: int
    invalidas: int
    """Rows that hold no valid key (never sent)."""
    unicas: int
    """Distinct valid keys (each looked up once)."""
    repetidas: int
    """Rows repeating the key of an earlier row."""
    ja_na_saida: int
    """Keys the records of `saida=` already answer (not looked up again)."""
    sandbox: int
    """Reserved sandbox values among the keys to look up (free)."""
    no_acervo: int
    """Keys the archive answers now (no request, no charge)."""
    a_comprar: int
    """Keys that would be bought."""
    preco: Decimal
    """One lookup at the account's prices, BRL."""
    custo_maximo: Decimal
    """`preco * a_comprar`: the most the batch can cost, BRL (a 404 costs nothing)."""
    saldo: Decimal
    """The balance now, BRL."""
