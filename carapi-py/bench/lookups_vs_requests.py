"""Lookups from Python: `carapi.Client.car` against `requests` with one keep-alive Session, against
the same local reference server, in one run: charged lookups of the bundled records (the
figure that matters: each one pays) and sandbox lookups.

    pip install requests
    python carapi-py/bench/lookups_vs_requests.py [N]

Measure with a release build of the extension (`maturin build --release --zig` in carapi-py,
then pip install the wheel); a dev wheel (`.ci/run`'s) is slower on the carapi side. Both sides
run with no client-side rate limit and the server's per-key limiter off
(`ServidorTeste(limite_taxa=None)`), so the figure is the client's cost per call, not the
contract's 10 requests/s. Both decode the JSON body; carapi also turns it into the typed dict
(Decimal, datetime) and counts what it spent. Prints a markdown table; the target for charged
lookups is a ratio of at most 0.5.
"""

import statistics
import sys
import time

import requests

import carapi
from carapi import sandbox
from carapi.testing import CODIGOS_CAR, ServidorTeste

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
ROUNDS = 5


def measure(call, n):
    """Wall time of `n` calls, seconds."""
    start = time.perf_counter()
    for i in range(n):
        call(i)
    return time.perf_counter() - start


def compare(name, via_carapi, via_requests):
    measure(via_carapi, 50)  # warm-up: connections, caches, the account's prices
    measure(via_requests, 50)
    times_c, times_r = [], []
    for _ in range(ROUNDS):  # interleaved, so machine noise hits both sides alike
        times_c.append(measure(via_carapi, N))
        times_r.append(measure(via_requests, N))
    c, r = statistics.median(times_c), statistics.median(times_r)
    print(f"| {name} | carapi (Rust SDK) | {c:.3f} | {c / N * 1e6:.0f} | {N / c:,.0f} |")
    print(f"| {name} | requests.Session | {r:.3f} | {r / N * 1e6:.0f} | {N / r:,.0f} |")
    return c / r


def main():
    with ServidorTeste(limite_taxa=None) as srv:
        key = srv.conta(saldo="1000000")
        client = carapi.Client(base_url=srv.base_url, api_key=key, rate_limit=None)
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {key}"

        def carapi_charged(i):
            assert client.car(CODIGOS_CAR[i % len(CODIGOS_CAR)])["success"] is True

        def requests_charged(i):
            r = session.get(f"{srv.base_url}/v1/car/{CODIGOS_CAR[i % len(CODIGOS_CAR)]}", timeout=30)
            r.raise_for_status()
            assert r.json()["success"] is True

        def carapi_sandbox(i):
            assert client.car(sandbox.CAR_BASICO)["sandbox"] is True

        def requests_sandbox(i):
            r = session.get(f"{srv.base_url}/v1/car/{sandbox.CAR_BASICO}", timeout=30)
            r.raise_for_status()
            assert r.json()["sandbox"] is True

        print(f"{N} lookups per run, median of {ROUNDS} interleaved runs\n")
        print("| lookups | client | total (s) | per call (µs) | calls/s |")
        print("|---|---|---|---|---|")
        charged = compare("charged", carapi_charged, requests_charged)
        free = compare("sandbox", carapi_sandbox, requests_sandbox)
        print(f"\nratio carapi / requests: charged {charged:.2f} (target <= 0.5), sandbox {free:.2f}")
        spent = client.gasto()
        assert spent["incerto"] == 0 and spent["confirmado"] == (50 + ROUNDS * N) * 1, spent


if __name__ == "__main__":
    main()
