"""`Client.lote`: one lookup per key, in input order, as a `Lote` for pandas and geopandas.

Each key goes through the client's own method (`car`, `car_completo` or `proprietario`), so
every rule of the SDK applies unchanged: local validation, the retry policy (a lost charged
answer is never re-sent), the rate limit, the client's `max_spend`. An error of one key is kept
in its entry and the batch goes on.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import (
    TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Tuple,
    Union, cast,
)
from zoneinfo import ZoneInfo

from ._carapi import SANDBOX, parse_data, parse_decimal, parse_dms
from .erros import ApiError, RespostaPerdida

if TYPE_CHECKING:  # pragma: no cover
    import geopandas  # type: ignore[import-untyped, unused-ignore]
    import pandas

    from ._carapi import Client

__all__ = ["Lote", "ResultadoLote", "CONSULTAS", "Consulta", "FUSO_REGISTRO"]

Consulta = Literal["car", "completo", "proprietario"]
"""`consulta` of `Client.lote`: which lookup each key gets."""

FUSO_REGISTRO = "America/Sao_Paulo"
"""The registry's wall times (`dataCadastro`) are Brasília's (docs/contrato.md, "Resources")."""

CONSULTAS: Dict[str, Tuple[str, str]] = {
    "car": ("car", "carBasico"),
    "completo": ("car_completo", "carCompleto"),
    "proprietario": ("proprietario", "proprietario"),
}
"""`consulta` of `lote` -> (client method, key of its price in `precos`)."""

_SANDBOX = frozenset(SANDBOX.values())
_FUSO = ZoneInfo(FUSO_REGISTRO)

# Registry strings turned into numbers/dates by `to_pandas` (the SDK's parsers).
_DECIMAIS = ("areaTotalHa", "modulosFiscais")
_COORDENADAS = ("latitude", "longitude")
_DATAS = ("dataCadastro",)


@dataclass
class ResultadoLote:
    """The outcome of one key of a batch.

    Attributes:
        chave: the key as given.
        status: `"ok"` (HTTP 200), `"erro"` (an error; `erro` has its code) or
            `"nao_consultada"` (not sent: `max_custo` reached).
        dados: `dados` of a CAR lookup, or `{"total", "limite", "truncado", "itens"}` of an owner
            lookup; None on error.
        erro: the error code (`"CAR_NAO_ENCONTRADO"`, `"CODIGO_CAR_INVALIDO"`,
            `"RESPOSTA_PERDIDA"`, `"MAX_CUSTO"`, ...), None when ok.
        http: the HTTP status, None when no answer arrived.
        cobrado: True when charged, False when not (sandbox, answered from the archive), None
            when unknown (answer lost after
            sending: see `Client.resolver_incertos`).
        sandbox: True for a reserved sandbox value.
        excecao: the exception raised for this key, if any.
        origem: with `Client(acervo=...)`, `"api"` (bought now) or `"acervo"` (read from the
            archive: no request, no charge); None without an archive or on error.
        comprado_em: with `Client(acervo=...)`, when the answer was bought (aware datetime).
    """

    chave: str
    status: str
    dados: Optional[Dict[str, Any]] = None
    erro: Optional[str] = None
    http: Optional[int] = None
    cobrado: Optional[bool] = False
    sandbox: bool = False
    excecao: Optional[ApiError] = field(default=None, repr=False)
    origem: Optional[str] = None
    comprado_em: Optional[datetime] = None


class Lote:
    """The results of `Client.lote`, one per input key, in input order.

    Attributes:
        consulta: `"car"`, `"completo"` or `"proprietario"`.
        resultados: list of `ResultadoLote`.
        gasto: what the batch added to the client's spend (`confirmado + incerto`), BRL.
    """

    def __init__(self, consulta: str, resultados: List[ResultadoLote], gasto: Decimal) -> None:
        self.consulta = consulta
        self.resultados = resultados
        self.gasto = gasto

    def __len__(self) -> int:
        return len(self.resultados)

    def __iter__(self) -> Iterator[ResultadoLote]:
        return iter(self.resultados)

    def __getitem__(self, i: int) -> ResultadoLote:
        return self.resultados[i]

    def __repr__(self) -> str:
        ok = sum(r.status == "ok" for r in self.resultados)
        return f"<Lote {self.consulta}: {ok}/{len(self.resultados)} ok, gasto R$ {self.gasto}>"

    def registros(self) -> List[Dict[str, Any]]:
        """One flat dict per key: `chave`, `status`, `erro`, `http`, `cobrado`, `sandbox`, with
        an archive (`Client(acervo=...)`) `origem` and `compradoEm`, then every field of
        `dados` (registry strings as sent)."""
        com_acervo = any(r.origem is not None for r in self.resultados)
        linhas: List[Dict[str, Any]] = []
        for r in self.resultados:
            linha: Dict[str, Any] = {
                "chave": r.chave,
                "status": r.status,
                "erro": r.erro,
                "http": r.http,
                "cobrado": r.cobrado,
                "sandbox": r.sandbox,
            }
            if com_acervo:
                linha["origem"] = r.origem
                linha["compradoEm"] = r.comprado_em
            for k, v in (r.dados or {}).items():
                linha[k] = v
            linhas.append(linha)
        return linhas

    def to_pandas(self) -> "pandas.DataFrame":
        """A `pandas.DataFrame`, one row per key in input order, one column per field: areas and
        fiscal modules as floats, `dataCadastro` as a timezone-aware datetime in
        `America/Sao_Paulo` (the registry's Brasília wall time), latitude and longitude in
        decimal degrees (negative south and west; None when the record has no position). With
        an archive (`Client(acervo=...)`), `origem` ("api" or "acervo") and `compradoEm` (aware,
        in `America/Sao_Paulo`) say where each row came from and when it was bought.

        Raises:
            ImportError: pandas is not installed (`pip install carapi[pandas]`).
        """
        pd = _importar("pandas", "pandas")
        linhas = self.registros()
        for linha in linhas:
            _converter(linha)
        df: "pandas.DataFrame" = pd.DataFrame(linhas, columns=_colunas(linhas))
        for coluna in _DATAS:
            if coluna in df.columns:
                df[coluna] = pd.Series(
                    pd.to_datetime(df[coluna], utc=True), index=df.index
                ).dt.tz_convert(FUSO_REGISTRO)
        if "compradoEm" in df.columns:
            df["compradoEm"] = pd.Series(
                pd.to_datetime(df["compradoEm"], utc=True), index=df.index
            ).dt.tz_convert(FUSO_REGISTRO)
        return df

    def to_geopandas(self) -> "geopandas.GeoDataFrame":
        """`to_pandas()` as a `geopandas.GeoDataFrame` with the property's point in EPSG:4326
        (WGS 84 longitude/latitude); rows without coordinates have no geometry.

        Raises:
            ImportError: geopandas is not installed (`pip install carapi[geo]`).
        """
        gpd = _importar("geopandas", "geo")
        shapely = _importar("shapely.geometry", "geo")
        df = self.to_pandas()
        pontos: List[Any] = []
        for _, linha in df.iterrows():
            lon, lat = linha.get("longitude"), linha.get("latitude")
            if _numero(lon) and _numero(lat):
                pontos.append(shapely.Point(lon, lat))
            else:
                pontos.append(None)
        return gpd.GeoDataFrame(df, geometry=pontos, crs="EPSG:4326")


def _numero(v: Any) -> bool:
    return isinstance(v, float) and v == v


def _colunas(linhas: List[Dict[str, Any]]) -> List[str]:
    colunas: Dict[str, None] = {}
    for linha in linhas:
        for k in linha:
            colunas.setdefault(k, None)
    return list(colunas)


def _converter(linha: Dict[str, Any]) -> None:
    for k in _DECIMAIS:
        if isinstance(linha.get(k), str):
            d = parse_decimal(linha[k])
            linha[k] = float(d) if d is not None else None
    for k in _COORDENADAS:
        if isinstance(linha.get(k), str):
            d = parse_dms(linha[k])
            linha[k] = float(d) if d is not None else None
    for k in _DATAS:
        if isinstance(linha.get(k), str):
            linha[k] = _data_registro(linha[k])


def _data_registro(texto: str) -> Optional[datetime]:
    """A registry date-time (`dd/MM/yyyy HH:mm:ss`, Brasília wall time) as an aware datetime."""
    d = parse_data(texto)
    return d.replace(tzinfo=_FUSO) if d is not None else None


def _importar(modulo: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(modulo)
    except ImportError as e:
        raise ImportError(
            f"{modulo} não está instalado: instale o extra com `pip install carapi[{extra}]`"
        ) from e


def _barra(total: int, progresso: bool) -> Callable[[], None]:
    """A progress bar: tqdm (terminal or Jupyter) when installed, else a line on a terminal's
    stderr; nothing for short batches or when `progresso` is False."""
    if not progresso or total < 20:
        return lambda: None
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped, unused-ignore]

        barra = tqdm(total=total, unit="consulta", desc="carapi lote")
        feitos = [0]

        def passo() -> None:
            barra.update(1)
            feitos[0] += 1
            if feitos[0] == total:
                barra.close()

        return passo
    except ImportError:
        pass
    if not sys.stderr.isatty():
        return lambda: None
    contagem = [0]

    def linha() -> None:
        contagem[0] += 1
        largura = 30
        cheio = largura * contagem[0] // total
        sys.stderr.write(f"\rcarapi lote [{'#' * cheio}{'.' * (largura - cheio)}] {contagem[0]}/{total}")
        if contagem[0] == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return linha


def e_sandbox(chave: str, consulta: str) -> bool:
    """True when `chave` is a reserved sandbox value (free) for `consulta`."""
    if consulta == "proprietario":
        return "".join(c for c in chave if c.isdigit()) in _SANDBOX
    return chave.strip().upper() in _SANDBOX


def _gasto_total(client: "Client") -> Decimal:
    return client.gasto()["total"]


def _uma(client: "Client", metodo: str, chave: str) -> ResultadoLote:
    try:
        r: Dict[str, Any] = getattr(client, metodo)(chave)
    except RespostaPerdida as e:
        return ResultadoLote(chave, "erro", erro=e.codigo, cobrado=None, excecao=e)
    except ApiError as e:
        return ResultadoLote(chave, "erro", erro=e.codigo, http=e.status, sandbox=e.sandbox, excecao=e)
    sandbox = bool(r.get("sandbox"))
    if metodo == "proprietario":
        dados: Dict[str, Any] = {k: r[k] for k in ("total", "limite", "truncado", "itens") if k in r}
    else:
        dados = r["dados"]
    origem = r.get("origem")
    return ResultadoLote(
        chave,
        "ok",
        dados=dados,
        http=200,
        cobrado=not sandbox and origem != "acervo",
        sandbox=sandbox,
        origem=origem,
        comprado_em=r.get("compradoEm"),
    )


def executar(
    client: "Client",
    chaves: Iterable[str],
    consulta: str = "car",
    max_custo: Union[Decimal, int, str, None] = None,
    progresso: bool = True,
    parar: Optional[threading.Event] = None,
) -> Lote:
    """See `Client.lote`. `parar` (set by `AsyncClient.lote` when its task is cancelled) stops
    sending: the keys not yet sent get status `"nao_consultada"` (`erro` `"CANCELADO"`)."""
    if consulta not in CONSULTAS:
        raise ValueError(f"consulta inválida: {consulta!r} (car, completo ou proprietario)")
    metodo, chave_preco = CONSULTAS[consulta]
    lista = [str(c) for c in chaves]
    limite: Optional[Decimal] = None
    if max_custo is not None:
        if isinstance(max_custo, float):
            raise TypeError("max_custo em reais como float: use decimal.Decimal, int ou str")
        limite = Decimal(str(max_custo))
    # The account's prices (free): the batch's spend is priced as it goes.
    preco = cast(Mapping[str, Decimal], client.precos())[chave_preco]
    inicio = _gasto_total(client)
    passo = _barra(len(lista), progresso)
    resultados: List[ResultadoLote] = []
    for chave in lista:
        gasto = _gasto_total(client) - inicio
        caro = not e_sandbox(chave, consulta)
        if parar is not None and parar.is_set():
            resultados.append(ResultadoLote(chave, "nao_consultada", erro="CANCELADO"))
        elif limite is not None and caro and gasto + preco > limite:
            resultados.append(ResultadoLote(chave, "nao_consultada", erro="MAX_CUSTO"))
        else:
            resultados.append(_uma(client, metodo, chave))
        passo()
    return Lote(consulta, resultados, _gasto_total(client) - inicio)
