"""Calls every method of `Client`, `AsyncClient`, `Lote` and `ServidorTeste` as an analyst would:
mypy --strict and pyright (strict) must find nothing here (test_typing.py). Never run."""

from __future__ import annotations

import asyncio
import datetime
from decimal import Decimal
from pathlib import Path
from typing import List, Literal, Optional

import carapi
from carapi import sandbox
from carapi.testing import IMOVEIS, ClienteTeste, ServidorTeste
from carapi.tipos import CarResponse, ConsumoItem, EntradaAcervo, Gasto, VerificacaoAcervo


def sincrono(client: carapi.Client, pasta: Path) -> Decimal:
    r: CarResponse = client.car("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47")
    area: Optional[str] = r["dados"]["areaTotalHa"]
    quando: datetime.datetime = r["dataConsulta"]
    completo = client.car_completo(sandbox.CAR_BASICO)
    nomes: Optional[str] = completo["dados"]["proprietariosNomes"]
    pdf: bytes = client.recibo(sandbox.CAR_BASICO)
    info = client.recibo_para_arquivo(sandbox.CAR_BASICO, pasta)
    caminho: Path = info["path"]
    dono = client.proprietario(sandbox.CPF_DOIS_CARS)
    primeiro: str = dono["itens"][0]["registroCar"]
    saldo: Decimal = client.saldo()["saldoReais"]
    preco: Decimal = client.precos()["carBasico"]
    h = client.historico(page=2, size=50, busca="DF-", endpoint="car", status="sucesso")
    itens: List[ConsumoItem] = h["itens"]
    todos = [i["chaveConsulta"] for i in client.historico_todo(size=100, endpoint="/v1/car/{codigo}")]
    client.limites()
    client.atualizar_limites(diario=100, mensal=Decimal("250.00"))
    client.atualizar_limites(mensal=None)
    uso = client.uso()["itens"]
    faixas = client.faixas_recarga(Decimal("1000"))["faixas"]
    criada = client.criar_recarga(500, confirmar_novos_precos=True)
    client.recarga(criada["recargaId"])
    client.aguardar_recarga(criada["recargaId"], timeout=60.0)
    client.recargas(page=1, size=20, status="Confirmado")
    g: Gasto = client.gasto()
    resolvidas: int = client.resolver_incertos()["cobradas"]
    lote = client.lote(["DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"], consulta="completo", max_custo="5.00", progresso=False)
    status = ""
    cobrado: Optional[bool] = None
    for resultado in lote:
        status = resultado.status
        cobrado = resultado.cobrado
        origem_da_linha: Optional[int] = resultado.duplicata_de
        print(origem_da_linha, resultado.preco, resultado.chave_normalizada, resultado.retomado)
    estimativa = client.estimar_lote(["DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"], consulta="car", saida=pasta / "l.jsonl")
    custo: Decimal = estimativa["custo_maximo"]
    a_comprar: int = estimativa["a_comprar"]
    try:
        retomavel = client.lote(["DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"], saida=pasta / "l.jsonl")
        planilha: Path = retomavel.to_excel(pasta / "l.xlsx")
        parada: Optional[str] = retomavel.parada
        print(planilha, parada, custo, a_comprar)
    except carapi.LoteInterrompido as e:
        parcial: carapi.Lote = e.parcial
        print(len(parcial))
    except carapi.SaidaEmUso as e:
        outro: Optional[int] = e.pid
        print(outro)
    ultimo: Optional[carapi.Lote] = client.ultimo_lote
    print(ultimo)
    print(len(lote), lote[0].chave, lote.gasto, lote.registros(), lote.to_pandas(), lote.to_geopandas())
    print(area, quando, nomes, pdf, caminho, primeiro, preco, itens, todos, uso, faixas, resolvidas, status, cobrado)
    print(client.base_url, client.max_spend, client.fechado)
    client.close()
    with carapi.Client("http://127.0.0.1:8080", "chave", max_spend=10, timeout=5.0, rate_limit=None) as c:
        c.saldo()
    with carapi.Client(
        acervo=True, finalidade="due diligence", base_legal="execucao-contrato", idade_maxima=datetime.timedelta(days=7)
    ) as arquivado:
        resposta: CarResponse = arquivado.car(sandbox.CAR_BASICO)
        origem: Optional[Literal["api", "acervo"]] = resposta.get("origem")
        comprado: Optional[datetime.datetime] = resposta.get("compradoEm")
        print(origem, comprado, lote[0].origem, lote[0].comprado_em)
        acervo: Optional[carapi.Acervo] = arquivado.acervo
        if acervo is not None:
            entradas: List[EntradaAcervo] = acervo.listar(conta="0123456789abcdef")
            uma: Optional[EntradaAcervo] = acervo.mostrar(1)
            corpo: Optional[bytes] = acervo.corpo(1)
            do_titular: List[EntradaAcervo] = acervo.titular("123.456.789-09")
            removidas: int = acervo.expurgar(documento="123.456.789-09")
            removidas += acervo.expurgar(antes_de=datetime.date(2025, 1, 1))
            cabeca: Optional[str] = acervo.cabeca()
            v: VerificacaoAcervo = acervo.verificar(cabeca)
            texto: Optional[str] = acervo.exportar(formato="json")
            acervo.exportar("auditoria.csv")
            acervo.vincular("0123456789abcdef", "fedcba9876543210")
            print(entradas, uma, corpo, do_titular, removidas, v["ok"], v["falhas"], texto, acervo.caminho)
    equipe = carapi.Acervo("acervo.sqlite3")
    print(equipe.listar()[0]["compradoEm"], equipe.verificar()["cabeca"])
    return saldo + g["total"]


def saldo_em_texto() -> str:
    # `__exit__` returns None: mypy --strict sees that the block's return is the function's.
    with carapi.Client() as c:
        return str(c.saldo()["saldoReais"])


async def assincrono() -> None:
    async with carapi.AsyncClient(max_spend="20", rate_limit=5, poll_interval=5.0) as ac:
        r: CarResponse = await ac.car(sandbox.CAR_BASICO)
        await ac.car_completo(sandbox.CAR_BASICO)
        await ac.recibo(sandbox.CAR_BASICO)
        await ac.recibo_para_arquivo(sandbox.CAR_BASICO, "recibos")
        await ac.proprietario(sandbox.CPF_DOIS_CARS)
        await ac.saldo()
        await ac.precos()
        await ac.historico(page=2, status="erro")
        todos: List[ConsumoItem] = await ac.historico_todo(busca="DF")
        await ac.limites()
        await ac.atualizar_limites(diario=None)
        await ac.uso()
        await ac.faixas_recarga()
        criada = await ac.criar_recarga("500")
        await ac.recarga(criada["recargaId"])
        await ac.aguardar_recarga(criada["recargaId"])
        await ac.recargas(status="Pendente")
        await ac.resolver_incertos()
        lote = await ac.lote([sandbox.CAR_BASICO], consulta="car", saida="l.jsonl")
        estimado = await ac.estimar_lote([sandbox.CAR_BASICO])
        print(estimado["saldo"], ac.ultimo_lote)
        g: Gasto = ac.gasto()
        feito = await asyncio.wait_for(ac.car(sandbox.CAR_BASICO), timeout=1.0)
        print(r.get("sandbox"), todos, lote.resultados, g, feito, ac.fechado, ac.sync.gasto())
    await ac.aclose()
    ac.close()


def teste(srv: ServidorTeste) -> None:
    chave: str = srv.conta(saldo="10", legado=True, limite_diario=5)
    cliente: ClienteTeste = srv.client(saldo=Decimal("10"), rate_limit=None, limite_mensal="50")
    falha: int = srv.falhar("erro", codigo="ERRO_INTERNO", rota="car", conta=cliente, vezes=None)
    srv.falhar("atraso", ms=500, conta=chave)
    srv.remover_falha(falha)
    srv.limpar_falhas()
    agora: datetime.datetime = srv.agora()
    srv.avancar(120)["reconciliadas"]
    srv.pagar("0e1f", sem_webhook=True)
    debitado: Decimal = srv.conta_de(cliente)["debitado"]
    print(chave, agora, debitado, IMOVEIS[0]["codigoCar"], cliente.api_key, srv.base_url)
    srv.encerrar()
