"""examples/python/analise.py runs end to end (against its in-process test server) and writes a
GeoJSON that GDAL reads."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXEMPLO = Path(__file__).resolve().parents[2] / "examples" / "python" / "analise.py"


def test_analise_writes_geojson_that_gdal_reads(tmp_path):
    pytest.importorskip("geopandas")
    pyogrio = pytest.importorskip("pyogrio")
    saida = tmp_path / "imoveis.geojson"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARAPI_")}
    r = subprocess.run(
        [sys.executable, str(EXEMPLO), str(saida)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, r.stderr
    info = pyogrio.read_info(saida)
    assert info["driver"] == "GeoJSON"
    assert info["features"] == 10
    assert info["geometry_type"] == "Point"
    df = pyogrio.read_dataframe(saida)
    assert df.crs.to_epsg() == 4326
    assert df["chave"].str.startswith("DF-5300108-").all()
