"""A `Lote` as rows: flat dicts (`Lote.registros`), a pandas DataFrame, a GeoDataFrame and an Excel
workbook. The registry's strings become numbers and times through the SDK's parsers; column
titles come from the SDK's one title map (`carapi_sdk::labels`, `carapi._carapi.TITULOS`)."""

from __future__ import annotations

import importlib
import io
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, cast
from zoneinfo import ZoneInfo

from ._carapi import TITULOS, municipio_ibge, parse_data, parse_decimal, parse_dms, sigla_uf
from ._output import replace_file
from .lote import FUSO_REGISTRO, Lote, ResultadoLote

if TYPE_CHECKING:  # pragma: no cover
    import geopandas  # type: ignore[import-untyped, unused-ignore]
    import pandas

ZONE = ZoneInfo(FUSO_REGISTRO)

# Registry strings turned into numbers and times (the SDK's parsers).
DECIMALS = ("areaTotalHa", "modulosFiscais")
COORDINATES = ("latitude", "longitude")
DATES = ("dataCadastro",)
INSTANTS = ("compradoEm",)
# Where the columns a CAR code gives go: beside the contract's own `uf` and `municipio`.
DERIVED_AFTER = {"uf": "siglaUf", "municipio": "municipioIbgeDoCodigo"}


def import_extra(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"{module} não está instalado: instale o extra com `pip install carapi[{extra}]`"
        ) from e


def _base(r: ResultadoLote, archive: bool) -> Dict[str, Any]:
    row: Dict[str, Any] = {
        "chave": r.chave,
        "status": r.status,
        "codigoErro": r.erro,
        "mensagem": r.excecao.mensagem if r.excecao is not None else None,
        "httpStatus": r.http,
        "cobrado": r.cobrado,
        "preco": r.preco,
        "sandbox": r.sandbox,
        "repetida": r.duplicata_de is not None,
    }
    if archive:
        row["origem"] = r.origem
        row["compradoEm"] = r.comprado_em
    return row


def _with_code_columns(fields: Dict[str, Any], codigo: Optional[str]) -> Dict[str, Any]:
    """`fields` with `siglaUf` and `municipioIbgeDoCodigo` of `codigo` beside `uf` and
    `municipio` (at the end when the fields have neither)."""
    derived = {
        "siglaUf": sigla_uf(codigo) if codigo else None,
        "municipioIbgeDoCodigo": municipio_ibge(codigo) if codigo else None,
    }
    out: Dict[str, Any] = {}
    for k, v in fields.items():
        out[k] = v
        if k in DERIVED_AFTER:
            name = DERIVED_AFTER[k]
            out[name] = derived.pop(name)
    out.update(derived)
    return out


def records(lote: Lote) -> List[Dict[str, Any]]:
    """See `Lote.registros`."""
    archive = any(r.origem is not None for r in lote.resultados)
    rows: List[Dict[str, Any]] = []
    for r in lote.resultados:
        base = _base(r, archive)
        if lote.consulta != "proprietario":
            rows.append({**base, **_with_code_columns(dict(r.dados or {}), r.chave_normalizada)})
            continue
        dados = r.dados or {}
        itens = cast(List[Dict[str, Any]], dados.get("itens") or [])
        head: Dict[str, Any] = {k: dados[k] for k in ("total", "truncado") if k in dados}
        if not itens:
            rows.append({**base, **head})
        for item in itens:
            rows.append({**base, **head, **_with_code_columns(dict(item), item.get("registroCar"))})
    return rows


def _columns(rows: List[Dict[str, Any]]) -> List[str]:
    """Every column, in the order of the first rows that have an answer (so the answer's own
    order holds), then the others'."""
    ordered = sorted(rows, key=lambda row: row.get("status") != "ok")
    names: Dict[str, None] = {}
    for row in ordered:
        for k in row:
            names.setdefault(k, None)
    return list(names)


def _number(text: Any, parse: Any) -> Any:
    if not isinstance(text, str):
        return text
    d = parse(text)
    return float(d) if d is not None else None


def convert(row: Dict[str, Any]) -> Dict[str, Any]:
    """The registry's strings of `row` as numbers and aware times, money as float."""
    out = dict(row)
    for k in DECIMALS:
        if k in out:
            out[k] = _number(out[k], parse_decimal)
    for k in COORDINATES:
        if k in out:
            out[k] = _number(out[k], parse_dms)
    for k in DATES:
        if isinstance(out.get(k), str):
            d = parse_data(out[k])
            out[k] = d.replace(tzinfo=ZONE) if d is not None else None
    if isinstance(out.get("preco"), Decimal):
        out["preco"] = float(out["preco"])
    return out


def to_pandas(lote: Lote) -> "pandas.DataFrame":
    pd = import_extra("pandas", "pandas")
    rows = [convert(r) for r in records(lote)]
    df: "pandas.DataFrame" = pd.DataFrame(rows, columns=_columns(rows))
    for column in DATES + INSTANTS:
        if column in df.columns:
            df[column] = pd.Series(pd.to_datetime(df[column], utc=True), index=df.index).dt.tz_convert(FUSO_REGISTRO)
    if "httpStatus" in df.columns:
        df["httpStatus"] = df["httpStatus"].astype("Int64")
    return df


def to_geopandas(lote: Lote) -> "geopandas.GeoDataFrame":
    if lote.consulta == "proprietario":
        raise ValueError(
            "a consulta por proprietário não traz a posição dos imóveis (docs/contrato.md): use "
            "to_pandas(), ou um lote car/completo dos códigos em registroCar"
        )
    gpd = import_extra("geopandas", "geo")
    shapely = import_extra("shapely.geometry", "geo")
    df = to_pandas(lote)
    points: List[Any] = []
    for _, row in df.iterrows():
        lon, lat = row.get("longitude"), row.get("latitude")
        ok = isinstance(lon, float) and isinstance(lat, float) and lon == lon and lat == lat
        points.append(shapely.Point(lon, lat) if ok else None)
    return gpd.GeoDataFrame(df, geometry=points, crs="EPSG:4326")


def _cell(value: Any) -> Any:
    """A value as Excel takes it: Brasília local time without a zone, numbers as numbers."""
    if isinstance(value, datetime):
        return value.astimezone(ZONE).replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (list, dict)):
        import json

        return json.dumps(value, ensure_ascii=False, default=str)
    return value


def to_excel(lote: Lote, path: Path) -> Path:
    openpyxl = import_extra("openpyxl", "pandas")
    rows = [convert(r) for r in records(lote)]
    columns = _columns(rows)
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Lote"
    ws.append([TITULOS.get(c, c) for c in columns])
    for row in rows:
        ws.append([_cell(row.get(c)) for c in columns])
    for i, c in enumerate(columns, start=1):
        if c in DATES + INSTANTS:
            for (cell,) in ws.iter_rows(min_row=2, min_col=i, max_col=i):
                cell.number_format = "dd/mm/yyyy hh:mm:ss"
    ws.freeze_panes = "A2"
    if rows:
        ws.auto_filter.ref = ws.dimensions
    data = io.BytesIO()
    wb.save(data)
    replace_file(path, data.getvalue())
    return path
