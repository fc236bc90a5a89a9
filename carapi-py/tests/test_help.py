"""`help()` of every public class and method says what it calls, what it costs, what it returns
and what it raises (what Jupyter's Shift-Tab shows)."""

import inspect
import pydoc

import carapi
import carapi.testing

# Charged: endpoint and price in the current and legacy tables (docs/contrato.md, "Prices").
COBRADOS = {
    "car": ("GET /v1/car/{codigoCar}", "R$ 1,00 (legado R$ 0,50)"),
    "car_completo": ("GET /v1/car/{codigoCar}/completo", "R$ 2,30 (legado R$ 1,50)"),
    "recibo": ("GET /v1/car/{codigoCar}/recibo", "R$ 11,00 (legado R$ 10,00)"),
    "recibo_para_arquivo": ("GET /v1/car/{codigoCar}/recibo", "R$ 11,00 (legado R$ 10,00)"),
    "proprietario": ("GET /v1/proprietario/{cpfCnpj}", "R$ 2,60 (legado R$ 1,50)"),
}
GRATIS = {
    "saldo": "GET /v1/saldo",
    "precos": "GET /v1/saldo",
    "historico": "GET /v1/historico",
    "historico_todo": "GET /v1/historico",
    "limites": "GET /v1/limites",
    "atualizar_limites": "PUT /v1/limites",
    "uso": "GET /v1/uso",
    "faixas_recarga": "GET /v1/recarga/faixas",
    "criar_recarga": "POST /v1/recarga",
    "recarga": "GET /v1/recarga/{recargaId}",
    "aguardar_recarga": "GET /v1/recarga/{recargaId}",
    "recargas": "GET /v1/recargas",
    "resolver_incertos": "GET /v1/historico",
    "estimar_lote": "GET /v1/saldo",
}
LOCAIS = {"gasto", "close", "lote", "aclose"}


def publicos(classe):
    return sorted(n for n, v in inspect.getmembers(classe) if not n.startswith("_") and callable(v))


def ajuda(objeto):
    """The text `help(objeto)` prints."""
    return pydoc.render_doc(objeto, renderer=pydoc.plaintext)


def test_every_client_method_documents_endpoint_price_returns_and_raises():
    for classe in (carapi.Client, carapi.AsyncClient):
        metodos = publicos(classe)
        assert set(COBRADOS) | set(GRATIS) <= set(metodos), classe
        for nome in metodos:
            texto = ajuda(getattr(classe, nome))
            assert nome in LOCAIS or "Returns" in texto, (classe, nome, texto)
            if nome in COBRADOS:
                endpoint, preco = COBRADOS[nome]
                assert endpoint in texto and preco in texto, (classe, nome, texto)
                assert "Raises" in texto and "SaldoInsuficiente" in texto, (classe, nome)
            elif nome in GRATIS:
                assert GRATIS[nome] in texto and "free" in texto, (classe, nome, texto)
                assert "Raises" in texto, (classe, nome)
            else:
                assert nome in LOCAIS, f"{classe.__name__}.{nome}: documente-o neste teste"
                assert len(inspect.getdoc(getattr(classe, nome)) or "") > 40, (classe, nome)


def test_help_shows_the_arguments():
    texto = ajuda(carapi.Client.car)
    assert "car(self, /, codigo)" in texto
    assinatura = inspect.signature(carapi.Client.atualizar_limites)
    assert list(assinatura.parameters)[-2:] == ["diario", "mensal"]
    assert all(p.kind is p.KEYWORD_ONLY for p in list(assinatura.parameters.values())[-2:])
    assert list(inspect.signature(carapi.AsyncClient.historico).parameters)[1:] == [
        "page", "size", "busca", "endpoint", "status",
    ]


def test_classes_and_the_rest_of_the_public_surface_are_documented():
    for objeto in (
        carapi.Client, carapi.AsyncClient, carapi.Lote, carapi.ResultadoLote,
        carapi.testing.ServidorTeste, carapi.testing.ClienteTeste, carapi.ApiError,
        carapi.SaldoInsuficiente, carapi.RespostaPerdida,
    ):
        assert len(inspect.getdoc(objeto) or "") > 60, objeto
    for classe in (carapi.Lote, carapi.testing.ServidorTeste):
        for nome in publicos(classe):
            assert len(inspect.getdoc(getattr(classe, nome)) or "") > 20, (classe, nome)
    texto = ajuda(carapi.Client)
    assert "max_spend" in texto and "fork" in texto


def test_the_client_signature_shows_its_real_defaults():
    for cls in (carapi.Client, carapi.AsyncClient):
        params = inspect.signature(cls).parameters
        assert params["rate_limit"].default == 10, cls
        assert params["acervo"].default is None
    assert inspect.signature(carapi.Client.aguardar_recarga).parameters["timeout"].default == 600.0
    assert inspect.signature(carapi.testing.ServidorTeste).parameters["limite_taxa"].default == 10
    # Only `atualizar_limites` keeps `...`: an omitted limit is kept, None removes it.
    shown = [l for l in pydoc.render_doc(carapi.Client).splitlines() if "Ellipsis" in l]
    assert len(shown) == 1 and "diario" in shown[0], shown
