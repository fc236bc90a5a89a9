"""The exceptions of `carapi`: one base, `ApiError`, and one subclass per family a caller catches.

Every error of the SDK arrives as one of these (the Rust `carapi_sdk::Error` mapped by the
extension). Errors never debit the balance (docs/contrato.md, "Errors"), except that a charged
lookup whose answer was lost after it was sent *may* have been charged: `RespostaPerdida`,
`may_have_charged` true, and the client never sends it again by itself.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Optional

__all__ = [
    "ApiError",
    "EntradaInvalida",
    "TokenInvalido",
    "SaldoInsuficiente",
    "NaoEncontrado",
    "LimiteExcedido",
    "ErroDeRede",
    "RespostaPerdida",
    "LimiteDeGasto",
    "TempoEsgotado",
    "ConfiguracaoInvalida",
    "Cancelado",
    "ErroDeAcervo",
    "SaidaEmUso",
]


class ApiError(Exception):
    """Base of every error of `carapi`.

    Attributes:
        status: HTTP status (400, 401, 402, 404, 429, 500, 502, 503), or None for an error found
            before any answer (local validation, network, spend cap).
        codigo: a stable code: the contract's (`"SALDO_INSUFICIENTE"`, `"CAR_NAO_ENCONTRADO"`,
            ...) for an answer of the server and for the input refused locally
            (`"CODIGO_CAR_INVALIDO"`), the package's own for what happened before or without
            an answer (`"RESPOSTA_PERDIDA"`, `"ERRO_DE_REDE"`, `"LIMITE_DE_GASTO"`,
            `"TEMPO_ESGOTADO"`, `"CONFIGURACAO_INVALIDA"`). `Lote` rows carry the same code.
        mensagem: the readable message (Portuguese).
        sandbox: True when the error came from a reserved sandbox value.
        may_have_charged: True only when a charged lookup was sent and its answer lost.
        is_retryable: True when sending the same call again is safe and may soon succeed.
        operacao: the client method that failed (`"car"`, `"saldo"`, ...), when known.
    """

    def __init__(
        self,
        mensagem: str,
        *,
        status: Optional[int] = None,
        codigo: Optional[str] = None,
        sandbox: bool = False,
        may_have_charged: bool = False,
        is_retryable: bool = False,
        operacao: Optional[str] = None,
        **extras: Any,
    ) -> None:
        super().__init__(mensagem)
        self.mensagem = mensagem
        self.status = status
        self.codigo = codigo
        self.sandbox = sandbox
        self.may_have_charged = may_have_charged
        self.is_retryable = is_retryable
        self.operacao = operacao
        for nome, valor in extras.items():
            setattr(self, nome, valor)

    def __str__(self) -> str:
        if self.status is not None and self.codigo:
            return f"{self.status} {self.codigo}: {self.mensagem}"
        return self.mensagem

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, codigo={self.codigo!r}, mensagem={self.mensagem!r})"


class EntradaInvalida(ApiError):
    """400 from the server, or the input refused locally before any request (malformed CAR code,
    CPF/CNPJ with wrong check digits: `codigo` is the code the server would give)."""


class TokenInvalido(ApiError):
    """401: missing, unknown or revoked API key."""


class SaldoInsuficiente(ApiError):
    """402 `SALDO_INSUFICIENTE`: the balance does not cover the lookup (nothing was debited).

    Attributes (BRL, `Decimal`; read with one free `GET /v1/saldo` right after the 402, None
    when that read failed and for the sandbox's fixed 402):
        preco: the lookup's price at the account's prices.
        saldo: the balance.
        falta: what the balance lacks for one such lookup (`preco - saldo`, at least 0).
    """

    preco: Optional[Decimal] = None
    saldo: Optional[Decimal] = None
    falta: Optional[Decimal] = None


class NaoEncontrado(ApiError):
    """404: no such CAR record, owner or top-up."""


class LimiteExcedido(ApiError):
    """429 `LIMITE_EXCEDIDO`.

    Attributes:
        retry_after: the `Retry-After` header in seconds, or None.
        limite: which limit: `"taxa"` (requests per second, retryable), `"diario"` (charged
            lookups per Brasília day) or `"mensal"` (spending per Brasília month).
    """

    retry_after: Optional[float] = None
    limite: Optional[str] = None


class ErroDeRede(ApiError):
    """The request could not be completed (connection refused, time-out, reset)."""


class RespostaPerdida(ErroDeRede):
    """A charged lookup was sent and its answer lost (`codigo` `"RESPOSTA_PERDIDA"`): it may
    have been charged, so it is never re-sent automatically. `Client.gasto()["incerto"]` counts
    it until `Client.resolver_incertos()` settles it against the free history."""


class LimiteDeGasto(ApiError):
    """Refused before sending: the lookup would take the client past its `max_spend`.

    Attributes (BRL, `Decimal`): `limite`, `gasto`, `reservado`, `preco`.
    """

    limite: Optional[Decimal] = None
    gasto: Optional[Decimal] = None
    reservado: Optional[Decimal] = None
    preco: Optional[Decimal] = None


class TempoEsgotado(ApiError):
    """`aguardar_recarga` gave up: the top-up was still not final. Attributes `recarga_id` and
    `ultimo_status`."""

    recarga_id: Optional[str] = None
    ultimo_status: Optional[str] = None


class ConfiguracaoInvalida(ApiError):
    """The client is misconfigured: no base URL or key (arguments or `CARAPI_BASE_URL` /
    `CARAPI_API_KEY`), or a bad URL."""


class Cancelado(ApiError):
    """The call was cancelled before its request was sent (an `AsyncClient` task cancelled while
    the call waited for the rate limiter, the spend cap or the archive): nothing was sent,
    nothing charged (`codigo` `"CANCELADO"`)."""


class ErroDeAcervo(ApiError):
    """The archive of paid answers (`Client(acervo=...)`) refused the lookup; nothing was sent.

    Attributes:
        tipo: `"alterado"` (an archived answer no longer matches its hashes: `codigo`
            `"ACERVO_ALTERADO"`, `seq` names the entry; it is never served nor bought again
            silently), `"expurgado"` (the owner's document was purged at the owner's request,
            LGPD art. 18: `codigo` `"TITULAR_EXPURGADO"`, `expurgado_em`), `"cheio"`,
            `"indisponivel"`, `"sem_conexao"` (a PostgreSQL archive's pool stayed busy) or
            `"outro"` (`codigo` `"ACERVO"`). `is_retryable` is true for `"indisponivel"` and
            `"sem_conexao"`.
        seq: the altered entry, for `"alterado"`.
        expurgado_em: when the document was purged (aware datetime, UTC), for `"expurgado"`.
    """

    tipo: Optional[str] = None
    seq: Optional[int] = None
    expurgado_em: Optional[datetime] = None


class SaidaEmUso(ApiError):
    """`Client.lote(saida=...)` found the output's lock (`.<name>.trava`) held by another run,
    of the CLI's `carapi lote --saida` or of this package (`codigo` `"SAIDA_EM_USO"`): nothing
    was read, sent or charged.

    Attributes:
        saida: the output file.
        pid: the other run's process id, as its lock file says (None when unreadable).
    """

    saida: Optional[str] = None
    pid: Optional[int] = None
