"""The Agreement RPC's numeric figures through a real server: Pearson's r, Spearman's rho and
the MAE of the judge's values against people's verdicts, and kappa's Landis–Koch band.

The stand-in judge (the real SDK) gives each output a level named in its text; people's
labels go through the real label store (SQLite). Each figure is checked against an
independent computation: `statistics.correlation` for Pearson, the same over ranks this
file computes for Spearman, and hand-worked values. A figure that is undefined (fewer than
two pairs, a side that never varies) is unset on the wire, never NaN.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import grpc
import pytest
from scorewire.judge import JudgeService
from scorewire.labels.label_model import output_hash
from scorewire.labels.sqlite import SqliteLabelStore
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import labels_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI

KEY = "sk-test-agreement-figures"
JUDGE = pb.CheckSpec(name="helpful", type="judge", params={"rubric": "Is it helpful?"})


def _judge(body: Any) -> Reply:
    # the level is in the output: "answer 4 ..." is judged level 4 of 5
    user = body["messages"][-1]["content"]
    found = re.search(r"<output>\nanswer (\d)", user)
    assert found is not None
    return Reply(content=json.dumps({"reasoning": "judged", "score": int(found[1])}))


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    f = FakeOpenAI(api_key=KEY)
    f.responder = _judge
    with f.running():
        yield f


@pytest.fixture
async def labels(
    fake: FakeOpenAI, tmp_path: Any
) -> AsyncIterator[labels_pb2_grpc.LabelServiceStub]:
    settings = Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model="openai:gpt-4o-mini",
    )
    judge = JudgeService.from_settings(settings)
    store = await SqliteLabelStore.open(str(tmp_path / "labels.db"))
    running, port = await create_server(settings, judge=judge, labels=store)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield labels_pb2_grpc.LabelServiceStub(channel)
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()
        await store.close()


async def agreement(
    stub: labels_pb2_grpc.LabelServiceStub,
    levels: Sequence[int],
    human: Sequence[bool | None],
) -> lpb.CheckAgreement:
    """Score outputs judged at `levels` and label them `human` (None: no label)."""
    texts = [f"answer {level} number {i}" for i, level in enumerate(levels)]
    await stub.PutLabels(
        lpb.PutLabelsRequest(
            labels=[
                lpb.Label(
                    sample_id=f"s{i}", output_hash=output_hash(t), passed=passed, labeller="ana"
                )
                for i, (t, passed) in enumerate(zip(texts, human, strict=True))
                if passed is not None
            ]
        )
    )
    cases = [
        pb.Case(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text=t)) for i, t in enumerate(texts)
    ]
    resp = await stub.Agreement(lpb.AgreementRequest(cases=cases, checks=[JUDGE]))
    [check] = resp.checks
    return check


def ranks(xs: Sequence[float]) -> list[float]:
    """Average ranks, 1-based: ties share the mean of the places they take."""
    ordered = sorted(xs)
    return [ordered.index(x) + (ordered.count(x) + 1) / 2 for x in xs]


# --- defined figures ----------------------------------------------------------------------


async def test_the_figures_match_an_independent_computation(
    labels: labels_pb2_grpc.LabelServiceStub,
) -> None:
    levels = [5, 4, 4, 2, 1, 3]
    human = [True, True, False, False, False, True]
    check = await agreement(labels, levels, human)
    values = [(level - 1) / 4 for level in levels]  # a level's value on the 0..1 scale
    people = [1.0 if h else 0.0 for h in human]
    assert check.HasField("pearson") and check.HasField("spearman")
    assert check.pearson == pytest.approx(statistics.correlation(values, people))
    assert check.pearson == pytest.approx(0.625 / math.sqrt(0.677083333 * 1.5))  # by hand
    assert check.spearman == pytest.approx(statistics.correlation(ranks(values), ranks(people)))
    assert check.mae == pytest.approx(1.75 / 6)  # 0 + .25 + .75 + .25 + 0 + .5
    # judge passes levels 4 and 5: p_o 4/6, p_e 1/2, kappa 1/3
    assert check.kappa == pytest.approx(1 / 3)
    assert check.kappa_band == lpb.KAPPA_BAND_FAIR


@pytest.mark.parametrize(
    ("levels", "human", "band"),
    [
        # every verdict agrees: kappa 1
        ([5, 1, 5, 1], [True, False, True, False], lpb.KAPPA_BAND_ALMOST_PERFECT),
        # every verdict disagrees: kappa -1
        ([5, 1, 5, 1], [False, True, False, True], lpb.KAPPA_BAND_POOR),
        # p_o 0.5, p_e 0.5: kappa 0 is poor (a bound belongs to the lower band)
        ([5, 5, 1, 1], [True, False, False, True], lpb.KAPPA_BAND_POOR),
    ],
)
async def test_the_band_reads_kappa_as_landis_and_koch_do(
    labels: labels_pb2_grpc.LabelServiceStub,
    levels: list[int],
    human: list[bool],
    band: int,
) -> None:
    check = await agreement(labels, levels, human)
    assert check.kappa_band == band


async def test_spearman_ranks_tied_verdicts_at_their_average_rank(
    labels: labels_pb2_grpc.LabelServiceStub,
) -> None:
    # Every pass above every fail: value ranks 1..4 against verdict ranks 1.5, 1.5, 3.5,
    # 3.5 (ties share their mean place): rho = 4 / sqrt(5 · 4) = 2/√5, not 1.
    check = await agreement(labels, [1, 2, 4, 5], [False, False, True, True])
    assert check.spearman == pytest.approx(2 / math.sqrt(5))
    assert check.pearson == pytest.approx(statistics.correlation([0, 0.25, 0.75, 1], [0, 0, 1, 1]))
    assert check.mae == pytest.approx((0 + 0.25 + 0.25 + 0) / 4)


# --- undefined figures: unset, never NaN ---------------------------------------------------


async def test_one_pair_has_no_correlation_and_no_kappa(
    labels: labels_pb2_grpc.LabelServiceStub,
) -> None:
    check = await agreement(labels, [4, 2], [True, None])  # one labelled output
    assert check.pairs == 1
    assert not check.HasField("pearson") and not check.HasField("spearman")
    assert not check.HasField("kappa") and check.kappa_band == lpb.KAPPA_BAND_UNSPECIFIED
    assert check.mae == pytest.approx(0.25)  # |0.75 − 1|


async def test_people_who_never_vary_leave_the_correlations_undefined(
    labels: labels_pb2_grpc.LabelServiceStub,
) -> None:
    check = await agreement(labels, [5, 3, 1], [True, True, True])
    assert not check.HasField("pearson") and not check.HasField("spearman")
    assert check.mae == pytest.approx((0 + 0.5 + 1) / 3)
    # kappa is defined (the judge varies): 0, poor
    assert check.kappa == pytest.approx(0.0) and check.kappa_band == lpb.KAPPA_BAND_POOR


async def test_a_judge_that_never_varies_leaves_the_correlations_undefined(
    labels: labels_pb2_grpc.LabelServiceStub,
) -> None:
    check = await agreement(labels, [4, 4, 4], [True, False, True])
    assert not check.HasField("pearson") and not check.HasField("spearman")
    assert check.mae == pytest.approx((0.25 + 0.75 + 0.25) / 3)
    assert not math.isnan(check.mae)
