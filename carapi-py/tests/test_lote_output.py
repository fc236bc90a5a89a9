"""`lote(saida=...)`: the records and the lock of the CLI's `carapi lote --saida`, a rerun that buys
only what is missing, Ctrl-C taken between keys with the paid rows kept, and the CLI and this
package refusing each other on one output while resuming each other's records."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path

import pytest

import carapi
from carapi.testing import CODIGOS_CAR
from conftest import CODIGO, CODIGO_2, CODIGO_INEXISTENTE, PRECO_CAR

REPO = Path(__file__).resolve().parents[2]


def _records(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_saida_writes_the_clis_records_and_a_rerun_buys_only_what_is_missing(carapi_servidor, tmp_path):
    client = carapi_servidor.client(saldo="10")
    out = tmp_path / "lote.jsonl"
    first = client.lote([CODIGO, CODIGO_INEXISTENTE], saida=out, progresso=False)
    assert first.saida == out
    found, missing = _records(out)
    assert found["chave"] == CODIGO and found["status"] == "encontrado" and found["httpStatus"] == 200
    assert found["cobrado"] is True and found["preco"] == 1.0 and isinstance(found["preco"], float)
    assert found["resposta"]["dados"]["codigoCar"] == CODIGO
    assert missing == {
        "chave": CODIGO_INEXISTENTE, "status": "nao_encontrado", "httpStatus": 404,
        "codigoErro": "CAR_NAO_ENCONTRADO", "mensagem": missing["mensagem"], "cobrado": False,
    }
    lock = tmp_path / ".lote.jsonl.trava"
    assert lock.read_text() == f"{os.getpid()}\n", "the holder's pid, kept after the run"

    again = client.lote([CODIGO_2, CODIGO.lower(), CODIGO_INEXISTENTE], saida=out, progresso=False)
    assert [r.status for r in again] == ["ok", "ok", "erro"]
    assert [r.retomado for r in again] == [False, True, True]
    assert again[1].dados == first[0].dados and again[1].cobrado is True
    assert again.gasto == PRECO_CAR
    assert client.historico(endpoint="car")["total"] == 3, "CODIGO and the 404 not asked again"
    assert [r["chave"] for r in _records(out)] == [CODIGO_2, CODIGO, CODIGO_INEXISTENTE], "compacted in input order"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lote.jsonl.trava", "lote.jsonl"]


def test_an_error_record_is_retried_and_another_kind_is_refused(carapi_servidor, tmp_path):
    client = carapi_servidor.client(saldo="10")
    out = tmp_path / "r.jsonl"
    carapi_servidor.falhar("erro", rota="car", codigo="ERRO_INTERNO", vezes=None)
    lote = client.lote([CODIGO], saida=out, progresso=False)
    assert lote[0].erro == "ERRO_INTERNO" and _records(out)[0]["status"] == "erro"
    carapi_servidor.limpar_falhas()
    assert client.lote([CODIGO], saida=out, progresso=False)[0].status == "ok"
    with pytest.raises(ValueError, match="lote car"):
        client.lote([CODIGO], consulta="completo", saida=out, progresso=False)
    with pytest.raises(ValueError, match="jsonl"):
        client.lote([CODIGO], saida=tmp_path / "r.xlsx", progresso=False)
    assert client.historico(endpoint="completo")["total"] == 0


def test_a_held_lock_is_refused_naming_its_holder_before_anything_is_sent(carapi_servidor, tmp_path):
    client = carapi_servidor.client(saldo="10")
    out = tmp_path / "lote.jsonl"
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import fcntl, os, sys\n"
            f"fd = os.open({str(tmp_path / '.lote.jsonl.trava')!r}, os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
            "os.write(fd, f'{os.getpid()}\\n'.encode())\n"
            "print('locked', flush=True)\n"
            "sys.stdin.read()\n"
        )],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(carapi.SaidaEmUso) as e:
            client.lote([CODIGO], saida=out, progresso=False)
        assert e.value.pid == holder.pid and f"PID {holder.pid}" in str(e.value)
        assert e.value.codigo == "SAIDA_EM_USO" and isinstance(e.value, carapi.ApiError)
        assert client.historico()["total"] == 0 and not out.exists()
    finally:
        holder.communicate("", timeout=30)
    assert client.lote([CODIGO], saida=out, progresso=False)[0].status == "ok", "free once released"


def test_an_interrupted_lote_keeps_its_paid_rows_and_a_rerun_pays_each_code_once(carapi_servidor, tmp_path):
    client = carapi_servidor.client(saldo="100")
    codes = CODIGOS_CAR[:12]
    out = tmp_path / "lote.jsonl"
    # 12 keys at 300 ms each: the interrupt lands in the middle of the batch.
    carapi_servidor.falhar("atraso", rota="car", ms=300, vezes=None)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(carapi.LoteInterrompido) as e:
        client.lote(codes, saida=out, progresso=False)
    timer.join()
    assert isinstance(e.value, KeyboardInterrupt)
    parcial = e.value.parcial
    assert client.ultimo_lote is parcial and len(parcial) == len(codes)
    paid = [r.chave for r in parcial if r.status == "ok"]
    assert paid == codes[: len(paid)] and len(paid) < len(codes)
    assert {r.erro for r in parcial if r.status != "ok"} == {"INTERROMPIDO"}
    # Every key the server charged is a kept row, and in the records.
    assert carapi_servidor.conta_de(client)["debitado"] == PRECO_CAR * len(paid)
    assert [r["chave"] for r in _records(out)] == paid

    carapi_servidor.limpar_falhas()
    rerun = client.lote(codes, saida=out, progresso=False)
    assert all(r.status == "ok" for r in rerun)
    assert carapi_servidor.conta_de(client)["debitado"] == PRECO_CAR * len(codes), "each code paid once"


def _carapi_bin():
    """The CLI binary: `$CARAPI_BIN`, else the workspace's `target/debug/carapi` (built by
    `cargo build -p carapi-cli`); the test is skipped, saying so, without it."""
    given = os.environ.get("CARAPI_BIN")
    if given:
        return given
    built = REPO / "target" / "debug" / "carapi"
    if built.is_file() and os.access(built, os.X_OK):
        return str(built)
    pytest.skip("the CLI binary is not here: cargo build -p carapi-cli, or set CARAPI_BIN")


def _cli(srv, key, tmp_path, input_file, out):
    env = {k: v for k, v in os.environ.items() if k not in ("CARAPI_LOCAL", "NO_COLOR", "RUST_LOG")}
    env.update(
        CARAPI_BASE_URL=srv.base_url, CARAPI_API_KEY=key, CARAPI_KEYRING="off",
        CARAPI_CONFIG_DIR=str(tmp_path / "config"), CARAPI_DATA_DIR=str(tmp_path / "data"),
    )
    return subprocess.Popen(
        [_carapi_bin(), "lote", "car", str(input_file), "--saida", str(out), "--sim"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _wait_for_lock(out, pid):
    lock = out.with_name(f".{out.name}.trava")
    for _ in range(600):
        if lock.exists() and lock.read_text().strip() == str(pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"{lock} never named {pid}")


def test_the_cli_and_python_exclude_each_other_and_resume_each_others_records(carapi_servidor, tmp_path):
    _carapi_bin()
    key = carapi_servidor.conta(saldo="100")
    client = carapi.Client(carapi_servidor.base_url, key)
    codes = CODIGOS_CAR[:5]
    out = tmp_path / "lote.jsonl"
    input_file = tmp_path / "codigos.txt"
    input_file.write_text("\n".join(codes) + "\n")

    # Python's batch holds the output: the CLI is refused at once, naming this process.
    carapi_servidor.falhar("atraso", rota="car", ms=400, vezes=None)
    python_run = threading.Thread(target=client.lote, args=(codes[:3],), kwargs={"saida": out, "progresso": False})
    python_run.start()
    _wait_for_lock(out, os.getpid())
    cli = _cli(carapi_servidor, key, tmp_path, input_file, out)
    _, err = cli.communicate(timeout=120)
    python_run.join()
    assert cli.returncode == 1, err
    assert "SAIDA_EM_USO" in err and f"PID {os.getpid()}" in err
    assert [r["chave"] for r in _records(out)] == codes[:3]

    # The CLI's run holds it: Python is refused, naming the CLI; the CLI resumes Python's records.
    cli = _cli(carapi_servidor, key, tmp_path, input_file, out)
    _wait_for_lock(out, cli.pid)
    with pytest.raises(carapi.SaidaEmUso) as e:
        client.lote(codes, saida=out, progresso=False)
    assert e.value.pid == cli.pid
    _, err = cli.communicate(timeout=120)
    assert cli.returncode == 0, err
    carapi_servidor.limpar_falhas()
    assert carapi_servidor.conta_de(key)["debitado"] == PRECO_CAR * 5, "the CLI bought only the 2 missing"

    # Python resumes the CLI's records: nothing bought again.
    lote = client.lote(codes, saida=out, progresso=False)
    assert [r.retomado for r in lote] == [True] * 5 and lote.gasto == Decimal("0")
    assert all(r.status == "ok" and r.dados and r.dados["codigoCar"] == c for r, c in zip(lote, codes))
    assert carapi_servidor.conta_de(key)["debitado"] == PRECO_CAR * 5
    assert [r["chave"] for r in _records(out)] == codes
