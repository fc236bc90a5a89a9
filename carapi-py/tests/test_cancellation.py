"""`AsyncClient`: a cancelled task's lookup is never lost from `gasto()`: counted as possibly
charged while its request is still out, then as what its answer says."""

import asyncio
import sys
from decimal import Decimal

import pytest

import carapi
from conftest import CODIGO, CODIGO_2, CODIGO_3, PRECO_CAR, PRECO_COMPLETO

ZERO = Decimal("0")


def _ac(srv, chave):
    return carapi.AsyncClient(base_url=srv.base_url, api_key=chave)


def test_wait_for_timeout_counts_the_lookup_then_confirms_it(carapi_servidor):
    chave = carapi_servidor.conta(saldo="10")

    async def principal():
        async with _ac(carapi_servidor, chave) as ac:
            await ac.precos()
            carapi_servidor.falhar("atraso", rota="car", ms=1500)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(ac.car(CODIGO), 0.3)
            durante = ac.gasto()
        return durante, ac.gasto()

    durante, depois = asyncio.run(principal())
    # Still out when the task was cancelled: possibly charged.
    assert (durante["incerto"], durante["total"]) == (PRECO_CAR, PRECO_CAR)
    # `async with` waited for it: answered 200, so charged and confirmed.
    assert depois == {"confirmado": PRECO_CAR, "incerto": ZERO, "total": PRECO_CAR, "nao_precificadas": 0}
    assert carapi_servidor.conta_de(chave)["debitado"] == PRECO_CAR


def test_an_error_answer_after_the_cancel_costs_nothing(carapi_servidor):
    chave = carapi_servidor.conta(saldo="10")

    async def principal():
        async with _ac(carapi_servidor, chave) as ac:
            await ac.precos()
            carapi_servidor.falhar("atraso", rota="car", ms=1000)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(ac.car("DF-5300108-00000000000000000000000000000ABC"), 0.2)
            assert ac.gasto()["total"] == PRECO_CAR
        return ac.gasto()

    assert asyncio.run(principal())["total"] == ZERO
    assert carapi_servidor.conta_de(chave)["debitado"] == ZERO


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.TaskGroup is Python 3.11+")
def test_taskgroup_cancellation_counts_every_lookup_out(carapi_servidor):
    chave = carapi_servidor.conta(saldo="10")

    async def falha():
        await asyncio.sleep(0.3)
        raise ValueError("outra tarefa falhou")

    async def principal():
        async with _ac(carapi_servidor, chave) as ac:
            await ac.precos()
            carapi_servidor.falhar("atraso", rota="car", ms=1500)
            carapi_servidor.falhar("atraso", rota="completo", ms=1500)
            with pytest.raises(ExceptionGroup):  # noqa: F821 (3.11+)
                async with asyncio.TaskGroup() as tg:
                    tg.create_task(ac.car(CODIGO))
                    tg.create_task(ac.car_completo(CODIGO_2))
                    tg.create_task(falha())
            assert ac.gasto()["total"] == PRECO_CAR + PRECO_COMPLETO
        return ac.gasto()

    assert asyncio.run(principal())["confirmado"] == PRECO_CAR + PRECO_COMPLETO
    assert carapi_servidor.conta_de(chave)["debitado"] == PRECO_CAR + PRECO_COMPLETO


def test_a_cancelled_lote_sends_no_further_key(carapi_servidor):
    chave = carapi_servidor.conta(saldo="10")

    async def principal():
        async with _ac(carapi_servidor, chave) as ac:
            carapi_servidor.falhar("atraso", rota="car", ms=400, vezes=None)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(ac.lote([CODIGO, CODIGO_2, CODIGO_3] * 3, progresso=False), 0.6)
            assert ac.gasto()["total"] >= PRECO_CAR
        return ac.gasto()

    gasto = asyncio.run(principal())
    enviadas = carapi.Client(base_url=carapi_servidor.base_url, api_key=chave).historico(endpoint="car")["total"]
    assert 1 <= enviadas <= 3, "the batch stopped after its cancellation"
    assert gasto["confirmado"] == enviadas * PRECO_CAR == carapi_servidor.conta_de(chave)["debitado"]


def test_calls_cancelled_before_they_were_sent_are_never_sent(carapi_servidor):
    import os
    import time

    from carapi.testing import CODIGOS_CAR

    chave = carapi_servidor.conta(saldo="500")
    codigos = [CODIGOS_CAR[i % len(CODIGOS_CAR)] for i in range(100)]

    async def principal():
        async with _ac(carapi_servidor, chave) as ac:
            await ac.precos()
            resultados = await asyncio.gather(
                *(asyncio.wait_for(ac.car(c), 0.05) for c in codigos), return_exceptions=True
            )
        return resultados, ac.gasto()

    resultados, gasto = asyncio.run(principal())
    respondidas = sum(isinstance(r, dict) for r in resultados)
    assert all(isinstance(r, (dict, asyncio.TimeoutError)) for r in resultados), resultados
    time.sleep(1)
    debitado = carapi_servidor.conta_de(chave)["debitado"]
    time.sleep(11)
    assert carapi_servidor.conta_de(chave)["debitado"] == debitado, "nothing sent after the cancellations"
    cobradas = debitado / PRECO_CAR
    # At most the calls already in the client when their tasks were cancelled: one per worker
    # thread of the loop's default executor (not 100).
    em_voo = min(32, (os.cpu_count() or 1) + 4)
    assert cobradas - respondidas <= em_voo, (cobradas, respondidas)
    assert gasto == {"confirmado": debitado, "incerto": ZERO, "total": debitado, "nao_precificadas": 0}
    enviadas = carapi.Client(base_url=carapi_servidor.base_url, api_key=chave).historico(endpoint="car")["total"]
    assert enviadas == cobradas


def test_a_call_cancelled_while_waiting_in_the_limiter_gives_its_place_back(carapi_servidor):
    chave = carapi_servidor.conta(saldo="50")

    async def principal():
        # One request per second: the first lookup takes the limiter's place, the second waits.
        async with carapi.AsyncClient(base_url=carapi_servidor.base_url, api_key=chave, rate_limit=1) as ac:
            await ac.precos()
            esperando = asyncio.ensure_future(ac.car(CODIGO_2))
            await asyncio.sleep(0.2)
            esperando.cancel()
            with pytest.raises(asyncio.CancelledError):
                await esperando
        return ac.gasto()

    # Without the cancellation it would have been sent about a second later, and charged.
    assert asyncio.run(principal())["total"] == ZERO
    assert carapi_servidor.conta_de(chave)["debitado"] == ZERO
    assert carapi.Client(base_url=carapi_servidor.base_url, api_key=chave).historico(endpoint="car")["total"] == 0
