"""Tenants in contention: one tenant's heavy work beside another tenant's small calls.

Run: `.venv/bin/python bench/contention.py --runs 10` (loopback only; every attack is
bounded in count and by a deadline). Each run starts `scorewire serve` with its defaults
and two tokens, then two attacks one after the other, while tenant B (a process of its
own) sends small Scores at a steady rate, open loop:

- **worker hog**: tenant A runs 8 concurrent RunSuites of heavy cases (a JSON output
  against a 20 kB JSON Schema each) — more work than every scoring worker can do in the
  window. B alternates a Score scored inline (three cheap checks) and one routed to a
  worker (a 20 kB json_schema check: over inline_score_max_bytes).
- **big requests**: tenant A sends 3 concurrent RunSuites of ~60 MB each, their samples'
  inputs Value trees, as one message each (what a hostile caller sends; the clients
  split big batches).

Reported per run and attack: B's p50/p99/max by kind, B's failed calls, how A's calls
ended, and the peak RSS of the server's process tree (sampled every 50 ms). Targets
(issue "Fair under contention"): B's p99 < 50 ms and no failed call in every run, A's
work completes or is refused with RESOURCE_EXHAUSTED, the tree under 1 GB in the big
requests. The exit status is 1 when a target is missed in any run.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
THIS_FILE = str(Path(__file__).resolve())
sys.path[:0] = [str(ROOT / "clients/python/src"), str(ROOT / "bench")]

import grpc  # noqa: E402
from hostile_neighbour import RssSampler, stop_server  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402
from scorewire.v1 import scoring_pb2_grpc as pb_grpc  # noqa: E402

OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.max_send_message_length", 64 << 20),
]
TOKENS = {"a": "token-of-tenant-a", "b": "token-of-tenant-b"}


def _as(name: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {TOKENS[name]}"),)


def start_server(extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """`scorewire serve` with its defaults, two tenants' tokens, metrics on a free port
    (and `extra_env` over them)."""
    tokens = [
        {"name": f"tenant-{n}", "sha256": hashlib.sha256(t.encode()).hexdigest(), "role": "caller"}
        for n, t in TOKENS.items()
    ]
    env = dict(os.environ, SCOREWIRE_METRICS_PORT="0", SCOREWIRE_LOG_LEVEL="ERROR")
    env["SCOREWIRE_STATE_DIR"] = tempfile.mkdtemp(prefix="scorewire-contention-")
    env["SCOREWIRE_AUTH_TOKENS"] = json.dumps(tokens)
    env.update(extra_env or {})
    scorewire = str(Path(sys.executable).parent / "scorewire")
    proc = subprocess.Popen(
        [scorewire, "serve", "--port", "0"], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"scorewire serve did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1].strip()


def _schema(props: int) -> dict[str, Any]:
    """A JSON Schema of about 20 kB: many typed, patterned properties."""
    return {
        "type": "object",
        "properties": {
            f"field_{i:03d}": {"type": "string", "maxLength": 64, "description": "a property " * 3,
                               **({"pattern": f"^[a-z]{{1,{20 + i % 30}}}$"} if i < 60 else {})}
            for i in range(props)
        },
        "required": [f"field_{i:03d}" for i in range(0, props, 3)],
    }  # fmt: skip


SCHEMA = _schema(200)


def _json_check() -> pb.CheckSpec:
    spec = pb.CheckSpec(type="json_schema")
    spec.params.update({"schema": SCHEMA})
    return spec


def heavy_suite(cases: int) -> pb.RunSuiteRequest:
    """A RunSuite of `cases` JSON outputs, each against the 20 kB schema."""
    doc = json.dumps({f"field_{i:03d}": "abc" * (1 + i % 5) for i in range(200)})
    req = pb.RunSuiteRequest(checks=[_json_check()])
    for i in range(cases):
        c = req.cases.add()
        c.sample.id = str(i)
        c.output.text = doc
    return req


def big_suite(megabytes: int) -> pb.RunSuiteRequest:
    """A RunSuite of about `megabytes` MB whose samples' inputs are Value trees."""
    req = pb.RunSuiteRequest(compact=["length:1..4000"])
    tree = {"messages": [{"role": "user", "content": "x" * 200, "meta": {"n": i}}
                         for i in range(8)]}  # fmt: skip
    one = pb.Case()
    one.sample.input.struct_value.update(tree)
    one.output.text = "an answer"
    n = megabytes * 1_000_000 // one.ByteSize()
    for i in range(n):
        c = req.cases.add()
        c.CopyFrom(one)
        c.sample.id = str(i)
    return req


def inline_request() -> pb.ScoreRequest:
    req = pb.ScoreRequest(compact=["contains:refund", "length:1..200"])
    req.checks.add(type="regex").params.update({"pattern": r"within \d+ days"})
    req.output.text = "The refund was issued to the original card within 5 days."
    return req


def worker_request() -> pb.ScoreRequest:
    doc = json.dumps({f"field_{i:03d}": "abc" for i in range(200)})
    return pb.ScoreRequest(checks=[_json_check()], output=pb.Output(text=doc))


async def neighbour(address: str, rate: float) -> dict[str, Any]:
    """Tenant B: a Score at `rate`/s, alternately inline and worker-routed, until stdin
    says stop; its latencies by kind and its failures."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    kinds = {"inline": inline_request(), "worker": worker_request()}
    lat: dict[str, list[float]] = {k: [] for k in kinds}
    slowest: list[tuple[float, float, str]] = []  # (latency, seconds into the window, kind)
    errors: Counter[str] = Counter()
    began = 0.0
    pending: set[asyncio.Task[None]] = set()

    async def one(stub: pb_grpc.ScoringServiceStub, kind: str) -> None:
        t0 = time.perf_counter()
        try:
            resp = await stub.Score(kinds[kind], metadata=_as("b"), timeout=10)
            if not resp.scores or any(s.error.code for s in resp.scores):
                errors[f"{kind}:WRONG_ANSWER"] += 1
                return
        except grpc.aio.AioRpcError as err:
            errors[f"{kind}:{err.code().name}"] += 1
            return
        lat[kind].append(time.perf_counter() - t0)
        slowest.append((lat[kind][-1], t0 - began, kind))

    async with grpc.aio.insecure_channel(address, options=OPTIONS) as ch:
        stub = pb_grpc.ScoringServiceStub(ch)
        for _ in range(20):  # warm up: plans compiled, the cheap one learnt inline
            for k in kinds:
                await stub.Score(kinds[k], metadata=_as("b"), timeout=30)
        print("ready", flush=True)
        await reader.readline()  # start
        began = time.perf_counter()
        stop = asyncio.ensure_future(reader.readline())
        interval, next_at, n = 1.0 / rate, time.monotonic(), 0
        while not stop.done():
            kind = "inline" if n % 2 == 0 else "worker"
            n += 1
            task = asyncio.create_task(one(stub, kind))
            pending.add(task)
            task.add_done_callback(pending.discard)
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        if pending:
            await asyncio.gather(*pending)
    return {"latencies": lat, "errors": dict(errors), "slowest": sorted(slowest)[-12:][::-1]}


async def _run_suite(stub: pb_grpc.ScoringServiceStub, req: Any, deadline: float) -> str:
    try:
        async for _ in stub.RunSuite(req, metadata=_as("a"), timeout=deadline):
            pass
        return "OK"
    except grpc.aio.AioRpcError as err:
        return err.code().name


async def attack(address: str, name: str, args: argparse.Namespace) -> list[str]:
    """Tenant A's attack `name`; how each of its calls ended."""
    async with grpc.aio.insecure_channel(address, options=OPTIONS) as ch:
        stub = pb_grpc.ScoringServiceStub(ch)
        if name == "worker hog":
            req = heavy_suite(args.hog_cases)
            calls = [_run_suite(stub, req, args.deadline) for _ in range(8)]
        else:
            req = big_suite(args.big_mb)
            calls = [_run_suite(stub, req, args.deadline) for _ in range(3)]
        return list(await asyncio.gather(*calls))


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


async def one_run(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """One server, one attack, tenant B throughout; what was measured."""
    proc, address = start_server()
    try:
        nb = await asyncio.create_subprocess_exec(
            sys.executable, THIS_FILE, "--neighbour", address, str(args.rate),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert nb.stdin is not None and nb.stdout is not None
        await nb.stdout.readline()  # ready
        with RssSampler(proc.pid) as rss:
            nb.stdin.write(b"start\n")
            await nb.stdin.drain()
            t0 = time.monotonic()
            outcomes = await attack(address, name, args)
            took = time.monotonic() - t0
            await asyncio.sleep(0.5)
            stdout, _ = await nb.communicate(b"stop\n")
        report = json.loads(stdout.decode().strip().splitlines()[-1])
    finally:
        stop_server(proc)
    return {"attack": name, "a": outcomes, "a_s": took, "peak_mb": rss.peak / 2**20, **report}


def _spread(values: list[float]) -> str:
    top = max(values, default=0) * 1000
    return (
        f"p50/p99/max {_pct(values, 0.5):.1f}/{_pct(values, 0.99):.1f}/{top:.1f} ms ({len(values)})"
    )


def judge(result: dict[str, Any], args: argparse.Namespace) -> dict[str, bool]:
    lat = result["latencies"]
    every = lat["inline"] + lat["worker"]
    targets = {
        "B p99 < 50 ms": _pct(every, 0.99) < 50,
        "no failed B call": not result["errors"],
        "A done or RESOURCE_EXHAUSTED": all(o in ("OK", "RESOURCE_EXHAUSTED") for o in result["a"]),
    }
    if result["attack"] == "big requests":
        targets["tree < 1 GB"] = result["peak_mb"] < 1024
    return targets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="runs of both attacks (1)")
    parser.add_argument("--rate", type=float, default=50.0, help="tenant B's Score/s (50)")
    parser.add_argument("--hog-cases", type=int, default=2000, help="cases per hog run (2000)")
    parser.add_argument("--big-mb", type=int, default=60, help="MB per big request (60)")
    parser.add_argument("--deadline", type=float, default=120.0, help="A's deadline, s (120)")
    parser.add_argument("--attacks", default="worker hog,big requests")
    parser.add_argument("--neighbour", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.neighbour:
        address, rate = args.neighbour
        print(json.dumps(asyncio.run(neighbour(address, float(rate)))))
        return 0
    ok = True
    for run in range(1, args.runs + 1):
        for name in args.attacks.split(","):
            result = asyncio.run(one_run(args, name))
            targets = judge(result, args)
            ok &= all(targets.values())
            lat = result["latencies"]
            print(
                f"run {run} {name:<12} A {Counter(result['a'])} in {result['a_s']:.1f} s | "
                f"B inline {_spread(lat['inline'])}, worker {_spread(lat['worker'])}, "
                f"failed {result['errors'] or 0} | tree peak {result['peak_mb']:.0f} MB | "
                + " ".join(("met " if v else "MISSED ") + k for k, v in targets.items()),
                flush=True,
            )
            slow = ", ".join(f"{ms * 1000:.0f} ms ({kind}) at +{at:.2f} s"
                             for ms, at, kind in result["slowest"])  # fmt: skip
            print(f"  B's slowest calls, when they were sent into the window: {slow}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
