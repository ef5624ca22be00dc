"""What registered method handlers cost a grpc.aio server per unary call.

    .venv/bin/python bench/registered_methods.py [--rounds 6] [--extra 14] [--seconds 3]

An echo server runs in this process, alternately with and without `--extra` registered
methods (scorewire's three services have 14); a grpc.aio client in another process
calls it at 32 in flight for `--seconds`. Printed: the server thread's CPU time per
call (thread CPU time, so a descheduled process does not count someone else's time),
per round and as medians. grpc.aio's server loop keeps one pending request per
registered method and waits on all of them for every call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "clients/python/src")]

import grpc  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402

CLIENT = """
import asyncio, sys, time
import grpc
from scorewire.v1 import scoring_pb2 as pb
addr, seconds = sys.argv[1], float(sys.argv[2])
req = pb.ScoreRequest(output=pb.Output(text="OK: 200 - the refund was issued."))
async def run():
    async with grpc.aio.insecure_channel(addr) as ch:
        call = ch.unary_unary("/Echo/Unary", request_serializer=pb.ScoreRequest.SerializeToString,
                              response_deserializer=pb.ScoreRequest.FromString)
        for _ in range(100):
            await call(req)
        print("warm", flush=True)
        stop, count = time.perf_counter() + seconds, 0
        async def worker():
            nonlocal count
            while time.perf_counter() < stop:
                await call(req)
                count += 1
        await asyncio.gather(*(worker() for _ in range(32)))
        print(count, flush=True)
asyncio.run(run())
"""


async def _unary(request: Any, context: Any) -> Any:
    return request


async def one_round(extra: int, seconds: float) -> float:
    """The server thread's CPU µs per call with `extra` registered methods."""
    server = grpc.aio.server()
    echo = grpc.unary_unary_rpc_method_handler(
        _unary,
        request_deserializer=pb.ScoreRequest.FromString,
        response_serializer=pb.ScoreRequest.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("Echo", {"Unary": echo}),)
    )
    if extra:
        others = {f"M{i}": echo for i in range(extra)}
        server.add_registered_method_handlers("Other", others)  # type: ignore[attr-defined]
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CLIENT,
            f"127.0.0.1:{port}",
            str(seconds),
            stdout=subprocess.PIPE,
            env={"PYTHONPATH": str(ROOT / "clients/python/src")},
        )
        assert proc.stdout is not None
        await proc.stdout.readline()  # warmed up
        t0 = time.thread_time()
        count = int((await proc.stdout.readline()).decode())
        cpu = time.thread_time() - t0
        await proc.wait()
        return cpu / count * 1e6
    finally:
        await server.stop(0)


async def main(rounds: int, extra: int, seconds: float) -> None:
    got: dict[int, list[float]] = {0: [], extra: []}
    for r in range(rounds):
        for n in (0, extra) if r % 2 == 0 else (extra, 0):
            got[n].append(await one_round(n, seconds))
            print(f"round {r + 1}: {n:2d} registered: {got[n][-1]:6.1f} µs/call", flush=True)
    for n, values in got.items():
        print(f"{n:2d} registered methods: median {statistics.median(values):.1f} µs/call")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--extra", type=int, default=14)
    parser.add_argument("--seconds", type=float, default=3.0)
    a = parser.parse_args()
    asyncio.run(main(a.rounds, a.extra, a.seconds))
