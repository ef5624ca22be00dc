"""A short, bounded run of bench/load_test.py against a `scorewire serve` process.

5 streams x 500 cases plus Score traffic for 3 s, and a 20,000-case slow read: every
result arrives exactly once and no call ends with an error status. No timing
assertions: the numbers belong to the full benchmark. Beside it, backpressure checked
directly: a reader that stops reading stops the scoring.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from scorewire.core.model import Output, Sample
from scorewire.engine.custom import check
from scorewire.v1 import scoring_pb2 as pb

from tests.hardening.support import collect_run, stub, thread_server

ROOT = Path(__file__).resolve().parents[2]


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "scorewire_load_test", ROOT / "bench/load_test.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Any, str]]:
    proc, address = bench.start_server()
    try:
        yield proc, address
    finally:
        bench.stop_server(proc)
        assert proc.returncode == 0


def test_streams_and_score_traffic_deliver_every_result_once(server: tuple[Any, str]) -> None:
    # Every RunSuite run returns each of its cases once, then its summary; no error status.
    proc, address = server
    report = asyncio.run(
        bench.run_load(address, proc.pid, streams=5, cases=500, duration_s=3.0, score_rate=50.0)
    )
    assert report.clean, (report.stream_errors, report.score_errors, report.duplicates)
    assert report.runs_completed >= 5
    assert report.cases_delivered == report.runs_completed * 500
    assert report.checks_delivered == report.cases_delivered * 5
    assert report.score_latencies and not report.score_shed
    assert report.server_hwm >= report.server_rss_start > 0


def test_slow_reader_gets_every_result_once(server: tuple[Any, str]) -> None:
    # Reading slowly (a pause after every message) loses and repeats nothing.
    proc, address = server
    report = asyncio.run(bench.run_slow_reader(address, proc.pid, cases=20_000, delay_s=0.002))
    assert report.exactly_once, (report.delivered, report.duplicates, report.summary_ok)
    assert report.messages > 2  # batched, but more than one batch


SCORED = [0]


@check("test.count_scored")
def count_scored(sample: Sample, output: Output) -> bool:
    """Counts the cases it scores (in SCORED) and passes: shows when scoring pauses."""
    SCORED[0] += 1
    return True


def test_a_reader_that_stops_pauses_scoring() -> None:
    # Backpressure: while the client reads nothing, the server scores only what fits in
    # its bounded result buffer and the transport's flow-control windows, then waits;
    # reading again resumes it, and every result still arrives once.
    n = 30_000
    # A 2 kB check name makes every result 2 kB, so the transport's windows (bytes) hold
    # only a few thousand results and the bounded buffer's pause shows with few cases.
    counted = pb.CheckSpec(name="counted-" + "x" * 2000, type="test.count_scored")
    # (2 kB is over the default max_check_name_chars, which this test raises.)
    with (
        thread_server(max_cases_per_request=n, max_check_name_chars=4096) as srv,
        srv.channel() as ch,
    ):
        cases = [pb.Case(output=pb.Output(text=f"x{i}")) for i in range(n)]
        req = pb.RunSuiteRequest(checks=[counted], cases=cases)
        SCORED[0] = 0
        call = stub(ch).RunSuite(req)
        first = next(call)
        last = -1
        for _ in range(100):  # until the count settles (a bounded wait)
            time.sleep(0.2)
            if SCORED[0] == last:
                break
            last = SCORED[0]
        assert SCORED[0] == last, "scoring never paused"
        # Measured: a few thousand (1,024 buffered, the rest in HTTP/2 flow-control windows).
        assert last < n // 2, f"{last} of {n} cases scored for a reader that stopped"
        results, summary = collect_run(itertools.chain([first], call))
        assert sorted(results) == list(range(n)) and summary.passed == n
