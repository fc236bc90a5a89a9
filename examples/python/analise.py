"""Análise de um export do SICAR com o carapi (estilo notebook: cada `# %%` é uma célula do
Jupyter/VS Code).

Lê um CSV exportado do SICAR (`imoveis_df.csv`, 10 imóveis do DF, com a coluna `cod_imovel`),
consulta cada código com `client.lote`, e grava os imóveis como pontos num GeoJSON que o GDAL
lê (QGIS, ogrinfo, geopandas).

    pip install ./carapi-py[geo]
    python examples/python/analise.py [saida.geojson]

Sem `CARAPI_BASE_URL`/`CARAPI_API_KEY` no ambiente, roda contra o servidor de referência
em processo (`carapi.testing.ServidorTeste`, conta de teste com R$ 50,00): nada é cobrado de
verdade.
"""

# %%
import csv
import os
import sys
from contextlib import ExitStack
from decimal import Decimal
from pathlib import Path

import carapi

AQUI = Path(__file__).resolve().parent
ENTRADA = AQUI / "imoveis_df.csv"
SAIDA = Path(sys.argv[1] if len(sys.argv) > 1 else "imoveis_df.geojson")

# %% O export do SICAR: uma linha por imóvel, o código CAR em `cod_imovel`.
with ENTRADA.open(encoding="utf-8", newline="") as f:
    codigos = [linha["cod_imovel"] for linha in csv.DictReader(f)]
print(f"{len(codigos)} códigos lidos de {ENTRADA.name}")

# %% O cliente: o da sua conta, ou um servidor de teste local.
pilha = ExitStack()
if os.environ.get("CARAPI_BASE_URL") and os.environ.get("CARAPI_API_KEY"):
    client = carapi.Client(max_spend=Decimal("20"))
else:
    from carapi.testing import ServidorTeste

    servidor = pilha.enter_context(ServidorTeste())
    client = servidor.client(saldo="50", max_spend=Decimal("20"))

# %% Uma consulta por código, na ordem do arquivo; erros ficam no resultado de cada um.
lote = client.lote(codigos, consulta="car", max_custo=Decimal("15"))
print(lote)
for r in lote.resultados:
    if r.status != "ok":
        print(f"  {r.chave}: {r.status} {r.erro}")

# %% Data frame: áreas e módulos fiscais como float, coordenadas em graus decimais.
df = lote.to_pandas()
print(df[["chave", "municipio", "areaTotalHa", "modulosFiscais", "latitude", "longitude"]].to_string())
print(f"área total: {df['areaTotalHa'].sum():.4f} ha")

# %% GeoDataFrame (pontos em EPSG:4326) gravado como GeoJSON.
gdf = lote.to_geopandas()
gdf = gdf[gdf.geometry.notna()]
colunas = ["chave", "nomeImovel", "municipio", "uf", "areaTotalHa", "modulosFiscais", "dataCadastro"]
gdf = gdf[[c for c in colunas if c in gdf.columns] + ["geometry"]]
gdf["dataCadastro"] = gdf["dataCadastro"].dt.strftime("%Y-%m-%dT%H:%M:%S")
gdf.to_file(SAIDA, driver="GeoJSON")
print(f"{len(gdf)} imóveis gravados em {SAIDA}")
print(f"gasto: R$ {client.gasto()['total']}")
pilha.close()
