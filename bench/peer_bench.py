"""The peer libraries in process, on the peers' dataset shape (`peer_dataset`).

Runs in the peer's own environment (it needs Python >= 3.12 by its metadata but imports
on 3.11 when installed with `--ignore-requires-python`):

    python3 -m venv .tmp/peers
    .tmp/peers/bin/pip install checkllm==5.1.0
    .tmp/peers/bin/pip install --ignore-requires-python evalstone==0.2.4
    .tmp/peers/bin/python bench/peer_bench.py --rounds 3

Prints one JSON line per round: {"peer": ..., "seconds": ..., "cpu_seconds": ...,
"checks": ...} (`cpu_seconds`: this process's CPU time in the same region, steadier than
the wall time on a shared machine). The timed region is the library's `Suite.run` over a
dataset built beforehand: the peer's best case (building its pydantic samples from the
dicts is left out of its time). `--shape` picks the dataset's mix (`peer_dataset.SHAPES`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_dataset import MAX_CHARS, MAX_WORDS, ORDER_SCHEMA, REGEX, SHAPES, make_records


def evalstone_round(records: list[dict]) -> tuple[float, float, int]:
    from evalstone import Dataset, RecordedTarget, Sample, Suite
    from evalstone.checks import deterministic as d

    dataset = Dataset(
        "peers",
        [Sample(id=r["id"], input=r["input"], expected=r["expected"]) for r in records],
    )
    target = RecordedTarget({r["id"]: r["output"] for r in records})
    checks = [
        d.contains(path="must_include", require_all=True, case_sensitive=False),
        d.regex(REGEX),
        d.exact(path="answer"),
        d.json_schema(ORDER_SCHEMA),
        d.length(max_chars=MAX_CHARS, max_words=MAX_WORDS),
    ]
    suite = Suite("peers", dataset=dataset, checks=checks)
    t0, c0 = time.perf_counter(), time.process_time()
    run = suite.run(target)
    return time.perf_counter() - t0, time.process_time() - c0, len(run.results)


def checkllm_round(records: list[dict]) -> tuple[float, float, int]:
    """checkllm's deterministic checks called directly: its fastest in-process path.

    Its `contains` takes one substring (the first of `must_include`), its `json_schema` a
    pydantic model of the same order shape, its length check is `word_count`; each call
    returns one `CheckResult`."""
    from typing import Literal

    from checkllm.deterministic import DeterministicChecks
    from pydantic import BaseModel, Field

    class Item(BaseModel):
        sku: str
        qty: int

    class Order(BaseModel):
        order_id: int = Field(ge=1)
        status: Literal["pending", "shipped", "delivered", "cancelled"]
        items: list[Item]
        total: float | None = Field(None, ge=0)

    checks = DeterministicChecks()
    t0, c0 = time.perf_counter(), time.process_time()
    results = []
    for r in records:
        out, exp = r["output"], r["expected"]
        answer = exp["answer"]
        results.append(checks.contains(out, exp["must_include"][0]))
        results.append(checks.regex(out, REGEX))
        results.append(
            checks.exact_match(out, answer if isinstance(answer, str) else json.dumps(answer))
        )
        results.append(checks.json_schema(out, Order))
        results.append(checks.word_count(out, max_words=MAX_WORDS))
    return time.perf_counter() - t0, time.process_time() - c0, len(results)


PEERS = {"checkllm 5.1.0": checkllm_round, "evalstone 0.2.4": evalstone_round}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--peer", choices=[*PEERS, "all"], default="all")
    parser.add_argument("--shape", choices=list(SHAPES), default="ours")
    args = parser.parse_args()
    records = make_records(args.samples, shape=SHAPES[args.shape])
    names = list(PEERS) if args.peer == "all" else [args.peer]
    for _ in range(args.rounds):
        for name in names:
            seconds, cpu, checks = PEERS[name](records)
            row = {"peer": name, "seconds": seconds, "cpu_seconds": cpu, "checks": checks}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
