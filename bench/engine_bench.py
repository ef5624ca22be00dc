"""In-process engine benchmark: 20,000 recorded outputs x 5 deterministic checks.

Run: `make bench-engine` (or `.venv/bin/python bench/engine_bench.py [--samples N]`).
Prints samples/s and checks/s for the best of a few rounds. Target: >= 150,000 checks/s
on a 2-core machine (the fastest comparable library reaches about 100,000).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / p) for p in ("service",)]

import scorewire.checks  # noqa: E402,F401 - registers the built-in checks
from peer_dataset import WORDS as _PEER_WORDS  # noqa: E402 - bench/ is the script's directory
from scorewire.core.context import EMPTY_CONTEXT  # noqa: E402
from scorewire.core.model import Output, Sample  # noqa: E402
from scorewire.engine.runner import Case, Plan, run_cases  # noqa: E402
from scorewire.engine.spec import CheckSpec, compile_checks  # noqa: E402
from scorewire.engine.summary import SummaryBuilder  # noqa: E402

WORDS = _PEER_WORDS[:27]
"""The prose vocabulary: the first 27 words of the peers' dataset (this bench's own as before)."""


def make_cases(n: int, seed: int = 7) -> list[Case]:
    """Recorded outputs of three kinds: prose, JSON objects, and short answers."""
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120)))
            expected = "refund"
        elif kind == 1:
            obj = {"score": rng.randint(0, 10), "label": rng.choice(["ok", "bad"]), "id": i}
            text = json.dumps(obj)
            expected = text
        else:
            text = rng.choice(["OK: 200", "OK: 17", "Paris", "ERROR", "OK: 5"])
            expected = "Paris"
        cases.append(Case(Sample(f"s{i}", {"q": i}, expected), Output(text), i))
    return cases


CHECKS = [
    CheckSpec(type="contains", params={"needles": ["refund", "OK"], "require_all": False}),
    CheckSpec(type="regex", params={"pattern": r"^OK: [0-9]{1,3}$|score", "flags": 0}),
    CheckSpec(type="exact"),
    CheckSpec(
        type="json_schema",
        params={
            "schema": {
                "type": "object",
                "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}},
                "required": ["score"],
            }
        },
    ),
    CheckSpec(type="length", params={"max_chars": 600, "max_words": 100}),
]


async def run_once(plan: Plan, cases: list[Case]) -> tuple[float, int]:
    builder = SummaryBuilder(plan.names, [c.type for c in plan.checks])
    start = time.perf_counter()
    async for result in run_cases(plan, cases, EMPTY_CONTEXT):
        builder.add(result)
    elapsed = time.perf_counter() - start
    summary = builder.finish()
    return elapsed, summary.passed + summary.failed + summary.errored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    cases = make_cases(args.samples)
    plan = Plan(compile_checks(CHECKS))
    best = float("inf")
    scores = 0
    for _ in range(args.rounds):
        elapsed, scores = asyncio.run(run_once(plan, cases))
        best = min(best, elapsed)
    print(f"engine: {args.samples} samples x {len(CHECKS)} checks = {scores} scores")
    print(f"  best of {args.rounds}: {best * 1000:.1f} ms")
    print(f"  samples/s: {args.samples / best:,.0f}")
    print(f"  checks/s:  {scores / best:,.0f}  (target >= 150,000)")


if __name__ == "__main__":
    main()
