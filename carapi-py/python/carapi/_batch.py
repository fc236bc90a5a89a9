"""Running a batch (`Client.lote`) and estimating one (`Client.estimar_lote`): the rows and their
distinct keys, the records of `saida=`, the stops, and Ctrl-C taken between keys."""

from __future__ import annotations

import dataclasses
import signal
import sys
import threading
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Union, cast

from ._carapi import CONSULTAS, CancelToken, com_cancelamento, no_acervo, validar_codigo_car, validar_documento
from ._output import Output, final_records, kind_of, read_records
from .erros import (
    ApiError, Cancelado, EntradaInvalida, LimiteExcedido, RespostaPerdida, SaldoInsuficiente, TokenInvalido,
)
from .lote import Lote, LoteInterrompido, ResultadoLote

if TYPE_CHECKING:  # pragma: no cover
    import os

    from . import Client
    from ._carapi import Client as NativeClient
    from .tipos import EstimativaLote

ENTRIES: Dict[str, Dict[str, Any]] = {c["curto"]: c for c in CONSULTAS if c["curto"] != "recibo"}
"""`consulta=` of `lote` -> the SDK's table row of that lookup (`carapi._carapi.CONSULTAS`)."""

Money = Union[Decimal, int, str]


def entry_of(consulta: str) -> Dict[str, Any]:
    if consulta not in ENTRIES:
        raise ValueError(f"consulta inválida: {consulta!r} ({', '.join(ENTRIES)})")
    return ENTRIES[consulta]


@dataclass
class Row:
    """One input row: the key as given, its canonical form or why it is not one, and the first
    row with the same key."""

    raw: str
    key: Optional[str]
    invalid: Optional[ApiError]
    first: Optional[int]


def plan(chaves: Iterable[Any], entry: Dict[str, Any]) -> List[Row]:
    check = validar_codigo_car if entry["codigo_car"] else validar_documento
    rows: List[Row] = []
    seen: Dict[str, int] = {}
    for i, c in enumerate(chaves):
        raw = str(c)
        try:
            key = check(raw)
        except EntradaInvalida as e:
            rows.append(Row(raw, None, e, None))
            continue
        rows.append(Row(raw, key, None, seen.get(key)))
        seen.setdefault(key, i)
    return rows


def distinct(rows: List[Row]) -> List[str]:
    return [r.key for r in rows if r.key is not None and r.first is None]


def money(value: Optional[Money], name: str) -> Optional[Decimal]:
    if value is None:
        return None
    if isinstance(value, float):
        raise TypeError(f"{name} em reais como float: use decimal.Decimal, int ou str")
    return Decimal(str(value))


def _aware(value: Any) -> Optional[datetime]:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return None


def _answer_data(entry: Dict[str, Any], resposta: Dict[str, Any]) -> Dict[str, Any]:
    if entry["nome"] == "proprietario":
        return {k: resposta[k] for k in ("total", "limite", "truncado", "itens") if k in resposta}
    return cast(Dict[str, Any], resposta.get("dados") or {})


def from_record(entry: Dict[str, Any], key: str, r: Dict[str, Any]) -> ResultadoLote:
    """The result of a key that the records of `saida=` already answer."""
    found = r.get("status") == "encontrado"
    raw = r.get("resposta")
    resposta = cast(Dict[str, Any], raw) if isinstance(raw, dict) else None
    return ResultadoLote(
        key,
        "ok" if found else "erro",
        dados=_answer_data(entry, resposta) if found and resposta is not None else None,
        erro=None if found else r.get("codigoErro"),
        http=r.get("httpStatus"),
        cobrado=bool(r.get("cobrado")),
        sandbox=bool(resposta is not None and resposta.get("sandbox")),
        origem=r.get("origem"),
        comprado_em=_aware(r.get("compradoEm")),
        chave_normalizada=key,
        preco=r.get("preco") if r.get("cobrado") else None,
        retomado=True,
    )


def record_of(result: ResultadoLote, resposta: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The record of a key looked up now (the CLI's names)."""
    status = "encontrado" if result.status == "ok" else "nao_encontrado" if result.http == 404 else "erro"
    record: Dict[str, Any] = {"chave": result.chave_normalizada, "status": status}
    if result.http is not None:
        record["httpStatus"] = result.http
    if result.erro is not None:
        record["codigoErro"] = result.erro
    if result.excecao is not None:
        record["mensagem"] = result.excecao.mensagem
    record["cobrado"] = bool(result.cobrado)
    if result.cobrado and result.preco is not None:
        record["preco"] = result.preco
    if resposta is not None:
        record["resposta"] = {k: v for k, v in resposta.items() if k not in ("origem", "compradoEm")}
    if result.origem is not None:
        record["origem"] = result.origem
        record["compradoEm"] = result.comprado_em
    return record


def progress_bar(total: int, enabled: bool) -> Callable[[], None]:
    """A progress bar: tqdm (terminal or Jupyter) when installed, else a line on a terminal's
    stderr; nothing for short batches or when disabled."""
    if not enabled or total < 20:
        return lambda: None
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped, unused-ignore]

        bar = tqdm(total=total, unit="consulta", desc="carapi lote")
        done = [0]

        def step() -> None:
            bar.update(1)
            done[0] += 1
            if done[0] == total:
                bar.close()

        return step
    except ImportError:
        pass
    if not sys.stderr.isatty():
        return lambda: None
    count = [0]

    def line() -> None:
        count[0] += 1
        width = 30
        full = width * count[0] // total
        sys.stderr.write(f"\rcarapi lote [{'#' * full}{'.' * (width - full)}] {count[0]}/{total}")
        if count[0] == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return line


# Errors after which every next key would fail too: the batch stops (as the CLI's `lote`).
def _stop_reason(e: Optional[ApiError]) -> Optional[str]:
    if e is None or e.sandbox:
        return None
    if isinstance(e, SaldoInsuficiente):
        return "saldo insuficiente (402): recarregue (criar_recarga) e rode de novo"
    if isinstance(e, LimiteExcedido) and getattr(e, "limite", None) in ("diario", "mensal"):
        quando = "à meia-noite de Brasília" if e.limite == "diario" else "no dia 1º do mês"
        return f"limite {e.limite} da conta atingido (429): ele volta {quando} (ou ajuste atualizar_limites)"
    if isinstance(e, TokenInvalido):
        return "chave de API inválida (401)"
    return None


class Run:
    """One run of a batch: its rows, its results by key, why it stopped."""

    def __init__(
        self,
        client: "Client",
        entry: Dict[str, Any],
        rows: List[Row],
        limit: Optional[Decimal],
        stop: threading.Event,
        token: CancelToken,
    ) -> None:
        self.client = client
        self.entry = entry
        self.rows = rows
        self.limit = limit
        self.stop = stop
        self.token = token
        self.handle: "NativeClient" = com_cancelamento(client, token)
        self.results: Dict[str, ResultadoLote] = {}
        self.parada: Optional[str] = None
        self.stop_code: Optional[str] = None
        self.interrupted = False
        self.started = False
        self.saida: Optional[Path] = None
        self.spent_start = Decimal("0")
        self.error: Optional[BaseException] = None

    def interrupt(self) -> None:
        """Ctrl-C: no further key; a key waiting to be sent gives up, the one in flight ends."""
        self.interrupted = True
        self.stop.set()
        self.token.cancel()

    def spent(self) -> Decimal:
        return self.client.gasto()["total"] - self.spent_start

    def execute(self, saida: Optional[Path], progress: bool) -> None:
        output = Output(saida) if saida is not None else None
        keys = distinct(self.rows)
        try:
            if output is not None:
                self.saida = output.path
                self._resume(output, keys)
            pending = [k for k in keys if k not in self.results]
            self.started = True
            self.spent_start = self.client.gasto()["total"]
            price = Decimal("0")
            if pending:
                price = cast(Dict[str, Decimal], self.client.precos())[self.entry["campo_preco"]]
            step = progress_bar(len(pending), progress)
            for key in pending:
                self.results[key] = self._one(key, price, output)
                step()
        finally:
            if output is not None:
                output.close(keys)

    def _resume(self, output: Output, keys: List[str]) -> None:
        kinds = {kind_of(r) for r in output.records} - {None}
        other = next((k for k in kinds if k != self.entry["curto"]), None)
        if other is not None:
            raise ValueError(
                f"{output.path} tem respostas de `lote {other}`, não de `lote {self.entry['curto']}`: "
                "use outro arquivo em saida= (nada foi cobrado)"
            )
        finals = final_records(output.records)
        for key in keys:
            if key in finals:
                self.results[key] = from_record(self.entry, key, finals[key])

    def _one(self, key: str, price: Decimal, output: Optional[Output]) -> ResultadoLote:
        sandbox = key in self.entry["sandbox"]
        if self.stop.is_set() or self.stop_code is not None:
            code = self.stop_code or ("INTERROMPIDO" if self.interrupted else "CANCELADO")
            return ResultadoLote(key, "nao_consultada", erro=code, chave_normalizada=key)
        if self.limit is not None and not sandbox and self.spent() + price > self.limit:
            return ResultadoLote(key, "nao_consultada", erro="MAX_CUSTO", chave_normalizada=key)
        result, resposta = self._lookup(key, price)
        reason = _stop_reason(result.excecao)
        if reason is not None:
            self.stop_code = result.erro
            self.parada = f"lote parado na chave {key}: {reason}"
            return result
        if output is not None and result.status != "nao_consultada" and result.erro != "LIMITE_DE_GASTO":
            output.append(record_of(result, resposta))
        return result

    def _lookup(self, key: str, price: Decimal) -> "tuple[ResultadoLote, Optional[Dict[str, Any]]]":
        method = getattr(self.handle, self.entry["nome"])
        try:
            r: Dict[str, Any] = method(key)
        except Cancelado as e:
            code = "INTERROMPIDO" if self.interrupted else "CANCELADO"
            return ResultadoLote(key, "nao_consultada", erro=code, excecao=e, chave_normalizada=key), None
        except RespostaPerdida as e:
            return ResultadoLote(key, "erro", erro=e.codigo, cobrado=None, excecao=e, chave_normalizada=key), None
        except ApiError as e:
            result = ResultadoLote(
                key, "erro", erro=e.codigo, http=e.status, sandbox=e.sandbox, excecao=e, chave_normalizada=key
            )
            return result, None
        sandbox = bool(r.get("sandbox"))
        origem = r.get("origem")
        cobrado = not sandbox and origem != "acervo"
        result = ResultadoLote(
            key,
            "ok",
            dados=_answer_data(self.entry, r),
            http=200,
            cobrado=cobrado,
            sandbox=sandbox,
            origem=origem,
            comprado_em=r.get("compradoEm"),
            chave_normalizada=key,
            preco=price if cobrado else None,
        )
        return result, r

    def lote(self) -> Lote:
        """The rows in input order: each valid row its key's result (a repeated key's with
        `cobrado` False and `duplicata_de`), each invalid row its error."""
        out: List[ResultadoLote] = []
        for row in self.rows:
            if row.key is None:
                e = row.invalid
                out.append(ResultadoLote(row.raw, "erro", erro=e.codigo if e else None, excecao=e))
                continue
            base = self.results.get(row.key)
            if base is None:
                code = "INTERROMPIDO" if self.interrupted else (self.stop_code or "CANCELADO")
                base = ResultadoLote(row.key, "nao_consultada", erro=code, chave_normalizada=row.key)
            if row.first is None:
                out.append(dataclasses.replace(base, chave=row.raw))
            else:
                out.append(dataclasses.replace(base, chave=row.raw, cobrado=False, preco=None, duplicata_de=row.first))
        if self.interrupted and self.parada is None:
            self.parada = "lote interrompido (Ctrl-C): as chaves já respondidas foram mantidas"
        spent = self.spent() if self.started else Decimal("0")
        return Lote(self.entry["curto"], out, spent, self.parada, self.saida)


def _run_deferring_sigint(run: Run, saida: Optional[Path], progress: bool) -> None:
    """Runs the batch with SIGINT taken between keys: in the main thread with Python's default
    handler, the batch runs in a worker thread while this one waits (a signal handler runs only
    between the main thread's bytecodes, not inside a call into the extension); a first Ctrl-C
    stops it after the key in flight, a second returns at once (the worker still ends its key,
    writes its record and releases `saida`)."""
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        run.execute(saida, progress)
        return

    def worker() -> None:
        try:
            run.execute(saida, progress)
        except BaseException as e:  # handed to the caller's thread
            run.error = e

    def on_sigint(signum: int, frame: Any) -> None:
        if run.interrupted:
            raise KeyboardInterrupt
        run.interrupt()

    thread = threading.Thread(target=worker, name="carapi-lote", daemon=True)
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        thread.start()
        while thread.is_alive():
            thread.join(0.2)
    except KeyboardInterrupt:
        run.interrupted = True
    finally:
        signal.signal(signal.SIGINT, previous)
    if run.error is not None:
        raise run.error


def execute(
    client: "Client",
    chaves: Iterable[Any],
    consulta: str = "car",
    max_custo: Optional[Money] = None,
    progresso: bool = True,
    saida: Union[str, "os.PathLike[str]", None] = None,
    parar: Optional[threading.Event] = None,
    token: Optional[CancelToken] = None,
) -> Lote:
    """See `Client.lote`. `parar` and `token` (set and cancelled by `AsyncClient.lote` when its
    task is cancelled) stop sending: the keys not yet sent get status `"nao_consultada"`."""
    entry = entry_of(consulta)
    limit = money(max_custo, "max_custo")
    run = Run(client, entry, plan(chaves, entry), limit, parar or threading.Event(), token or CancelToken())
    lote: Optional[Lote] = None
    try:
        _run_deferring_sigint(run, Path(saida) if saida is not None else None, progresso)
    finally:
        if run.started:
            lote = run.lote()
            client.ultimo_lote = lote
    if lote is None:  # interrupted before anything was looked up
        raise KeyboardInterrupt
    if run.interrupted:
        raise LoteInterrompido(lote) from KeyboardInterrupt()
    if run.parada is not None:
        import warnings

        warnings.warn(run.parada, stacklevel=3)
    return lote


def estimate(
    client: "Client",
    chaves: Iterable[Any],
    consulta: str = "car",
    saida: Union[str, "os.PathLike[str]", None] = None,
) -> "EstimativaLote":
    """See `Client.estimar_lote`."""
    entry = entry_of(consulta)
    rows = plan(chaves, entry)
    keys = distinct(rows)
    answered = final_records(read_records(Path(saida))) if saida is not None else {}
    pending = [k for k in keys if k not in answered]
    sandbox = [k for k in pending if k in entry["sandbox"]]
    chargeable = [k for k in pending if k not in entry["sandbox"]]
    archived = no_acervo(client, entry["nome"], chargeable)
    saldo = client.saldo()
    price = cast(Dict[str, Decimal], saldo["precos"])[entry["campo_preco"]]
    to_buy = len(chargeable) - archived
    return {
        "consulta": entry["curto"],
        "linhas": len(rows),
        "validas": sum(r.key is not None for r in rows),
        "invalidas": sum(r.key is None for r in rows),
        "unicas": len(keys),
        "repetidas": sum(r.first is not None for r in rows),
        "ja_na_saida": len(keys) - len(pending),
        "sandbox": len(sandbox),
        "no_acervo": archived,
        "a_comprar": to_buy,
        "preco": price,
        "custo_maximo": price * to_buy,
        "saldo": saldo["saldoReais"],
    }
