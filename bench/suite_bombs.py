"""Suite bombs: what a big compact line and an alias-expanded suite cost the server.

    .venv/bin/python bench/suite_bombs.py [--calls 10] [--line-mb 60] [--as-limit-gb 0]

Starts `scorewire serve` (defaults, loopback, a free port) and sends, one attack after
another, while a neighbour process sends a small Score every 20 ms:

1. `--calls` concurrent ValidateSuite calls, each with one compact line of `--line-mb`
   MB (`contains:xxx…`);
2. RunSuite with the 10 kB suite whose json_schema enum aliases one 4 kB string
   ~990,000 times (~4 GB once expanded, under the node limit);
3. RunSuite with the same expansion in a checkllm test's vars, which its prompt renders.

Reported per attack: the status codes and how long each call took to be answered, the
neighbour's median and worst latency while it ran, and the serving process's VmRSS
after it (1.5 s later: the server trims freed memory once a second) and VmHWM (its peak
so far), with the peak RSS of the whole process tree (scoring workers included), sampled
every 50 ms. `--as-limit-gb` caps each server process's address space (RLIMIT_AS), so a
server without the bounds fails an attack instead of taking the machine's memory.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parent)]

import grpc  # noqa: E402
import hostile_neighbour as hn  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402
from scorewire.v1 import scoring_pb2_grpc as pb_grpc  # noqa: E402

S = "x" * 4000
ALIASED = "[&l [&s '" + S + "'" + ", *s" * 999 + "]" + ", *l" * 989 + "]"
ALIAS_SUITE = "checks:\n  c: {type: json_schema, schema: {enum: " + ALIASED + "}}\n"
ALIAS_CHECKLLM = (
    "prompts: ['Answer {{q}} from {{context}}']\n"
    f"tests:\n  - vars: {{q: hi, context: {ALIASED}}}\n"
    "    assert: [{type: contains, value: hi}]\n    output: hi\n"
)


def start_server(as_limit_gb: float) -> tuple[subprocess.Popen[str], str]:
    """`scorewire serve --port 0`, its address space capped when `as_limit_gb` > 0."""
    env = dict(os.environ, SCOREWIRE_METRICS_PORT="0", SCOREWIRE_LOG_LEVEL="ERROR")
    env["SCOREWIRE_STATE_DIR"] = tempfile.mkdtemp(prefix="scorewire-bombs-")

    def cap() -> None:
        if as_limit_gb > 0:
            limit = int(as_limit_gb * (1 << 30))
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    scorewire = str(Path(sys.executable).parent / "scorewire")
    proc = subprocess.Popen(
        [scorewire, "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=cap,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"scorewire serve did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1].strip()


def status_mb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of one process, in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) // 1024
    return out


def neighbour(address: str, stop: Any, out: Any) -> None:
    """A small Score every 20 ms until `stop` is set; puts (latencies ms, errors)."""
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    with grpc.insecure_channel(address) as ch:
        stub = pb_grpc.ScoringServiceStub(ch)
        req = hn.neighbour_request()
        stub.Score(req, timeout=30)  # connected, plan compiled
        out.put("ready")
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                stub.Score(req, timeout=30)
                latencies.append((time.perf_counter() - t0) * 1000)
            except grpc.RpcError as err:
                errors[err.code().name] += 1
            time.sleep(max(0.0, 0.02 - (time.perf_counter() - t0)))
    out.put((latencies, dict(errors)))


async def timed(call: Any) -> tuple[str, float]:
    """(status code and the start of its message, seconds) of one call, stream drained."""
    t0 = time.perf_counter()
    try:
        got = call()
        if hasattr(got, "__aiter__"):
            async for _ in got:
                pass
        else:
            await got
        code = "OK"
    except grpc.aio.AioRpcError as err:
        code = f"{err.code().name} ({(err.details() or '')[:90]})"
    return code, time.perf_counter() - t0


async def attack(name: str, calls: list[Any], proc: subprocess.Popen[str], address: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    stop, out = ctx.Event(), ctx.Queue()
    nb = ctx.Process(target=neighbour, args=(address, stop, out))
    nb.start()
    assert out.get(timeout=60) == "ready"
    with hn.RssSampler(proc.pid) as sampler:
        answers = await asyncio.gather(*(timed(c) for c in calls))
        stop.set()
        latencies, errors = out.get(timeout=120)
    nb.join(30)
    await asyncio.sleep(1.5)
    codes = Counter(code for code, _ in answers)
    seconds = sorted(s for _, s in answers)
    print(f"{name}:")
    print(f"  answers: {dict(codes)}, in {seconds[0] * 1000:,.0f}–{seconds[-1] * 1000:,.0f} ms")
    if latencies:
        print(
            f"  neighbour: {len(latencies)} Scores, median {statistics.median(latencies):.1f} ms,"
            f" worst {max(latencies):,.0f} ms, errors {errors or 'none'}"
        )
    now = status_mb(proc.pid) if proc.poll() is None else {"exited": proc.returncode}
    print(f"  server after: {now}; tree peak {sampler.peak >> 20} MB")


async def run(args: argparse.Namespace) -> None:
    proc, address = start_server(args.as_limit_gb)
    try:
        async with grpc.aio.insecure_channel(address, options=hn.OPTIONS) as ch:
            stub = pb_grpc.ScoringServiceStub(ch)
            await stub.ValidateSuite(pb.ValidateSuiteRequest(compact=["json_valid"]), timeout=30)
            await asyncio.sleep(1.5)
            print(f"server at start: {status_mb(proc.pid)}")
            # Serialized once: the calls time the server, not this client's encoding.
            line = "contains:" + "x" * (args.line_mb * 1_000_000)
            big = pb.ValidateSuiteRequest(compact=[line]).SerializeToString()
            validate = ch.unary_unary("/scorewire.v1.ScoringService/ValidateSuite")
            await attack(
                f"{args.calls} x ValidateSuite, one {args.line_mb} MB compact line",
                [functools.partial(validate, big, timeout=args.deadline)] * args.calls,
                proc,
                address,
            )
            del big, line
            for name, doc in (("alias suite", ALIAS_SUITE), ("alias checkllm", ALIAS_CHECKLLM)):
                cases = [pb.Case(output=pb.Output(text="x"))] if "tests:" not in doc else []
                req = pb.RunSuiteRequest(suite_yaml=doc, cases=cases)
                await attack(
                    f"RunSuite, the {len(doc):,}-byte {name}",
                    [lambda r=req: stub.RunSuite(r, timeout=args.deadline)],
                    proc,
                    address,
                )
    finally:
        hn.stop_server(proc)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--line-mb", type=int, default=60)
    parser.add_argument("--deadline", type=float, default=120.0)
    parser.add_argument("--as-limit-gb", type=float, default=0.0)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
