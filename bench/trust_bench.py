"""Repeated sampling and judge–human agreement: what they cost.

    PYTHONPATH=service:. .venv/bin/python bench/trust_bench.py

1. Against the stand-in judge (its own process, fixed latency), through the engine and
   the real `openai` SDK: N outputs judged with `samples: 1` and then `samples: S`
   (elapsed time and judge calls), then the sampled run again (it must make zero calls:
   one cached verdict per sample), then with `samples: S+2` (it must make 2N calls).
2. Agreement figures in process: P pairs with R bootstrap resamples (pairing, kappa,
   interval, disagreements) and a calibration over every level.

Exits non-zero when a call-count expectation fails; times are printed, not enforced.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from datetime import UTC, datetime

import scorewire.checks  # noqa: F401  (registers the check types)
from scorewire.core.context import CheckContext
from scorewire.core.model import Score
from scorewire.engine.runner import Plan
from scorewire.engine.spec import CheckSpec, compile_check
from scorewire.judge import Budget, JudgeService
from scorewire.labels.figures import JudgedOutput, agreement, calibrate, pair_up
from scorewire.labels.jsonl import LabelIndex
from scorewire.labels.label_model import Label, output_hash
from scorewire.settings import Settings

from bench.judge_bench import score, server_calls, start_stand_in


def plan(samples: int) -> Plan:
    spec = CheckSpec("judge", {"rubric": "Is it polite?", "samples": samples})
    return Plan([compile_check(spec, "checks[0]")])


async def sampling(n: int, samples: int, concurrency: int, latency_ms: float) -> list[str]:
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
        ctx = CheckContext(judge=svc, budget=Budget(None))
        outputs = [f"Hello number {i}, nice to meet you." for i in range(n)]
        await score(plan(1), [f"warm-up {i}" for i in range(concurrency)], ctx, concurrency)
        # samples 1 runs at temperature 0, sampled runs at 0.7: no verdict is shared
        for label, k, want in (
            ("samples 1", 1, n),
            (f"samples {samples}", samples, samples * n),
            (f"samples {samples} again", samples, 0),
            (f"samples {samples + 2}", samples + 2, 2 * n),
        ):
            calls0 = server_calls(url)
            t0 = time.perf_counter()
            cost = await score(plan(k), outputs, ctx, concurrency)
            elapsed = time.perf_counter() - t0
            calls = server_calls(url) - calls0
            print(f"{label:>18}: {n} outputs, {elapsed:.3f} s, judge calls {calls}, ${cost:.6f}")
            if calls != want:
                failures.append(f"{label} made {calls} calls, expected {want}")
        await svc.aclose()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
    return failures


def figures(pairs: int, resamples: int) -> None:
    rng = random.Random(0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    judged, labels = [], []
    for i in range(pairs):
        level = rng.randint(1, 5)
        value = (level - 1) / 4
        text = f"output {i}"
        judged.append(JudgedOutput(f"s{i}", text, Score(value, level >= 4, f"level {level}")))
        human = level >= 4 if rng.random() < 0.8 else level < 4
        labels.append(Label(f"s{i}", output_hash(text), human, "ana", t0))
    t = time.perf_counter()
    index = LabelIndex.build(labels)
    paired = pair_up(judged, lambda s, h: index.lookup(s, h, "default"))
    t_pair = time.perf_counter() - t
    t = time.perf_counter()
    a = agreement(paired, resamples=resamples, seed=1)
    t_agree = time.perf_counter() - t
    t = time.perf_counter()
    c = calibrate(paired)
    t_cal = time.perf_counter() - t
    assert a.interval is not None
    print(
        f"agreement: {pairs} pairs, {resamples} resamples: pairing {t_pair * 1000:.1f} ms, "
        f"figures {t_agree * 1000:.1f} ms (kappa {a.kappa:.3f} "
        f"[{a.interval[0]:.3f}, {a.interval[1]:.3f}]), calibration over "
        f"{len(c.points)} thresholds {t_cal * 1000:.1f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    problems = asyncio.run(sampling(args.n, args.samples, args.concurrency, args.latency_ms))
    figures(args.pairs, args.resamples)
    for p in problems:
        print(f"FAILED: {p}")
    sys.exit(1 if problems else 0)
