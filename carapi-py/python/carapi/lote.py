"""`Client.lote`: one lookup per distinct key, in input order, as a `Lote` for pandas, geopandas
and Excel.

Each key goes through the client's own method (`car`, `car_completo` or `proprietario`), so
every rule of the SDK applies unchanged: local validation, the retry policy (a lost charged
answer is never re-sent), the rate limit, the client's `max_spend`, the archive. A key is looked
up once however many input rows hold it (after normalisation: case, dots, spaces or dashes as
people paste CAR codes, a CPF/CNPJ's mask); an error of one key is kept in its rows and the
batch goes on, unless it means the next keys would fail too (no balance, a daily or monthly
limit, an invalid API key): then the batch stops and says why (`Lote.parada`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Literal, Optional, Union

from .erros import ApiError

if TYPE_CHECKING:  # pragma: no cover
    import os

    import geopandas  # type: ignore[import-untyped, unused-ignore]
    import pandas

__all__ = ["Lote", "ResultadoLote", "LoteInterrompido", "Consulta", "FUSO_REGISTRO"]

Consulta = Literal["car", "completo", "proprietario"]
"""`consulta` of `Client.lote`: which lookup each key gets (the last fixed segment of its route:
`GET /v1/car/{codigoCar}`, `GET /v1/car/{codigoCar}/completo`, `GET /v1/proprietario/{cpfCnpj}`)."""

FUSO_REGISTRO = "America/Sao_Paulo"
"""The zone of every timestamp of `to_pandas()`: the registry's wall times (`dataCadastro`)
are Brasília's (docs/contrato.md, "Resources"), and the instants (`compradoEm`) are shown there
too."""


@dataclass
class ResultadoLote:
    """The outcome of one input row of a batch.

    Attributes:
        chave: the key as given in the row.
        status: `"ok"` (HTTP 200), `"erro"` (an error; `erro` has its code) or
            `"nao_consultada"` (not sent: `max_custo` reached, the batch stopped or was
            interrupted; `erro` says why).
        dados: `dados` of a CAR lookup, or `{"total", "limite", "truncado", "itens"}` of an owner
            lookup; None on error.
        erro: the error code (`"CAR_NAO_ENCONTRADO"`, `"CODIGO_CAR_INVALIDO"`,
            `"RESPOSTA_PERDIDA"`, `"MAX_CUSTO"`, `"SALDO_INSUFICIENTE"`, `"INTERROMPIDO"`,
            ...), None when ok.
        http: the HTTP status, None when no answer arrived.
        cobrado: True when this row's lookup was charged, False when not (sandbox, an answer
            from the archive, a repeated key, an error), None when unknown (answer lost after
            sending: see `Client.resolver_incertos`).
        sandbox: True for a reserved sandbox value.
        excecao: the exception raised for this key, if any.
        origem: with `Client(acervo=...)`, `"api"` (bought now) or `"acervo"` (read from the
            archive: no request, no charge); None without an archive or on error.
        comprado_em: with `Client(acervo=...)`, when the answer was bought (aware datetime).
        chave_normalizada: the key as looked up (the canonical CAR code, the bare CPF/CNPJ);
            None when the row holds no valid key.
        duplicata_de: for a row repeating the key of an earlier row, that row's index (from 0
            in `resultados`): it was looked up once, there, and this row has its answer with
            `cobrado` False.
        preco: what this row was charged, BRL (the account's price), when `cobrado`.
        retomado: True when the answer came from the records of `saida=` (a run before this
            one looked it up); `cobrado` and `preco` then say what that run paid.
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
    chave_normalizada: Optional[str] = None
    duplicata_de: Optional[int] = None
    preco: Optional[Decimal] = None
    retomado: bool = False


class Lote:
    """The results of `Client.lote`, one per input row, in input order.

    Attributes:
        consulta: `"car"`, `"completo"` or `"proprietario"`.
        resultados: list of `ResultadoLote`.
        gasto: what this run added to the client's spend (`confirmado + incerto`), BRL.
        parada: why the batch stopped before its end (Portuguese: a 402, a daily or monthly
            limit, an invalid key, an interruption), or None.
        saida: the records file of `saida=`, or None.
    """

    def __init__(
        self,
        consulta: str,
        resultados: List[ResultadoLote],
        gasto: Decimal,
        parada: Optional[str] = None,
        saida: Optional[Path] = None,
    ) -> None:
        self.consulta = consulta
        self.resultados = resultados
        self.gasto = gasto
        self.parada = parada
        self.saida = saida

    def __len__(self) -> int:
        return len(self.resultados)

    def __iter__(self) -> Iterator[ResultadoLote]:
        return iter(self.resultados)

    def __getitem__(self, i: int) -> ResultadoLote:
        return self.resultados[i]

    def __repr__(self) -> str:
        ok = sum(r.status == "ok" for r in self.resultados)
        parada = f", parado: {self.parada}" if self.parada else ""
        return f"<Lote {self.consulta}: {ok}/{len(self.resultados)} ok, gasto R$ {self.gasto}{parada}>"

    def registros(self) -> List[Dict[str, Any]]:
        """One flat dict per row (per property of an owner lookup: one per item of `itens`,
        at least one per row), with the names of the CLI's batch records: `chave`, `status`,
        `codigoErro`, `mensagem`, `httpStatus`, `cobrado`, `preco`, `sandbox`, `repetida`, with
        an archive `origem` and `compradoEm`; then `siglaUf` and `municipioIbgeDoCodigo` (the
        state and the 7-digit IBGE municipality the CAR code names, empty for sandbox codes: the
        record's own `municipio` may differ), and every field of the answer (registry strings as
        sent)."""
        from ._frames import records

        return records(self)

    def to_pandas(self) -> "pandas.DataFrame":
        """A `pandas.DataFrame` of `registros()`, one row per input row (an owner batch: one per
        property) in input order: areas and fiscal modules as floats, `dataCadastro` (the
        registry's Brasília wall time) and `compradoEm` as timezone-aware timestamps in
        `America/Sao_Paulo` (`FUSO_REGISTRO`; Excel takes no zone: `to_excel` writes Brasília
        local times), latitude and longitude in decimal degrees (negative south and west; empty
        when the record has no position), `httpStatus` as `Int64` (empty without an answer),
        `preco` as float.

        Raises:
            ImportError: pandas is not installed (`pip install carapi[pandas]`).
        """
        from ._frames import to_pandas

        return to_pandas(self)

    def to_geopandas(self) -> "geopandas.GeoDataFrame":
        """`to_pandas()` as a `geopandas.GeoDataFrame` with the property's point in EPSG:4326
        (WGS 84 longitude/latitude); rows without coordinates have no geometry.

        Raises:
            ImportError: geopandas is not installed (`pip install carapi[geo]`).
            ValueError: an owner batch (`consulta="proprietario"`): the contract's owner answer
                has no position.
        """
        from ._frames import to_geopandas

        return to_geopandas(self)

    def to_excel(self, caminho: Union[str, "os.PathLike[str]"]) -> Path:
        """Writes `registros()` to an Excel workbook: Portuguese column titles (the SDK's one
        title map, as the CLI's `.xlsx`), numbers as numbers, times in Brasília local time,
        a frozen header with filters. Written to a temporary file and renamed: an error leaves
        no broken file. Returns the path.

        Raises:
            ImportError: openpyxl is not installed (`pip install carapi[pandas]`).
            OSError: the file cannot be written.
        """
        from ._frames import to_excel

        return to_excel(self, Path(caminho))


class LoteInterrompido(KeyboardInterrupt):
    """A batch stopped by Ctrl-C (SIGINT, a Jupyter kernel interrupt): a `KeyboardInterrupt`
    that carries what was paid for. The interrupt is taken between keys: the key in flight ends
    (its answer is kept), no further key is sent.

    Attributes:
        parcial: the `Lote` so far (the keys not looked up have status `"nao_consultada"`,
            `erro` `"INTERROMPIDO"`); also `client.ultimo_lote`. With `saida=` every answer is
            in the records too, and a rerun with the same `saida` buys only what is missing.
    """

    def __init__(self, parcial: Lote) -> None:
        super().__init__(parcial.parada or "lote interrompido")
        self.parcial = parcial
