"""The server scores with the native kernel by default, and answers as without it.

Two real servers, `native_kernel` on and off, called through the generated stubs with
the same requests: every Score response (inline ones included, once the plan is
measured cheap) and every RunSuite result and summary must be equal, latencies aside.
The metrics a natively scored Score counts are the ones Python's path counts.
"""

from __future__ import annotations

import json
from typing import Any

import grpc
from prometheus_client import CollectorRegistry
from scorewire.engine import native
from scorewire.metrics.runs import RunMetrics
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.server.conftest import serving
from tests.server.test_isolation import poll
from tests.support.components import require_component

CHECKS = [
    {"type": "contains", "params": {"path": "must_include", "case_sensitive": False}},
    {"type": "regex", "params": {"pattern": "(refund|order_id|Paris)", "must_match": False}},
    {"type": "exact", "params": {"path": "answer"}},
    {"type": "json_schema", "params": {"schema": {"type": "object", "required": ["order_id"]}}},
    {"type": "length", "params": {"max_chars": 60, "max_words": 8}},
    {"type": "json_valid", "params": {}},
]
OUTPUTS = [
    ("Your refund ships in two days.", {"answer": "x", "must_include": ["refund", "DAYS"]}),
    ('{"order_id": 7}', {"answer": {"order_id": 7}, "must_include": ["order_id"]}),
    ('{"order": 7', {"answer": {"order_id": 7}, "must_include": ["7"]}),
    ("Paris", {"answer": "Paris", "must_include": ["paris"]}),
    ("Straße İ", {"answer": "strasse", "must_include": ["STRASSE"]}),
    ("no reference here", None),
]


def _checks() -> list[pb.CheckSpec]:
    out = []
    for c in CHECKS:
        spec = pb.CheckSpec(type=c["type"])
        spec.params.update(c["params"])
        out.append(spec)
    return out


def _sample(i: int, expected: Any) -> pb.Sample:
    sample = pb.Sample(id=f"s{i}")
    if expected is not None:
        sample.expected_json = json.dumps(expected)
    return sample


def _without_latency(message: Any) -> Any:
    for score in message.scores:
        score.latency_ms = 0.0
    return message


async def test_scores_and_runs_are_the_same_with_and_without_the_kernel() -> None:
    if not native.available():
        require_component("the native kernel", "make install builds service/native")
    answers: dict[bool, list[Any]] = {}
    for on in (True, False):
        got: list[Any] = []
        async with serving(native_kernel=on, scoring_workers=1) as srv:
            # Repeated Scores: the first ones go to a worker, which measures them; once the
            # server has compiled the plan itself, the rest run inline.
            pool = srv.running.service.executor.pool
            for rnd in range(3):
                before = pool.submitted
                for i, (text, expected) in enumerate(OUTPUTS):
                    req = pb.ScoreRequest(
                        sample=_sample(i, expected), output=pb.Output(text=text), checks=_checks()
                    )
                    if i % 2:  # budget_usd and a compact line: the fields the kernel skips
                        req.budget_usd = 1.0
                        req.compact.append("length:1..1000")
                    got.append(_without_latency(await srv.stub.Score(req, timeout=60)))
                if rnd == 0:
                    await poll(lambda: len(srv.running.service.executor.here) >= 1, "compiled")
                else:
                    assert pool.submitted == before  # scored inline
            # Natively, when the kernel is on: the plan scored inline carries its kernel.
            inline = [p for p, _ in srv.running.service.executor.here._items.values()]
            assert inline and all(bool(p.plan.native) == on for p in inline)
            cases = [
                pb.Case(sample=_sample(i, exp), output=pb.Output(text=text))
                for i, (text, exp) in enumerate(OUTPUTS * 100)
            ]
            run = pb.RunSuiteRequest(checks=_checks(), cases=cases)
            async for msg in srv.stub.RunSuite(run, timeout=120):
                for r in msg.results.results:
                    _without_latency(r)
                got.append(msg)
        answers[on] = got
    assert answers[True] == answers[False]
    assert any(not m.passed for m in answers[True][: len(OUTPUTS)])


async def test_an_inline_native_score_counts_its_metrics() -> None:
    # The kernel's tally reaches the check metrics as Python's results do.
    if not native.available():
        require_component("the native kernel", "make install builds service/native")
    for on in (True, False):
        metrics = RunMetrics(CollectorRegistry())
        settings = Settings(
            host="127.0.0.1", port=0, metrics_enabled=False, native_kernel=on, scoring_workers=1
        )
        running, port = await create_server(settings, observer=metrics)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = scoring_pb2_grpc.ScoringServiceStub(ch)
            req = pb.ScoreRequest(
                sample=_sample(0, OUTPUTS[0][1]),
                output=pb.Output(text=OUTPUTS[0][0]),
                checks=_checks(),
            )
            await stub.Score(req, timeout=60)  # measured by a worker
            service = running.service
            await poll(lambda s=service: len(s.executor.here) >= 1, "compiled here")
            before = service.executor.pool.submitted
            for _ in range(11):
                await stub.Score(req, timeout=60)
            assert service.executor.pool.submitted == before  # scored inline
        await running.stop(0)
        totals = {t: (v.passed, v.failed, v.errored) for t, v in metrics._totals.items()}
        assert sum(sum(v) for v in totals.values()) == 12 * len(CHECKS)
        if on:
            with_kernel = totals
        else:
            assert totals == with_kernel
