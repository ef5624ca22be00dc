"""CPU per case of each process in a RunSuite through the Python client: where goal 1 goes.

    .venv/bin/python bench/suite_cpu.py [--rounds 3] [--samples 20000]

Runs the e2e bench's RunSuite round (`e2e_bench.suite_round`: the peers' dataset from
plain dicts through `scorewire.client`, the server's defaults, metrics on) against a
`scorewire serve` started here, and reads the CPU time of the client (this process),
the server and its scoring workers (with their forkserver) from /proc around each round.

On two cores the total is what bounds the rate: a RunSuite cannot run faster than the
sum of these CPU times divided by the cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "service"), str(ROOT / "clients/python/src"), str(ROOT / "bench")]

import e2e_bench as E  # noqa: E402
from peer_dataset import make_records  # noqa: E402
from unary_overhead import cpu_s, descendants  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=20_000)
    args = parser.parse_args()
    records = make_records(args.samples)
    srv, addr = E.start_server(tempfile.mkdtemp(prefix="suite-cpu-"))
    try:
        E.suite_round(addr, records[:2000])  # warm up: plan, workers, connection
        n = len(records)
        for r in range(args.rounds):
            kids = descendants(srv.pid)
            server0, workers0 = cpu_s(srv.pid), sum(cpu_s(k) for k in kids)
            client0, t0 = time.process_time(), time.perf_counter()
            rate = E.suite_round(addr, records)
            elapsed = time.perf_counter() - t0
            client = (time.process_time() - client0) / n * 1e6
            server = (cpu_s(srv.pid) - server0) / n * 1e6
            workers = (sum(cpu_s(k) for k in kids) - workers0) / n * 1e6
            print(
                f"round {r + 1}: {rate:8,.0f} checks/s ({elapsed:.2f} s)  CPU per case: "
                f"client {client:4.1f} µs, server {server:4.1f} µs, "
                f"workers {workers:4.1f} µs, total {client + server + workers:5.1f} µs",
                flush=True,
            )
    finally:
        E.stop(srv)


if __name__ == "__main__":
    main()
