"""examples/python/analise.ipynb runs green in a real Jupyter kernel (nbclient + ipykernel) on
the test double: the batch's progress bar is a widget, `explore()` draws a folium map, and the
GeoPackage it writes is read back by GDAL. The notebook is stored without outputs."""

import json
import os
from pathlib import Path

import pytest

EXEMPLOS = Path(__file__).resolve().parents[2] / "examples" / "python"
NOTEBOOK = EXEMPLOS / "analise.ipynb"


def test_the_notebook_is_stored_without_outputs():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


def test_the_notebook_extra_brings_what_the_notebook_needs():
    import re
    from importlib.metadata import requires

    do_extra = [r for r in requires("carapi") or [] if re.search(r"extra\s*==\s*[\"']notebook[\"']", r)]
    extra = {re.split(r"[<>=!;\[ ]", r, maxsplit=1)[0] for r in do_extra}
    assert {"folium", "matplotlib", "mapclassify", "ipywidgets", "geopandas", "pandas", "tqdm"} <= extra


def test_the_example_notebook_runs_in_a_jupyter_kernel(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="the notebook extra and nbclient are not installed")
    nbclient = pytest.importorskip("nbclient", reason="nbclient not installed")
    pytest.importorskip("ipykernel", reason="ipykernel not installed")
    pyogrio = pytest.importorskip("pyogrio")
    for nome in [k for k in os.environ if k.startswith("CARAPI_")]:
        monkeypatch.delenv(nome)
    saida = tmp_path / "imoveis_df.gpkg"
    monkeypatch.setenv("CARAPI_SAIDA", str(saida))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(EXEMPLOS)}}
    ).execute()

    saidas = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    erros = [o for o in saidas if o.output_type == "error"]
    assert erros == []
    stderr = "".join(o.get("text", "") for o in saidas if o.get("name") == "stderr")
    assert "IProgress not found" not in stderr and "TqdmWarning" not in stderr, stderr
    dados = [o.get("data", {}) for o in saidas if o.output_type in ("display_data", "execute_result")]
    assert any("application/vnd.jupyter.widget-view+json" in d for d in dados), "tqdm's bar is a widget"
    assert any("folium" in d.get("text/html", "") or "leaflet" in d.get("text/html", "") for d in dados), "explore() map"
    assert any("image/png" in d for d in dados), "the matplotlib chart"

    info = pyogrio.read_info(saida, layer="imoveis")
    assert info["driver"] == "GPKG" and info["geometry_type"] == "Point"
    assert info["features"] >= 1
    gdf = pyogrio.read_dataframe(saida, layer="imoveis")
    assert gdf.crs.to_epsg() == 4326
    assert gdf["chave"].str.startswith("DF-5300108-").all()
