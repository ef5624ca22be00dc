"""What one Agreement or Calibrate may read, through a real server: labels in bulk (not one
read per case), a recorded run a page at a time, and the limits named by their settings.

The label and run stores are the real ones (SQLite, and PostgreSQL for labels) inside a
wrapper that only counts the calls made to them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from scorewire.judge import JudgeService
from scorewire.labels.label_model import OUTPUTS_PER_CALL, output_hash
from scorewire.runs import CHUNKS_PER_READ
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.server.app import create_server
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import labels_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.openai_server import FakeOpenAI
from tests.labels.test_agreement_rpc import (
    TEXTS,
    judge_spec,
    store,  # noqa: F401 - SQLite and PostgreSQL
)
from tests.labels.test_agreement_run import _settings, fake  # noqa: F401 - the stand-in judge
from tests.support.rpc import bad_request

CASES = 1200
"""More cases than one label read asks for, and more than a page of run chunks holds."""


class Counting:
    """A real store that counts the calls made to each of its methods."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()
        self.chunk_limits: list[int] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            if name == "chunks":
                self.chunk_limits.append(kwargs["limit"])
            return attr(*args, **kwargs)

        return counted


@dataclass
class Served:
    labels: labels_pb2_grpc.LabelServiceStub
    scoring: scoring_pb2_grpc.ScoringServiceStub
    label_store: Counting
    run_store: Counting


@pytest.fixture
async def served(
    fake: FakeOpenAI,  # noqa: F811
    store: Any,  # noqa: F811
    tmp_path: Any,
    request: Any,
) -> AsyncIterator[Served]:
    limits = getattr(request, "param", {})
    settings = _settings(fake, **limits)
    judge = JudgeService.from_settings(settings)
    labels, runs = Counting(store), Counting(await SqliteRunStore.open(str(tmp_path / "r.db")))
    running, port = await create_server(settings, judge=judge, labels=labels, runs=runs)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield Served(
            labels_pb2_grpc.LabelServiceStub(channel),
            scoring_pb2_grpc.ScoringServiceStub(channel),
            labels,
            runs,
        )
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


def _cases(n: int) -> list[pb.Case]:
    # a sample each, four outputs between them: four judge calls, the rest cached
    return [
        pb.Case(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text=TEXTS[i % 4])) for i in range(n)
    ]


async def _record(srv: Served, n: int) -> str:
    req = pb.RunSuiteRequest(cases=_cases(n), checks=[judge_spec()], record=True)
    run_id = ""
    async for ev in srv.scoring.RunSuite(req):
        if ev.WhichOneof("event") == "summary":
            run_id = ev.summary.run_id
    assert run_id
    return run_id


async def _label_all(srv: Served, n: int) -> None:
    for start in range(0, n, 1000):
        await srv.labels.PutLabels(
            lpb.PutLabelsRequest(
                labels=[
                    lpb.Label(
                        sample_id=f"s{i}",
                        output_hash=output_hash(TEXTS[i % 4]),
                        passed=i % 3 != 0,
                        labeller="ana",
                    )
                    for i in range(start, min(n, start + 1000))
                ]
            )
        )


async def test_a_recorded_run_reads_its_labels_in_bulk_and_its_chunks_in_pages(
    served: Served,
) -> None:
    # Before: one label listing per case (1,200 list_labels calls per request).
    await _label_all(served, CASES)
    run_id = await _record(served, CASES)
    served.label_store.calls.clear()
    agree = await served.labels.Agreement(lpb.AgreementRequest(run_id=run_id))
    assert agree.checks[0].pairs == CASES
    reads = math.ceil(CASES / OUTPUTS_PER_CALL)
    assert served.label_store.calls == {"labels_of_outputs": reads}
    served.label_store.calls.clear()
    cal = await served.labels.Calibrate(
        lpb.CalibrateRequest(agreement=lpb.AgreementRequest(run_id=run_id))
    )
    assert cal.checks[0].pairs == CASES
    assert served.label_store.calls == {"labels_of_outputs": reads}
    # the run's 5 chunks (256 cases each) came a bounded page at a time
    assert served.run_store.chunk_limits and set(served.run_store.chunk_limits) == {CHUNKS_PER_READ}


async def test_cases_scored_now_read_their_labels_in_bulk(served: Served) -> None:
    await _label_all(served, CASES)
    served.label_store.calls.clear()
    resp = await served.labels.Agreement(
        lpb.AgreementRequest(cases=_cases(CASES), checks=[judge_spec()])
    )
    assert resp.checks[0].pairs == CASES
    assert served.label_store.calls == {"labels_of_outputs": math.ceil(CASES / OUTPUTS_PER_CALL)}


LIMITS = {"max_agreement_cases": 3, "max_calibration_thresholds": 2}


@pytest.mark.parametrize("served", [LIMITS], indirect=True)
async def test_a_run_over_max_agreement_cases_is_refused_before_it_is_read(
    served: Served,
) -> None:
    run_id = await _record(served, 4)
    before = served.run_store.calls["chunks"]
    for call in (
        served.labels.Agreement(lpb.AgreementRequest(run_id=run_id)),
        served.labels.Calibrate(
            lpb.CalibrateRequest(agreement=lpb.AgreementRequest(run_id=run_id))
        ),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "max_agreement_cases" in (err.value.details() or "")
        assert any(f.endswith("run_id") for f in bad_request(err.value))
    assert served.run_store.calls["chunks"] == before  # not a chunk read
    assert served.label_store.calls["labels_of_outputs"] == 0


@pytest.mark.parametrize("served", [LIMITS], indirect=True)
async def test_cases_over_max_agreement_cases_are_refused_before_scoring(
    served: Served,
    fake: FakeOpenAI,  # noqa: F811
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await served.labels.Calibrate(
            lpb.CalibrateRequest(
                agreement=lpb.AgreementRequest(cases=_cases(4), checks=[judge_spec()])
            )
        )
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_agreement_cases" in bad_request(err.value)["agreement.cases"]
    assert fake.calls == 0


@pytest.mark.parametrize("served", [LIMITS], indirect=True)
async def test_thresholds_over_max_calibration_thresholds_are_refused(served: Served) -> None:
    run_id = await _record(served, 3)
    await _label_all(served, 3)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await served.labels.Calibrate(
            lpb.CalibrateRequest(
                agreement=lpb.AgreementRequest(run_id=run_id), thresholds=[0.1, 0.5, 0.9]
            )
        )
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_calibration_thresholds" in bad_request(err.value)["thresholds"]
    # none sent: the judge's distinct values (levels 5 and 2, and 5 again) are two: allowed
    ok = await served.labels.Calibrate(
        lpb.CalibrateRequest(agreement=lpb.AgreementRequest(run_id=run_id))
    )
    assert [p.threshold for p in ok.checks[0].points] == [0.25, 1.0]


@pytest.mark.parametrize("served", [{"max_calibration_thresholds": 1}], indirect=True)
async def test_more_distinct_judge_values_than_max_calibration_thresholds_are_refused(
    served: Served,
) -> None:
    run_id = await _record(served, 3)  # levels 5, 5, 2: two distinct values
    await _label_all(served, 3)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await served.labels.Calibrate(
            lpb.CalibrateRequest(agreement=lpb.AgreementRequest(run_id=run_id))
        )
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_calibration_thresholds" in bad_request(err.value)["thresholds"]
    one = await served.labels.Calibrate(
        lpb.CalibrateRequest(agreement=lpb.AgreementRequest(run_id=run_id), thresholds=[0.5])
    )
    assert one.checks[0].pairs == 3
