"""CPU of one unary Score in the server, step by step: where the handler's time goes.

    .venv/bin/python bench/score_cpu.py [--calls 10000]

A server is built in process with its defaults and metrics on (as `serve` builds it),
warmed up through a real channel with the e2e bench's Score (three deterministic checks)
until the plan is scored inline, and then the handler's steps are run on freshly parsed
requests, each prefix of the path timed in thread CPU time (the best of 7 repeats).
CPU time, not wall time: on a machine shared with other work a descheduled process
would count someone else's time. Prints the cumulative time after each step and what
the step added; grpc's own work per call (the same for the echo service) is not in it.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "service"), str(ROOT / "clients/python/src"), str(ROOT / "bench")]
# The scoring workers are processes of their own: they import this tree's code too.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT / "service"), str(ROOT / "clients/python/src"), os.environ.get("PYTHONPATH", "")]
)

from e2e_bench import SCORE_CHECKS, SCORE_OUTPUT, SCORE_SAMPLE  # noqa: E402
from scorewire.engine.runner import Case, score_case_sync  # noqa: E402
from scorewire.scoring import wire  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402

STEPS = (
    "parse the request",
    "plan key and source",
    "plan info (cached)",
    "output size, JSON fields, preflight",
    "check context",
    "inline plan, sample and output",
    "score the checks",
    "response message",
    "check metrics, deadline",
    "serialize the response",
)


class _Context:
    """The parts of a grpc.aio ServicerContext the Score handler reads."""

    def time_remaining(self) -> float | None:
        return None

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return (("user-agent", "grpc-python-asyncio"),)

    def code(self) -> None:
        return None


async def _upto(svc: Any, raw: bytes, steps: int, ctx: Any) -> None:
    request = pb.ScoreRequest.FromString(raw)
    if steps < 2:
        return
    key, source = svc._source(
        suite_yaml="", suite_name="", checks=request.checks, compact=request.compact
    )
    if steps < 3:
        return
    info = await svc._plan(key, source, ctx)
    if steps < 4:
        return
    svc.cases.output(request.output.text, "output", info.whole_text_caps)
    svc.cases.json_fields(request.sample, request.output, "")
    budget = request.budget_usd if request.HasField("budget_usd") else None
    svc.calls.preflight(info, budget)
    if steps < 5:
        return
    context = svc.calls.context(ctx, budget)
    if steps < 6:
        return
    inline = svc.executor._inline(key, info, request.ByteSize())
    case = Case(wire.sample_from_pb(request.sample), wire.output_from_pb(request.output))
    if steps < 7:
        return
    result = score_case_sync(inline.plan, case, context)
    if steps < 8:
        return
    message = svc.executor.score_response(inline, result)
    if steps < 9:
        return
    svc._observer.observe_results(info, (result,))
    context.remaining()
    if steps < 10:
        return
    message.SerializeToString()


async def main(calls: int) -> None:
    import grpc
    from scorewire.client import _convert
    from scorewire.metrics import ServerMetrics
    from scorewire.server.app import create_server
    from scorewire.settings import Settings
    from scorewire.v1 import scoring_pb2_grpc as pb_grpc

    metrics = ServerMetrics(process_metrics=False)
    settings = Settings(host="127.0.0.1", port=0, state_dir=tempfile.mkdtemp())
    running, port = await create_server(
        settings, observer=metrics.observer, interceptors=metrics.interceptors
    )
    svc = running.service
    req = _convert.score_request(
        output=SCORE_OUTPUT, sample=SCORE_SAMPLE, checks=SCORE_CHECKS, compact=None, budget_usd=None
    )
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ScoringServiceStub(channel)
            for _ in range(200):
                await stub.Score(req, timeout=60)
                if len(svc.executor.here) >= 1:
                    break
                await asyncio.sleep(0.01)
        if len(svc.executor.here) < 1:
            raise SystemExit("the plan never became inline: nothing to measure here")
        gc.collect()
        gc.freeze()  # as `serve` does after start-up
        raw, ctx, before = req.SerializeToString(), _Context(), 0.0
        for steps, name in enumerate(STEPS, start=1):
            best = float("inf")
            for _ in range(7):
                t0 = time.thread_time()
                for _ in range(calls):
                    await _upto(svc, raw, steps, ctx)
                best = min(best, (time.thread_time() - t0) / calls * 1e6)
            print(f"{best:7.2f} µs  (+{best - before:5.2f})  {name}", flush=True)
            before = best
    finally:
        await running.stop(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    asyncio.run(main(parser.parse_args().calls))
