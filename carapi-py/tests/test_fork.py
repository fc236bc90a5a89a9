"""A child made by `fork` after the parent's first request gets a runtime and connections of
its own: its lookups answer (the pool's `get(timeout=...)` fails the test instead of hanging),
it counts its own spending from the fork on, and the parent's client keeps working."""

import multiprocessing
import os
from decimal import Decimal

import pytest

import carapi
from conftest import CODIGO, CODIGO_2, CODIGO_3, PRECO_CAR

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork exists only on POSIX")

# The parent's client and test server, inherited by the children through fork.
_HERDADO = {}


def _com_o_cliente_do_pai(codigo):
    client = _HERDADO["client"]
    antes = client.gasto()["total"]
    r = client.car(codigo)
    return os.getpid(), r["dados"]["codigoCar"], antes, client.gasto()["total"]


def _com_um_cliente_novo(args):
    base_url, chave, codigo = args
    client = carapi.Client(base_url=base_url, api_key=chave, timeout=10)
    return os.getpid(), client.car(codigo)["dados"]["codigoCar"]


def _o_que_nao_vai_para_o_filho(_):
    erros = []
    try:
        next(_HERDADO["paginas"])
    except RuntimeError as e:
        erros.append(str(e))
    try:
        _HERDADO["servidor"].conta()
    except RuntimeError as e:
        erros.append(str(e))
    return erros


def _pool(processos):
    # One task per child (maxtasksperchild=1): every task runs in a child forked for it, from
    # the pool's thread, while the parent's runtime and test server are running.
    return multiprocessing.get_context("fork").Pool(processos, maxtasksperchild=1)


def test_forked_children_answer_and_the_parent_keeps_working(carapi_servidor):
    client = carapi_servidor.client(saldo="100", timeout=10)
    # The parent's first request: its runtime runs and a connection is pooled.
    assert client.car(CODIGO)["dados"]["codigoCar"] == CODIGO
    _HERDADO["client"] = client
    codigos = [CODIGO_2, CODIGO_3, CODIGO_2, CODIGO_3]
    with _pool(2) as pool:
        herdados = pool.map_async(_com_o_cliente_do_pai, codigos).get(timeout=90)
        novos = pool.map_async(
            _com_um_cliente_novo, [(client.base_url, client.api_key, CODIGO)] * 2
        ).get(timeout=90)

    assert [h[1] for h in herdados] == codigos
    assert all(n[1] == CODIGO for n in novos)
    assert os.getpid() not in {h[0] for h in herdados} | {n[0] for n in novos}
    # Each child counts its own spending from the fork on (the parent had spent R$ 1,00).
    assert all((antes, depois) == (Decimal("0"), PRECO_CAR) for _, _, antes, depois in herdados)

    # The parent's client still works, and counts only its own lookups.
    assert client.car(CODIGO_3)["dados"]["codigoCar"] == CODIGO_3
    assert client.gasto()["confirmado"] == 2 * PRECO_CAR
    # Every lookup reached the server once and was charged once.
    assert carapi_servidor.conta_de(client)["debitado"] == PRECO_CAR * (2 + len(codigos) + 2)


def test_a_child_refuses_what_cannot_follow_it(carapi_servidor):
    client = carapi_servidor.client(saldo="10")
    client.car(CODIGO)
    _HERDADO["paginas"] = client.historico_todo(size=1)
    _HERDADO["servidor"] = carapi_servidor
    with _pool(1) as pool:
        erros = pool.map_async(_o_que_nao_vai_para_o_filho, [0]).get(timeout=60)[0]
    assert len(erros) == 2 and "outro processo" in erros[0] and "outro processo" in erros[1]
    # In the parent both still work.
    assert next(_HERDADO["paginas"])["chaveConsulta"] == CODIGO
    assert carapi_servidor.conta(saldo="1").startswith("car_")


def _origem_no_filho(codigo):
    r = _HERDADO["arquivado"].car(codigo)
    return r["origem"], _HERDADO["arquivado"].gasto()["total"]


def test_forked_children_read_and_append_to_the_archive(carapi_servidor, tmp_path):
    client = carapi.Client(
        carapi_servidor.base_url,
        carapi_servidor.conta(saldo="100"),
        timeout=10,
        acervo=tmp_path / "acervo.sqlite3",
        finalidade="monitoramento",
        base_legal="interesse-legitimo",
    )
    assert client.car(CODIGO)["origem"] == "api"
    _HERDADO["arquivado"] = client
    with _pool(1) as pool:
        # The child opens the file again: it reads the parent's entry and appends its purchase.
        filhos = pool.map_async(_origem_no_filho, [CODIGO, CODIGO_2]).get(timeout=90)
    assert filhos == [("acervo", Decimal("0")), ("api", PRECO_CAR)]
    assert client.car(CODIGO_2)["origem"] == "acervo"
    assert client.saldo()["saldoReais"] == Decimal("100") - 2 * PRECO_CAR
