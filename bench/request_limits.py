"""The worst single requests of issue 13, each timed against a real server: refused or fast.

Run: `PYTHONPATH=service:clients/python/src .venv/bin/python bench/request_limits.py`

Loopback, in-process server on a free port, bounded (each call has a 120 s deadline).
For each request the issue measured, it prints how long the call took, how it ended
(a status code, or OK) and the server process's RSS after it. `--only NAME` runs one.
Before the limits these took: contains 5,000 needles on 10 MB 16 s; 64 x max_tokens on
10 MB 25 s; 64 regex checks in 3 kB 9 s; a 20 kB schema with 300 patterns 36 s and
~850 MB; uniqueItems over 10,000 objects 83 s; a 300 kB check name: RunSuite failed.
The slow-reader stream is reported as cases the server scored while nobody read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable

import grpc
from google.protobuf import json_format
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

TEN_MB = "word " * (2 * 1024 * 1024)


def rss_mb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 // 2**20


def spec(ctype: str, name: str = "", **params: object) -> pb.CheckSpec:
    return json_format.ParseDict({"type": ctype, "name": name, "params": params}, pb.CheckSpec())


def attacks(stub: scoring_pb2_grpc.ScoringServiceStub) -> dict[str, Callable[[], Awaitable[str]]]:
    async def score(req: pb.ScoreRequest) -> str:
        await stub.Score(req, timeout=120)
        return "OK"

    async def run_suite(req: pb.RunSuiteRequest) -> str:
        n = 0
        async for m in stub.RunSuite(req, timeout=120):
            n += len(m.results.results)
        return f"OK ({n} results)"

    schema300 = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "pattern": rf"^\w+{i}$"} for i in range(300)},
    }
    return {
        "contains_5000_needles_10MB": lambda: score(
            pb.ScoreRequest(
                output=pb.Output(text=TEN_MB),
                checks=[spec("contains", needles=[f"n{i}" for i in range(5000)])],
            )
        ),
        "max_tokens_x64_10MB": lambda: score(
            pb.ScoreRequest(
                output=pb.Output(text=TEN_MB),
                checks=[spec("max_tokens", name=f"t{i}", value=10) for i in range(64)],
            )
        ),
        "bleu_x64_10MB": lambda: score(
            pb.ScoreRequest(
                output=pb.Output(text=TEN_MB),
                checks=[spec("bleu", name=f"b{i}", value="ref") for i in range(64)],
            )
        ),
        "regex_x64_3kB": lambda: score(
            pb.ScoreRequest(
                output=pb.Output(text="x"),
                checks=[spec("regex", pattern=rf"\d{{1000}}x{i}") for i in range(64)],
            )
        ),
        "schema_300_patterns": lambda: score(
            pb.ScoreRequest(
                output=pb.Output(text="{}"), checks=[spec("json_schema", schema=schema300)]
            )
        ),
        "unique_items_10000_objects": lambda: score(
            pb.ScoreRequest(
                output=pb.Output(text=json.dumps([{"id": i, "v": f"n{i}"} for i in range(10_000)])),
                checks=[spec("json_schema", schema={"type": "array", "uniqueItems": True})],
            )
        ),
        "language_x64": lambda: score(
            pb.ScoreRequest(
                output=pb.Output(text="x"),
                checks=[spec("language", value=c) for c in ("sv", "da", "fi", "pl", "cs") * 13][
                    :64
                ],
            )
        ),
        "check_name_300kB": lambda: run_suite(
            pb.RunSuiteRequest(
                checks=[pb.CheckSpec(type="length", name="n" * 300_000, params={"max_chars": 5})],
                cases=[pb.Case(output=pb.Output(text="x")) for _ in range(300)],
            )
        ),
    }


async def slow_reader(stub: scoring_pb2_grpc.ScoringServiceStub, cases: int) -> str:
    """A ScoreStream of 32 checks with 1,000-character names whose reader stops."""
    scored = {"n": 0}

    async def requests():
        names = [
            pb.CheckSpec(type="length", name="c" * 1000 + str(j), params={"max_chars": 9})
            for j in range(32)
        ]
        yield pb.ScoreStreamRequest(config=pb.StreamConfig(checks=names))
        for i in range(cases):
            scored["n"] = i
            yield pb.ScoreStreamRequest(case=pb.StreamCase(request_id=str(i)))

    call = stub.ScoreStream(requests())
    await call.read()
    await asyncio.sleep(3)  # a reader that stopped; bench only, not a test
    sent = scored["n"]
    peak = rss_mb()
    got = 1
    while await call.read() is not grpc.aio.EOF:
        got += 1
    return f"sent {sent} of {cases} cases while unread (RSS then {peak} MB); then read {got}"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only")
    parser.add_argument("--stream-cases", type=int, default=5000)
    args = parser.parse_args()
    settings = Settings(host="127.0.0.1", port=0, metrics_enabled=False)
    running, port = await create_server(settings)
    channel = grpc.aio.insecure_channel(
        f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", 64 * 2**20)]
    )
    stub = scoring_pb2_grpc.ScoringServiceStub(channel)
    try:
        print(f"{'request':32} {'seconds':>8}  {'RSS MB':>6}  outcome")
        for name, call in attacks(stub).items():
            if args.only and name != args.only:
                continue
            t = time.perf_counter()
            try:
                outcome = await call()
            except grpc.aio.AioRpcError as err:
                outcome = f"{err.code().name}: {err.details()[:90]}"
            print(f"{name:32} {time.perf_counter() - t:8.2f}  {rss_mb():6}  {outcome}", flush=True)
        if not args.only or args.only == "slow_reader":
            t = time.perf_counter()
            outcome = await slow_reader(stub, args.stream_cases)
            print(f"{'slow_reader':32} {time.perf_counter() - t:8.2f}  {rss_mb():6}  {outcome}")
    finally:
        await channel.close()
        await running.stop(0)


if __name__ == "__main__":
    asyncio.run(main())
