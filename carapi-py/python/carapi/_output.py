"""The files of `Client.lote(saida=...)`: the protocol of the CLI's `carapi lote --saida`, so that
the CLI and this package resume each other's batches and never run on one output at once.

- The lock: `.<name>.trava` beside the output, created when missing and never removed. A run
  takes an exclusive, non-blocking `flock` on it before it reads the output or sends anything,
  and holds it until the batch ends (the OS releases it when the process ends, however it
  ends); once locked, the file's contents become the holder's process id and a newline. A run
  that finds it held names that process and stops (`SaidaEmUso`): nothing read, sent or charged.
- The records: the output itself, JSON Lines, one record per lookup (`chave`, `status`
  `encontrado`/`nao_encontrado`/`erro`, `httpStatus`, `codigoErro`, `mensagem`, `cobrado`,
  `preco` as a JSON number, `arquivo`, `resposta`, `origem`, `compradoEm`), appended and flushed
  as each answer arrives. The newest record of a key wins; `encontrado` and `nao_encontrado` are
  final (a rerun skips them), `erro` is retried. A line cut short by a crash is cut before
  appending. At the end of every run the file is rewritten (a temporary file, then a rename)
  with one record per key, the input's keys first and in its order.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, cast

from .erros import SaidaEmUso

__all__ = ["Output", "lock_path", "RENDERED", "read_records", "final_records"]

RENDERED = (".csv", ".xlsx", ".geojson")
"""Outputs the CLI renders from hidden records: `saida=` takes the records file itself."""

FINAL = ("encontrado", "nao_encontrado")


def lock_path(output: Path) -> Path:
    """The lock of `output`: `.<name>.trava` in its folder."""
    return output.with_name(f".{output.name}.trava")


def _holder(fd: int) -> Optional[int]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return int(os.read(fd, 64).decode("ascii", "replace").strip())
    except (OSError, ValueError):
        return None


def _acquire(output: Path) -> int:
    import fcntl

    fd = os.open(lock_path(output), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = _holder(fd)
        os.close(fd)
        who = f"outra execução do carapi (PID {pid})" if pid is not None else "outra execução do carapi"
        raise SaidaEmUso(
            f"{who} está usando {output}; nada foi consultado nem cobrado: espere a outra "
            "execução terminar e rode de novo (ela retoma o lote), ou use outro arquivo em saida=",
            codigo="SAIDA_EM_USO",
            saida=str(output),
            pid=pid,
        ) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, f"{os.getpid()}\n".encode("ascii"))
    return fd


def read_records(path: Path) -> List[Dict[str, Any]]:
    """The records of `path` (none when it does not exist); lines that are not records (one
    cut short by a crash) are skipped. Amounts are `Decimal`, the contract's timestamps aware
    `datetime`."""
    from ._carapi import de_json

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    records: List[Dict[str, Any]] = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            value: Any = de_json(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(value, dict):
            continue
        record = cast(Dict[str, Any], value)
        if isinstance(record.get("chave"), str) and "status" in record:
            records.append(record)
    return records


def final_records(records: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The newest record of each key, when it is a final answer."""
    newest: Dict[str, Dict[str, Any]] = {}
    for r in records:
        newest[r["chave"]] = r
    return {k: r for k, r in newest.items() if r.get("status") in FINAL}


def kind_of(record: Dict[str, Any]) -> Optional[str]:
    """The lookup a record answers, from its answer's shape (as the CLI reads it): `recibo`,
    `proprietario`, `completo` or `car`; None without an answer."""
    if record.get("arquivo"):
        return "recibo"
    raw = record.get("resposta")
    if not isinstance(raw, dict):
        return None
    resposta = cast(Dict[str, Any], raw)
    if "itens" in resposta:
        return "proprietario"
    dados = resposta.get("dados")
    if isinstance(dados, dict) and "proprietariosNomes" in dados:
        return "completo"
    return "car"


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    iso = getattr(value, "isoformat", None)
    if callable(iso):
        return iso()
    raise TypeError(f"{type(value).__name__} não é serializável")


def encode(record: Dict[str, Any]) -> bytes:
    """One record as a JSON line (amounts as JSON numbers, instants in ISO 8601)."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=_json_default)
    return text.encode("utf-8") + b"\n"


def _open_for_append(path: Path) -> BinaryIO:
    f = open(path, "a+b")
    try:
        f.seek(0)
        data = f.read()
        complete = data.rfind(b"\n") + 1
        if complete < len(data):
            f.truncate(complete)
        f.seek(0, os.SEEK_END)
    except BaseException:
        f.close()
        raise
    return f


def replace_file(path: Path, data: bytes) -> None:
    """Replaces `path` with `data` atomically: a temporary file beside it, flushed to disk, then
    renamed over it; the temporary file is removed when anything fails."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Output:
    """One batch's output, locked from construction to `close` (see the module docs)."""

    def __init__(self, path: Path) -> None:
        if path.suffix.lower() in RENDERED:
            raise ValueError(
                f"saida={str(path)!r}: lote(saida=...) grava os registros do lote em JSON Lines "
                "(.jsonl), o formato que `carapi lote --saida` retoma; para uma planilha use "
                "lote.to_excel(...)"
            )
        self.path = path
        self._lock = _acquire(path)
        try:
            self.records = read_records(path)
            self._file: Optional[BinaryIO] = _open_for_append(path)
        except BaseException:
            os.close(self._lock)
            raise

    def append(self, record: Dict[str, Any]) -> None:
        """Appends one record and flushes it."""
        if self._file is not None:
            self._file.write(encode(record))
            self._file.flush()

    def close(self, order: Sequence[str]) -> None:
        """Rewrites the records (one per key, the newest; `order`'s keys first, in its order),
        then releases the lock. Idempotent."""
        if self._file is None:
            return
        try:
            self._file.close()
            self._file = None
            newest: Dict[str, Dict[str, Any]] = {}
            first_seen: Dict[str, int] = {}
            for i, r in enumerate(read_records(self.path)):
                first_seen.setdefault(r["chave"], i)
                newest[r["chave"]] = r
            position = {k: i for i, k in enumerate(order)}
            keys = sorted(newest, key=lambda k: (k not in position, position.get(k, first_seen[k])))
            replace_file(self.path, b"".join(encode(newest[k]) for k in keys))
        finally:
            os.close(self._lock)
