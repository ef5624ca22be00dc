"""Observations acknowledged per second on one server, the SQLite queue beside Redis Streams.

Run: `.venv/bin/python bench/observe_bench.py` (`--help` for the flags). Loopback only,
bounded: `--seconds` (5) of load per engine and batch size.

Starts one `scorewire serve` process per engine (the embedded SQLite file under a
temporary state directory; a throwaway `redis-server` with AOF on `everysec`, as
production runs it), with one rule sampling 10% of traces for two deterministic checks,
and sends `--callers` (8) concurrent Observe calls of `--batch` observations (1 and 100)
from this process for the duration. Reported per engine and batch size: observations
acknowledged per second, calls per second, then, once the consumer has drained the
queue (at most `--drain` s), how many the rule scored and the lag from observation to
score (mean and the histogram's p99 bucket bound) as the server's metrics say.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grpc
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import observe_pb2_grpc

from tests.support.redis import RedisServer
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
RULES = """rules:
  - name: bench
    compact: ["contains:Paris", "length:1..200"]
    sampling_rate: 0.1
"""


def _metrics(port: int) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("scorewire_observe_"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def _p99(m: dict[str, float]) -> str:
    count = m.get('scorewire_observe_lag_seconds_count{rule="bench"}', 0.0)
    if not count:
        return "-"
    buckets = sorted(
        (float(k.split('le="')[1].split('"')[0]), v)
        for k, v in m.items()
        if k.startswith("scorewire_observe_lag_seconds_bucket") and "+Inf" not in k
    )
    for bound, n in buckets:
        if n >= 0.99 * count:
            return f"<= {bound:g} s"
    return "> last bucket"


async def _load(address: str, batch: int, callers: int, seconds: float) -> tuple[int, int]:
    """(observations acknowledged, calls) in `seconds` from `callers` concurrent loops."""
    channel = grpc.aio.insecure_channel(address)
    stub = observe_pb2_grpc.ObserveServiceStub(channel)
    deadline = time.monotonic() + seconds
    acked = calls = 0

    async def caller() -> None:
        nonlocal acked, calls
        while time.monotonic() < deadline:
            request = opb.ObserveRequest()
            for _ in range(batch):
                o = request.observations.add(observation_id=secrets.token_hex(12))
                o.output.text = "The capital of France is Paris."
                o.trace.trace_id = secrets.token_hex(16)
                o.metadata.route = "/bench"
            answer = await stub.Observe(request)
            acked += sum(a.status == opb.OBSERVATION_STATUS_QUEUED for a in answer.acks)
            calls += 1

    await asyncio.gather(*(caller() for _ in range(callers)))
    await channel.close()
    return acked, calls


def _serve(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [str(ROOT / ".venv/bin/scorewire"), "serve", "--port", str(port)],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if "listening" not in line:
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return proc


def run_engine(name: str, extra: dict[str, str], args: argparse.Namespace) -> None:
    for batch in args.batch:
        with tempfile.TemporaryDirectory() as state:
            Path(state, "rules.yaml").write_text(RULES, encoding="utf-8")
            port, mport = free_port(), free_port()
            env = {
                "SCOREWIRE_STATE_DIR": state,
                "SCOREWIRE_OBSERVE_RULES_FILE": "rules.yaml",
                "SCOREWIRE_METRICS_PORT": str(mport),
                "SCOREWIRE_OBSERVE_QUEUE_MAX": "10000000",
                **extra,
            }
            proc = _serve(env, port)
            try:
                acked, calls = asyncio.run(
                    _load(f"127.0.0.1:{port}", batch, args.callers, args.seconds)
                )
                started = time.monotonic()
                while time.monotonic() - started < args.drain:
                    m = _metrics(mport)
                    observed = m.get('scorewire_observe_observed_total{rule="bench"}', 0.0)
                    if observed >= acked:
                        break
                    time.sleep(0.2)
                drained = time.monotonic() - started
                m = _metrics(mport)
                scored = sum(
                    v for k, v in m.items() if k.startswith("scorewire_observe_scored_total")
                )
                count = m.get('scorewire_observe_lag_seconds_count{rule="bench"}', 0.0)
                lag = m.get('scorewire_observe_lag_seconds_sum{rule="bench"}', 0.0) / max(count, 1)
                print(
                    f"{name:7} batch {batch:4}: {acked / args.seconds:9,.0f} obs/s acked "
                    f"({calls / args.seconds:7,.0f} calls/s); consumed {observed:,.0f}/{acked:,} "
                    f"in +{drained:.1f} s; scored {scored:,.0f} "
                    f"({scored / max(acked, 1):.1%}); lag mean {lag:.2f} s, p99 {_p99(m)}",
                    flush=True,
                )
            finally:
                proc.terminate()
                proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--callers", type=int, default=8)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 100])
    parser.add_argument("--drain", type=float, default=60.0)
    args = parser.parse_args()
    run_engine("sqlite", {}, args)
    with tempfile.TemporaryDirectory() as aof:
        os.chdir(aof)  # redis-server writes its append-only file in its working directory
        with RedisServer() as redis:
            subprocess.run(
                ["redis-cli", "-p", str(redis.port), "CONFIG", "SET", "appendonly", "yes"],
                check=True,
                capture_output=True,
            )
            got = subprocess.run(
                ["redis-cli", "-p", str(redis.port), "CONFIG", "GET", "appendonly"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
            assert got == ["appendonly", "yes"], got
            run_engine("redis", {"SCOREWIRE_OBSERVE_QUEUE_URL": redis.url}, args)


if __name__ == "__main__":
    main()
