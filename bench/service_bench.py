"""Service benchmark: Score and RunSuite end to end, beside a bare echo gRPC service.

Run: `make bench-service` (or `.venv/bin/python bench/service_bench.py`).

Both servers run as their own processes; this process is the client. It prints
- Score requests/s with p50/p99 latency (three deterministic checks), and the echo
  service's rate with the same payload, and their ratio (target >= 80%);
- RunSuite over 20,000 recorded outputs x 5 deterministic checks: checks/s end to end
  (target >= 100,000), beside the echo service streaming the same number of results.
Loopback only; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "clients/python/src"), str(ROOT / "bench")]

import grpc  # noqa: E402
from engine_bench import make_cases  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402
from scorewire.v1 import scoring_pb2_grpc as pb_grpc  # noqa: E402

OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.max_send_message_length", 64 << 20),
]


def start(cmd: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"{cmd[0]} did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1].strip()


def score_request() -> pb.ScoreRequest:
    req = pb.ScoreRequest(
        sample=pb.Sample(id="s1"),
        output=pb.Output(text="OK: 200 — the refund was issued to the original card."),
        checks=[
            pb.CheckSpec(type="contains", params={"needles": ["refund"]}),
            pb.CheckSpec(type="regex", params={"pattern": "^OK: [0-9]{1,3}"}),
            pb.CheckSpec(type="length", params={"max_chars": 500}),
        ],
    )
    req.sample.expected.string_value = "refund"
    return req


async def unary_load(call, payload, seconds: float, concurrency: int) -> tuple[int, list[float]]:
    latencies: list[float] = []
    stop = time.perf_counter() + seconds

    async def worker() -> None:
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            await call(payload)
            latencies.append(time.perf_counter() - t0)

    start_t = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return int(len(latencies) / (time.perf_counter() - start_t)), latencies


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000 if len(values) > 100 else float("nan")


async def bench_score(addr: str, echo: str, seconds: float, concurrency: int) -> None:
    """Alternate short rounds of scorewire and echo so background noise hits both alike."""
    req = score_request()
    rounds = 5
    async with (
        grpc.aio.insecure_channel(addr, options=OPTIONS) as ch,
        grpc.aio.insecure_channel(echo, options=OPTIONS) as ech,
    ):
        stub = pb_grpc.ScoringServiceStub(ch)
        # The echo client serializes and parses the same message types a Score client
        # does, so both sides pay the same protobuf costs.
        echo_call = ech.unary_unary(
            "/Echo/Unary",
            request_serializer=pb.ScoreRequest.SerializeToString,
            response_deserializer=pb.ScoreRequest.FromString,
        )
        payload = req
        await stub.Score(req)  # warm up: plan cache, connections
        await echo_call(payload)
        rates, erates, lat, elat = [], [], [], []
        for _ in range(rounds):
            rate, lat_r = await unary_load(stub.Score, req, seconds / rounds, concurrency)
            erate, elat_r = await unary_load(echo_call, payload, seconds / rounds, concurrency)
            rates.append(rate)
            erates.append(erate)
            lat += lat_r
            elat += elat_r
    ratios = sorted(r / e for r, e in zip(rates, erates, strict=True))
    rate, erate = int(statistics.median(rates)), int(statistics.median(erates))
    print(
        f"Score (3 checks, {concurrency} in flight, {rounds} alternating rounds of "
        f"{seconds / rounds:g} s each):"
    )
    print(f"  scorewire: {rate:7,d} req/s  p50 {pct(lat, 50):.2f} ms  p99 {pct(lat, 99):.2f} ms")
    print(f"  echo:      {erate:7,d} req/s  p50 {pct(elat, 50):.2f} ms  p99 {pct(elat, 99):.2f} ms")
    print(
        f"  ratio:     {statistics.median(ratios):.0%} of echo, median of rounds "
        f"(range {ratios[0]:.0%}..{ratios[-1]:.0%}; target >= 80%)"
    )


async def bench_suite(addr: str, echo: str, samples: int) -> None:
    from engine_bench import CHECKS

    req = pb.RunSuiteRequest()
    for spec in CHECKS:
        m = req.checks.add(type=spec.type)
        m.params.update(dict(spec.params))
    for c in make_cases(samples):
        case = req.cases.add()
        case.sample.id = c.sample.id
        case.sample.expected.string_value = str(c.sample.expected)
        case.output.text = c.output.text
    async with (
        grpc.aio.insecure_channel(addr, options=OPTIONS) as ch,
        grpc.aio.insecure_channel(echo, options=OPTIONS) as ech,
    ):
        stub = pb_grpc.ScoringServiceStub(ch)
        results = scores = 0
        t0 = time.perf_counter()
        async for ev in stub.RunSuite(req):
            if ev.WhichOneof("event") == "results":
                results += len(ev.results.results)
                scores += sum(len(r.scores) for r in ev.results.results)
        elapsed = time.perf_counter() - t0
        assert results == samples, (results, samples)
        stream = ech.unary_stream("/Echo/Stream")
        t1 = time.perf_counter()
        echoed = 0
        async for raw in stream(req.SerializeToString()):
            ev = pb.RunSuiteResponse.FromString(raw)
            echoed += len(ev.results.results)
        eelapsed = time.perf_counter() - t1
    print(f"RunSuite ({samples} recorded outputs x {len(CHECKS)} checks, separate client process):")
    print(
        f"  scorewire: {elapsed * 1000:8.1f} ms  {scores / elapsed:10,.0f} checks/s "
        f"(target >= 100,000)  {results / elapsed:,.0f} cases/s"
    )
    print(
        f"  echo:      {eelapsed * 1000:8.1f} ms  {echoed / eelapsed:10,.0f} cases/s streamed back"
    )
    print(f"  ratio:     {(results / elapsed) / (echoed / eelapsed):.0%} of echo's case rate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--metrics", action="store_true", help="serve with metrics on")
    args = parser.parse_args()
    env = dict(
        os.environ,
        SCOREWIRE_METRICS_ENABLED="true" if args.metrics else "false",
        SCOREWIRE_METRICS_PORT="0",
    )
    py = sys.executable
    server, addr = start([str(Path(py).parent / "scorewire"), "serve", "--port", "0"], env)
    echo, echo_addr = start([py, str(ROOT / "bench/echo_server.py")])
    try:
        asyncio.run(bench_score(addr, echo_addr, args.seconds, args.concurrency))
        asyncio.run(bench_suite(addr, echo_addr, args.samples))
    finally:
        for p in (server, echo):
            p.terminate()
            p.wait(10)


if __name__ == "__main__":
    main()
