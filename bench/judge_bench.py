"""Judge throughput, cache and single-flight benchmark against a stand-in judge.

    PYTHONPATH=service:. .venv/bin/python bench/judge_bench.py

Starts the OpenAI-compatible stand-in (tests/fakes/openai_server.py) as its own
process answering every request after a fixed latency, then, through the engine
runner and the real `openai` SDK:

1. scores N judge checks on distinct outputs at concurrency C and prints the elapsed
   time against the ideal N / C × latency (target: ratio ≤ 1.2);
2. scores the same N again: it must make zero judge calls and cost $0 (verdict cache);
3. scores 100 identical checks at once: they must make exactly one call (single flight).

Exits non-zero when a cache or single-flight expectation fails (the ratio is printed,
not enforced: it depends on the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import scorewire.checks  # noqa: F401  (registers the check types)
from scorewire.core.context import CheckContext
from scorewire.core.model import Output, Sample
from scorewire.engine.runner import Case, Plan, run_cases
from scorewire.engine.spec import CheckSpec, compile_check
from scorewire.judge import Budget, JudgeService
from scorewire.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def start_stand_in(latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--latency-ms", str(latency_ms)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if len(line) != 2 or line[0] != "PORT":
        proc.kill()
        raise SystemExit("the stand-in judge did not start")
    return proc, f"http://127.0.0.1:{line[1]}"


def server_calls(url: str) -> int:
    with urllib.request.urlopen(f"{url}/_stats", timeout=5) as resp:
        return int(json.load(resp)["calls"])


async def score(plan: Plan, outputs: list[str], ctx: CheckContext, concurrency: int) -> float:
    cases = [
        Case(Sample(id=str(i), input="Say hello."), Output(t), i) for i, t in enumerate(outputs)
    ]
    cost = 0.0
    async for result in run_cases(plan, cases, ctx, concurrency=concurrency):
        for s in result.scores:
            if s.error is not None:
                raise SystemExit(f"a check errored: {s.error}")
            cost += s.cost_usd
    return cost


async def main(n: int, concurrency: int, latency_ms: float) -> int:
    proc, url = start_stand_in(latency_ms)
    failures = []
    try:
        settings = Settings(
            openai_api_key="bench-key",
            openai_base_url=f"{url}/v1",
            judge_model="openai:gpt-4o-mini",
            judge_concurrency=concurrency,
        )
        svc = JudgeService.from_settings(settings)
        plan = Plan([compile_check(CheckSpec("judge", {"rubric": "Is it polite?"}), "checks[0]")])
        ctx = CheckContext(judge=svc, budget=Budget(None))
        outputs = [f"Hello number {i}, nice to meet you." for i in range(n)]

        # Warm up imports and the connection pool (one connection per concurrent call)
        # outside the timed run: a long-running server has them open already.
        await score(plan, [f"warm-up {i}" for i in range(concurrency)], ctx, concurrency)

        calls0 = server_calls(url)
        t0, cpu0 = time.perf_counter(), time.process_time()
        cost1 = await score(plan, outputs, ctx, concurrency)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        calls1 = server_calls(url) - calls0
        ideal = n / concurrency * latency_ms / 1000.0
        print(f"run 1: {n} judge checks at concurrency {concurrency}, {latency_ms:g} ms judge")
        print(f"  elapsed {elapsed:.3f} s, ideal {ideal:.3f} s, ratio {elapsed / ideal:.2f}")
        print(f"  judge calls {calls1}, cost ${cost1:.6f}, client CPU {cpu:.3f} s")
        if calls1 != n:
            failures.append(f"run 1 made {calls1} calls, expected {n}")

        calls0 = server_calls(url)
        t0 = time.perf_counter()
        cost2 = await score(plan, outputs, ctx, concurrency)
        elapsed2 = time.perf_counter() - t0
        calls2 = server_calls(url) - calls0
        print(f"run 2 (same outputs): elapsed {elapsed2:.3f} s, judge calls {calls2}")
        print(f"  cost ${cost2:.6f}")
        if calls2 != 0 or cost2 != 0.0:
            failures.append(f"run 2 made {calls2} calls costing ${cost2}, expected 0 and $0")

        calls0 = server_calls(url)
        await score(plan, ["The very same output."] * 100, ctx, 100)
        calls3 = server_calls(url) - calls0
        print(f"run 3: 100 identical checks in flight: judge calls {calls3}")
        if calls3 != 1:
            failures.append(f"100 identical checks made {calls3} calls, expected 1")
        print(f"judge stats: {svc.stats.snapshot()}")
        await svc.aclose()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.n, args.concurrency, args.latency_ms)))
