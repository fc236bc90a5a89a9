"""`close()`, the end of `with` and the end of the interpreter wait for the purchases the client
sent: a program that returns right after a lookup (or while a lookup of another thread is in
flight) keeps its answer in the archive, and a rerun buys nothing again."""

import subprocess
import sys
import textwrap
from decimal import Decimal

import carapi
from carapi.testing import IMOVEIS
from conftest import CODIGO, PRECO_CAR, PRECO_RECIBO

COM_RECIBO = [i["codigoCar"] for i in IMOVEIS if i["recibo"]][:5]


def _program(srv, key, archive, body):
    source = textwrap.dedent(
        f"""
        import threading, time, carapi
        c = carapi.Client({srv.base_url!r}, {key!r}, acervo={str(archive)!r},
                          finalidade="auditoria", base_legal="execucao-contrato")
        """
    ) + textwrap.dedent(body)
    r = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_programs_that_return_right_after_a_receipt_keep_it(carapi_servidor, tmp_path):
    archive = tmp_path / "acervo.sqlite3"
    key = carapi_servidor.conta(saldo="200")
    for code in COM_RECIBO:
        _program(carapi_servidor, key, archive, f"c.recibo({code!r})\n")
    kept = carapi.Acervo(archive).listar()
    assert sorted(e["chave"] for e in kept if e["operacao"] == "recibo") == sorted(COM_RECIBO)
    debited = carapi_servidor.conta_de(key)["debitado"]
    assert debited == PRECO_RECIBO * len(COM_RECIBO)
    for code in COM_RECIBO:
        _program(carapi_servidor, key, archive, f"assert c.recibo({code!r}).startswith(b'%PDF')\n")
    assert carapi_servidor.conta_de(key)["debitado"] == debited, "nothing bought twice"


def test_a_lookup_in_flight_when_the_interpreter_ends_is_archived(carapi_servidor, tmp_path):
    archive = tmp_path / "acervo.sqlite3"
    key = carapi_servidor.conta(saldo="10")
    carapi_servidor.falhar("atraso", rota="car", ms=3000)
    # The daemon thread's lookup is sent, then the main thread returns: atexit closes the
    # client, which waits for the purchase to end and commit.
    _program(
        carapi_servidor, key, archive,
        f"""
        threading.Thread(target=c.car, args=({CODIGO!r},), daemon=True).start()
        time.sleep(1.0)
        """,
    )
    kept = carapi.Acervo(archive).listar()
    assert [(e["operacao"], e["chave"]) for e in kept] == [("car", CODIGO)]
    assert carapi_servidor.conta_de(key)["debitado"] == PRECO_CAR
    c = carapi.Client(carapi_servidor.base_url, key, acervo=archive, finalidade="auditoria",
                      base_legal="execucao-contrato")
    assert c.car(CODIGO)["origem"] == "acervo"
    assert carapi_servidor.conta_de(key)["debitado"] == PRECO_CAR


def test_close_and_with_wait_then_refuse_and_keep_gasto(carapi_servidor):
    with carapi_servidor.client(saldo="5") as c:
        c.car(CODIGO)
    assert c.fechado
    assert c.gasto()["confirmado"] == PRECO_CAR
    assert c.__exit__(None, None, None) is None
    c.close()
    assert c.gasto()["total"] == Decimal("1.00")
