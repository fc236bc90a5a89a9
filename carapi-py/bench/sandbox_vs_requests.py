"""1,000 sandbox lookups from Python: `carapi.Client.car` against `requests` with one keep-alive
Session, against the same local reference server, in one run.

    pip install requests
    python carapi-py/bench/sandbox_vs_requests.py [N]

Measure with a release build of the extension (`maturin build --release --zig` in carapi-py,
then pip install the wheel); a dev wheel (`.ci/run`'s) is slower on the carapi side. Both sides run with no client-side rate limit and the server's per-key limiter off
(`ServidorTeste(limite_taxa=None)`), so the figure is the client's cost per call, not the
contract's 10 requests/s. Both decode the JSON body; carapi also turns it into the typed dict
(Decimal, datetime). Prints a markdown table; the target is a ratio of at most 1.0.
"""

import statistics
import sys
import time

import requests

import carapi
from carapi import sandbox
from carapi.testing import ServidorTeste

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
RODADAS = 5


def medir(chamar, n):
    """Wall time of `n` calls, seconds."""
    inicio = time.perf_counter()
    for _ in range(n):
        chamar()
    return time.perf_counter() - inicio


def main():
    with ServidorTeste(limite_taxa=None) as srv:
        chave = srv.conta(saldo="10")
        client = carapi.Client(base_url=srv.base_url, api_key=chave, rate_limit=None)
        sessao = requests.Session()
        sessao.headers["Authorization"] = f"Bearer {chave}"
        url = f"{srv.base_url}/v1/car/{sandbox.CAR_BASICO}"

        def via_carapi():
            r = client.car(sandbox.CAR_BASICO)
            assert r["sandbox"] is True

        def via_requests():
            r = sessao.get(url, timeout=30)
            r.raise_for_status()
            assert r.json()["sandbox"] is True

        medir(via_carapi, 50)  # warm-up: connections, caches
        medir(via_requests, 50)
        tempos_c, tempos_r = [], []
        for _ in range(RODADAS):  # interleaved, so machine noise hits both sides alike
            tempos_c.append(medir(via_carapi, N))
            tempos_r.append(medir(via_requests, N))
        c, r = statistics.median(tempos_c), statistics.median(tempos_r)
        print(f"{N} sandbox lookups, median of {RODADAS} interleaved runs\n")
        print("| client | total (s) | per call (µs) | calls/s |")
        print("|---|---|---|---|")
        print(f"| carapi (Rust SDK) | {c:.3f} | {c / N * 1e6:.0f} | {N / c:,.0f} |")
        print(f"| requests.Session | {r:.3f} | {r / N * 1e6:.0f} | {N / r:,.0f} |")
        print(f"\nratio carapi / requests: {c / r:.2f} (target <= 1.0)")
        assert client.gasto()["total"] == 0, "sandbox lookups are free"


if __name__ == "__main__":
    main()
