"""`ServidorTeste`: the reference server in-process as a stateful test double (the Rust
`carapi_test_double::TestServer`): a real server on `127.0.0.1:<free port>` over an
in-memory database with the bundled CAR records (`IMOVEIS`), a movable clock, faults on demand,
and payment of PIX top-ups without a bank.

    from carapi.testing import CODIGO_CAR, ServidorTeste

    with ServidorTeste() as srv:
        client = srv.client(saldo="50")
        srv.falhar("perder_resposta_apos_cobrar", rota="car")
        ...
        srv.avancar(120)             # reconciliation runs
        srv.conta_de(client)["debitado"]

With pytest, the fixture `carapi_servidor` gives a started `ServidorTeste` per test.

Accounts: `conta()` returns an API key; `client()` makes an account and returns a
`ClienteTeste` (a `carapi.Client` that also has `.api_key`). Where a method takes an account
(`conta_de(...)`, `falhar(conta=...)`) it takes either: that key or that client (never an
account id).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

from . import Client
from ._carapi import CONSULTAS, DOCUMENTO_TESTE, IMOVEIS_TESTE
from ._carapi import ServidorTeste as _ServidorNativo
from .tipos import EstadoConta

__all__ = [
    "ServidorTeste", "ClienteTeste", "ImovelTeste", "IMOVEIS", "CODIGOS_CAR", "CODIGO_CAR",
    "CODIGO_SEM_RECIBO", "DOCUMENTO", "ROTAS",
]

Dinheiro = Union[Decimal, int, str]
TipoFalha = Literal["erro", "atraso", "resetar_conexao", "perder_resposta_apos_cobrar", "cortar_corpo"]


class ImovelTeste(TypedDict):
    """One record the test double holds."""

    codigoCar: str
    uf: str
    municipio: str
    status: str
    """SICAR `status_imovel`: `AT`, `PE`, `SU` or `CA`."""
    recibo: bool
    """False for `PE` and `CA`: `recibo()` answers 404 `RECIBO_NAO_ENCONTRADO`."""


IMOVEIS: List[ImovelTeste] = IMOVEIS_TESTE
"""The 80 real public SICAR records every `ServidorTeste` holds (10 in Brasília, DF and 10 in
Sorriso, MT from the public CSV, then 60 from the public WFS in DF, GO, MG, MS, MT, RS, SP), with
fictitious owners. Any other well-formed code answers 404 `CAR_NAO_ENCONTRADO`."""

CODIGOS_CAR: List[str] = [i["codigoCar"] for i in IMOVEIS]
"""The CAR codes of `IMOVEIS`, in the same order."""

CODIGO_CAR = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"
"""A record in Brasília, DF, with a receipt: the README's examples use it."""

CODIGO_SEM_RECIBO = "DF-5300108-277959445CC745B68C065E77AB1F2B42"
"""A record in status `PE`: lookups answer, the receipt is 404 `RECIBO_NAO_ENCONTRADO`."""

DOCUMENTO: str = DOCUMENTO_TESTE
"""An owner's CPF tied to several of `IMOVEIS` (`proprietario(DOCUMENTO)` lists them)."""

ROTAS: Dict[str, str] = {
    # The charged lookups, from the SDK's one table of them (`carapi_sdk::EndpointConsulta`):
    # the short name, the SDK's method name and the history's registered form, each to the
    # server's route.
    **{c["curto"]: c["rota"] for c in CONSULTAS},
    **{c["nome"]: c["rota"] for c in CONSULTAS},
    **{c["registrada"]: c["rota"] for c in CONSULTAS},
    "saldo": "/v1/saldo",
    "historico": "/v1/historico",
    "limites": "/v1/limites",
    "uso": "/v1/uso",
    "faixas_recarga": "/v1/recarga/faixas",
    "criar_recarga": "/v1/recarga",
    "recarga": "/v1/recarga/{recargaId}",
    "recargas": "/v1/recargas",
}
"""`rota=` of `falhar` beyond the server's own route patterns (`"/v1/car/{codigoCar}"`, ...):
the short names (`"car"`, `"completo"`, `"recibo"`, `"proprietario"`), the client's method names
(`"car_completo"`, and those of the free endpoints) and the history's endpoint names
(`"/v1/car/{codigo}"`, ...)."""


class ClienteTeste(Client):
    """A `carapi.Client` of an account made by `ServidorTeste.client()`; `.api_key` is that
    account's key (for a second client of the same account, or for `conta_de`)."""

    api_key: str


Conta = Union[str, Client]
"""An account of a test server: the key of `conta()` or the client of `client()`."""


def _chave(conta: Conta) -> str:
    if isinstance(conta, str):
        return conta
    chave = getattr(conta, "api_key", None)
    if not isinstance(chave, str):
        raise TypeError("conta: a chave de conta() ou o cliente de client() (não um id)")
    return chave


class ServidorTeste(_ServidorNativo):
    """A started test server; a context manager that stops it on exit.

    Args:
        limite_taxa: requests per second per key (default 10, the contract's); None turns the
            server's limiter off (with `client(rate_limit=None)` for a client without its own).
        banco: another database URL (`postgres://...`); default in-memory SQLite.

    It belongs to the process that started it: in a child after a fork its methods raise
    `RuntimeError` (the children's clients reach it over its `base_url` all the same).
    """

    def __enter__(self) -> "ServidorTeste":
        return self

    def __exit__(self, *exc: object) -> None:
        self.encerrar()

    def client(
        self,
        saldo: Optional[Dinheiro] = None,
        *,
        max_spend: Optional[Dinheiro] = None,
        timeout: Optional[float] = None,
        rate_limit: Optional[int] = 10,
        legado: bool = False,
        documento: Optional[str] = None,
        sem_documento: bool = False,
        limite_diario: Optional[int] = None,
        limite_mensal: Optional[Dinheiro] = None,
    ) -> ClienteTeste:
        """A client of a new account of this server.

        Args:
            saldo, legado, documento, sem_documento, limite_diario, limite_mensal: the
                account's (see `conta()`).
            max_spend, timeout: the client's (see `carapi.Client`).
            rate_limit: the client's limiter, default 10 requests/s as for any client (the
                contract's limit); None turns it off (for load tests, together with
                `ServidorTeste(limite_taxa=None)`).

        Returns:
            `ClienteTeste`: a `carapi.Client` with `.api_key`.
        """
        opcoes: Dict[str, Any] = {"sem_documento": sem_documento}
        if limite_diario is not None:
            opcoes["limite_diario"] = limite_diario
        if limite_mensal is not None:
            opcoes["limite_mensal"] = limite_mensal
        api_key = self.conta(saldo, legado, documento, **opcoes)
        c = ClienteTeste(
            base_url=self.base_url, api_key=api_key, max_spend=max_spend, timeout=timeout, rate_limit=rate_limit
        )
        c.api_key = api_key
        return c

    def falhar(
        self,
        tipo: TipoFalha,
        *,
        rota: Optional[str] = None,
        metodo: Optional[str] = None,
        conta: Optional[Conta] = None,
        vezes: Optional[int] = 1,
        codigo: Optional[str] = None,
        retry_after: Optional[int] = None,
        limite: Optional[Literal["taxa", "diario", "mensal"]] = None,
        ms: Optional[int] = None,
        bytes: Optional[int] = None,
    ) -> int:
        """Makes the next `vezes` matching requests fail; returns the rule's id.

        Args:
            tipo: `"erro"` (an error answer; `codigo=` the contract's code, e.g.
                `"ERRO_INTERNO"`, `"CAR_NAO_ENCONTRADO"`, `"LIMITE_EXCEDIDO"` with
                `limite=` and `retry_after=` seconds), `"atraso"` (answers `ms=` milliseconds
                late), `"resetar_conexao"` (resets the connection before answering; nothing
                charged), `"perder_resposta_apos_cobrar"` (charges, then drops the answer),
                `"cortar_corpo"` (cuts the body after `bytes=` bytes).
            rota: which endpoint: the server's route (`"/v1/car/{codigoCar}"`), the history's
                name (`"/v1/car/{codigo}"`) or a short name (`"car"`, `"completo"`, `"recibo"`,
                `"proprietario"`, `"saldo"`, ...; see `ROTAS`); None for every route.
            metodo: an HTTP method (`"GET"`, `"PUT"`, `"POST"`); None for any.
            conta: only the requests of this account: the key of `conta()` or the client of
                `client()`; None for every account.
            vezes: how many requests fail (default 1); None for every one until removed.

        Raises:
            ValueError: an unknown route or an invalid rule. TypeError: `conta` is neither.
        """
        campos: Dict[str, Any] = {
            k: v
            for k, v in (("codigo", codigo), ("retry_after", retry_after), ("limite", limite), ("ms", ms), ("bytes", bytes))
            if v is not None
        }
        return super().falhar(
            tipo,
            rota=ROTAS.get(rota, rota) if rota is not None else None,
            metodo=metodo,
            conta=_chave(conta) if conta is not None else None,
            vezes=vezes,
            **campos,
        )

    def conta_de(self, conta: Conta) -> EstadoConta:
        """The account as the store has it: `conta` is the key of `conta()` or the client of
        `client()`.

        Returns:
            dict (`carapi.tipos.EstadoConta`): contaId, saldo, legado, limiteDiario,
            limiteMensal, debitado (BRL debited in total), razaoConsistente.
        """
        return super().conta_de(_chave(conta))
