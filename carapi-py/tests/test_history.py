"""`historico_todo` walks every page of the history."""

from conftest import CODIGO, CODIGO_2, CODIGO_3


def test_historico_todo_over_several_pages(client):
    for codigo in (CODIGO, CODIGO_2, CODIGO_3, CODIGO, CODIGO_2):
        client.car(codigo)
    assert client.historico(size=2)["totalPaginas"] == 3

    itens = list(client.historico_todo(size=2))
    assert len(itens) == 5
    assert [i["chaveConsulta"] for i in itens] == [CODIGO_2, CODIGO, CODIGO_3, CODIGO_2, CODIGO]
    datas = [i["data"] for i in itens]
    assert datas == sorted(datas, reverse=True), "newest first"

    assert len(list(client.historico_todo(size=2, busca=CODIGO_3))) == 1
    assert list(client.historico_todo(status="erro")) == []
