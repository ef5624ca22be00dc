"""What each judge configuration is worth: agreement with people against judge dollars.

    make bench-judge-value
    PYTHONPATH=. .venv/bin/python bench/judge_value.py [--cases 400] [--seed 7]

Loopback only, no real model: an OpenAI-protocol stand-in (tests/fakes/openai_server.py,
in this process) answers as three judges of known quality, each right about a case with
probability p, deterministically by (seed, model, case):

    cheap   p = 0.80   $0.15 / $0.60 per 1M input / output tokens
    mid     p = 0.85   $0.50 / $2.00
    strong  p = 0.95   $2.50 / $10.00

A judge that is right grades a human pass 5 and a human fail 1 of 5; one that is wrong
the opposite. Its level is the boundary one instead (4 for a pass, 3 for a fail: where a
cascade asks on) for 60 % of its wrong verdicts and 10 % of its right ones: a judge is
unsure more often when it is wrong, which is what makes a cascade worth trying.

N cases (a human pass with probability 0.6, by the seed) are labelled through PutLabels;
then, for each configuration, a fresh scorewire server (its own verdict cache, so every
configuration pays for its own calls) answers LabelService.Agreement over the N cases:
each single judge, a 3-judge majority panel (cheap, mid, strong) and a cascade
(cheap → strong, pass level 4: a boundary level sends the case on). The table: kappa
with its 95 % bootstrap interval, accuracy, F1, the base rate, the judge dollars and
kappa per dollar. Bounded: at most 2,000 cases, every call on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
from scorewire.judge import JudgeService  # noqa: E402
from scorewire.labels.label_model import output_hash  # noqa: E402
from scorewire.labels.sqlite import SqliteLabelStore  # noqa: E402
from scorewire.server.app import create_server  # noqa: E402
from scorewire.settings import Settings  # noqa: E402
from scorewire.v1 import labels_pb2 as lpb  # noqa: E402
from scorewire.v1 import labels_pb2_grpc  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402

from tests.fakes.base import Reply  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

KEY = "sk-bench-judge-value"
MAX_CASES = 2000
BASE_RATE = 0.6
UNSURE_WHEN_WRONG = 0.6
UNSURE_WHEN_RIGHT = 0.1
JUDGES: dict[str, tuple[float, tuple[float, float]]] = {
    "cheap": (0.80, (0.15, 0.60)),
    "mid": (0.85, (0.50, 2.00)),
    "strong": (0.95, (2.50, 10.00)),
}
"""model -> (probability of a right verdict, [input, output] USD per 1M tokens)."""
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("cheap", {"model": "openai:cheap"}),
    ("mid", {"model": "openai:mid"}),
    ("strong", {"model": "openai:strong"}),
    ("majority panel", {"judges": ["openai:cheap", "openai:mid", "openai:strong"]}),
    ("cascade", {"cascade": ["openai:cheap", "openai:strong"]}),
]
_CASE = re.compile(r"<output>\nanswer (\d+)\b")


def _draw(seed: int, *parts: object) -> float:
    """A uniform draw in [0, 1) fixed by the seed and the parts (no shared RNG state, so
    concurrent calls answer the same whatever their order)."""
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def human_passes(n: int, seed: int) -> list[bool]:
    """The people's verdict of each case."""
    rng = random.Random(seed)
    return [rng.random() < BASE_RATE for _ in range(n)]


def responder(seed: int, human: list[bool]) -> Any:
    """The stand-in's answer to one request: the level the asked model gives the case."""

    def answer(body: Any) -> Reply:
        model = body["model"]
        found = _CASE.search(body["messages"][-1]["content"])
        if found is None or model not in JUDGES:
            return Reply(status=400, error_message=f"no case or unknown model {model!r}")
        case = int(found.group(1))
        right = _draw(seed, model, case, "right") < JUDGES[model][0]
        says_pass = human[case] if right else not human[case]
        unsure = _draw(seed, model, case, "unsure") < (
            UNSURE_WHEN_RIGHT if right else UNSURE_WHEN_WRONG
        )
        level = (4 if says_pass else 3) if unsure else (5 if says_pass else 1)
        return Reply(content=json.dumps({"reasoning": "graded", "score": level}))

    return answer


def cases(n: int) -> list[pb.Case]:
    """The labelled outputs, one per case."""
    return [
        pb.Case(sample=pb.Sample(id=f"c{i}"), output=pb.Output(text=f"answer {i}"))
        for i in range(n)
    ]


def check(params: dict[str, Any]) -> pb.CheckSpec:
    """The judge check of one configuration (pass level 4 of 5)."""
    spec = pb.CheckSpec(name="correct", type="judge")
    spec.params.update({"rubric": "Is the answer correct?", "pass_level": 4, **params})
    return spec


async def measure(
    fake: FakeOpenAI, labels_db: str, params: dict[str, Any], n: int, seed: int
) -> lpb.CheckAgreement:
    """One configuration's agreement over the n labelled cases, on a fresh server."""
    settings = Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model="openai:cheap",
        judge_prices={m: price for m, (_, price) in JUDGES.items()},
    )
    judge = JudgeService.from_settings(settings)
    store = await SqliteLabelStore.open(labels_db)
    running, port = await create_server(settings, judge=judge, labels=store)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        stub = labels_pb2_grpc.LabelServiceStub(channel)
        request = lpb.AgreementRequest(
            cases=cases(n), checks=[check(params)], options=lpb.AgreementOptions(seed=seed)
        )
        resp = await stub.Agreement(request, timeout=600)
        return resp.checks[0]
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()
        await store.close()


async def put_labels(labels_db: str, human: list[bool]) -> None:
    """The people's labels, straight into the label store the servers read."""
    from datetime import UTC, datetime

    from scorewire.labels.label_model import Label

    store = await SqliteLabelStore.open(labels_db)
    try:
        now = datetime.now(UTC)
        await store.put(
            [
                Label(f"c{i}", output_hash(f"answer {i}"), passed, "bench", now)
                for i, passed in enumerate(human)
            ]
        )
    finally:
        await store.close()


def row(label: str, c: lpb.CheckAgreement) -> str:
    """One line of the table."""
    kappa = f"{c.kappa:.3f} [{c.kappa_low:.3f}, {c.kappa_high:.3f}]" if c.HasField("kappa") else "—"
    f1 = f"{c.f1:.3f}" if c.HasField("f1") else "—"
    per_dollar = f"{c.kappa / c.cost_usd:,.0f}" if c.HasField("kappa") and c.cost_usd else "—"
    return (
        f"| {label} | {c.judge_model} | {kappa} | {c.accuracy:.3f} | {f1} | "
        f"{c.base_rate:.3f} | {c.cost_usd:.4f} | {per_dollar} |"
    )


async def main(n: int, seed: int) -> None:
    human = human_passes(n, seed)
    fake = FakeOpenAI(api_key=KEY)
    fake.responder = responder(seed, human)
    lines = [
        "| configuration | judge_model | κ [95% CI] | accuracy | F1 | base rate | cost $ "
        "| κ per $ |",
        "|---|---|---|---|---|---|---|---|",
    ]
    with fake.running(), tempfile.TemporaryDirectory() as tmp:
        labels_db = str(Path(tmp) / "labels.db")
        await put_labels(labels_db, human)
        for label, params in CONFIGS:
            started, calls = time.perf_counter(), fake.calls
            c = await measure(fake, labels_db, params, n, seed)
            lines.append(row(label, c))
            print(
                f"{label}: {fake.calls - calls} judge calls, {time.perf_counter() - started:.1f} s",
                file=sys.stderr,
            )
    print(f"{n} labelled cases, seed {seed}, {sum(human)} human passes")
    print("\n".join(lines))


def _cases(text: str) -> int:
    value = int(text)
    if not 1 <= value <= MAX_CASES:
        raise argparse.ArgumentTypeError(f"must be 1 to {MAX_CASES}")
    return value


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=_cases, default=400, help="labelled cases (≤ 2000)")
    parser.add_argument("--seed", type=int, default=7, help="seed of labels and verdicts")
    args = parser.parse_args()
    asyncio.run(main(args.cases, args.seed))
