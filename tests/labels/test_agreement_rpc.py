"""LabelService.Agreement and .Calibrate through a real server: the stand-in judge, the real
label stores (SQLite and PostgreSQL), generated stubs; the figures, the errors, the gauge."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from scorewire.judge import JudgeService
from scorewire.labels.label_model import output_hash
from scorewire.labels.postgres import PostgresLabelStore
from scorewire.labels.sqlite import SqliteLabelStore
from scorewire.metrics import ServerMetrics, start_metrics
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import labels_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.metrics.helpers import scrape_url

KEY = "sk-test-agreement"
TEXTS = ["good one", "good but wrong", "bad", "bad but right"]
HUMAN = [True, False, False, True]


def _judge(body: Any) -> Reply:
    # level 5 for outputs that start with "good", level 2 otherwise
    user = body["messages"][-1]["content"]
    level = 5 if "<output>\ngood" in user else 2
    return Reply(content=json.dumps({"reasoning": "judged", "score": level}))


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    f = FakeOpenAI(api_key=KEY)
    f.responder = _judge
    with f.running():
        yield f


@dataclass
class Server:
    labels: labels_pb2_grpc.LabelServiceStub
    scoring: scoring_pb2_grpc.ScoringServiceStub
    metrics: ServerMetrics


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: Any, tmp_path: Any) -> AsyncIterator[Any]:
    """The real label store: the SQLite file, and a real PostgreSQL."""
    if request.param == "sqlite":
        opened: Any = await SqliteLabelStore.open(str(tmp_path / "labels.db"))
    else:
        opened = await PostgresLabelStore.open(request.getfixturevalue("pg_url"))
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def server(fake: FakeOpenAI, store: Any) -> AsyncIterator[Server]:
    settings = Settings(
        host="127.0.0.1",
        port=0,
        metrics_port=0,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model="openai:gpt-4o-mini",
        max_bootstrap_resamples=5000,
        agreement_kappa_floor=0.5,
    )
    judge = JudgeService.from_settings(settings)
    metrics = start_metrics(settings, judge=judge)
    assert metrics is not None
    running, port = await create_server(
        settings,
        judge=judge,
        labels=store,
        observer=metrics.observer,
        interceptors=metrics.interceptors,
        agreement_observer=metrics.agreement,
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield Server(
            labels_pb2_grpc.LabelServiceStub(channel),
            scoring_pb2_grpc.ScoringServiceStub(channel),
            metrics,
        )
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()
        metrics.close()


def cases() -> list[pb.Case]:
    return [
        pb.Case(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text=t)) for i, t in enumerate(TEXTS)
    ]


def judge_spec(**params: Any) -> pb.CheckSpec:
    spec = pb.CheckSpec(name="polite", type="judge")
    spec.params.update({"rubric": "Is it good?", **params})
    return spec


async def put_labels(srv: Server, human: list[bool] = HUMAN, check: str = "") -> None:
    await srv.labels.PutLabels(
        lpb.PutLabelsRequest(
            labels=[
                lpb.Label(
                    sample_id=f"s{i}",
                    output_hash=output_hash(TEXTS[i]),
                    passed=passed,
                    labeller="ana",
                    note="" if passed else f"no to {i}",
                    check=check,
                )
                for i, passed in enumerate(human)
            ]
        )
    )


def agreement_request(**kw: Any) -> lpb.AgreementRequest:
    checks = kw.pop(
        "checks", [judge_spec(), pb.CheckSpec(type="contains", params={"needles": ["o"]})]
    )
    return lpb.AgreementRequest(cases=cases(), checks=checks, **kw)


async def test_agreement_figures_and_the_kappa_gauge(server: Server, fake: FakeOpenAI) -> None:
    await put_labels(server)
    resp = await server.labels.Agreement(agreement_request(options=lpb.AgreementOptions(seed=3)))
    [check] = resp.checks  # `contains` is not judge-backed
    # judge passes s0, s1 (good); people pass s0, s3
    assert (check.name, check.type, check.judge_model) == ("polite", "judge", "openai:gpt-4o-mini")
    assert check.pairs == 4 and check.accuracy == 0.5
    c = check.confusion
    assert (c.judge_pass_human_pass, c.judge_pass_human_fail) == (1, 1)
    assert (c.judge_fail_human_pass, c.judge_fail_human_fail) == (1, 1)
    assert check.HasField("kappa") and check.kappa == pytest.approx(0.0)
    assert check.kappa_low <= 0 <= check.kappa_high and check.resamples > 0
    # both disagreements are single confident verdicts; s1 (judge pass at 1.0) and s3
    # (judge fail at 0.25: confidence 0.75)
    assert [d.sample_id for d in check.disagreements] == ["s1", "s3"]
    assert check.disagreements[0].human_note == "ana: no to 1"
    assert check.disagreements[1].judge_reason.startswith("level 2/5")
    assert check.cost_usd > 0 and fake.calls == 4
    scrape = scrape_url(f"http://127.0.0.1:{server.metrics.http_port}/metrics")
    labels = {"check": "polite", "judge_model": "openai:gpt-4o-mini"}
    assert scrape.value("scorewire_judge_agreement_kappa", **labels) == pytest.approx(0.0)
    assert scrape.value("scorewire_judge_agreement_pairs", **labels) == 4
    assert scrape.value("scorewire_judge_agreement_kappa_floor") == 0.5


async def test_calibrate_uses_the_cached_verdicts_and_calls_no_judge(
    server: Server, fake: FakeOpenAI
) -> None:
    # people pass exactly the "good" outputs
    await put_labels(server, [True, True, False, False])
    await server.labels.Agreement(agreement_request())
    calls = fake.calls
    resp = await server.labels.Calibrate(lpb.CalibrateRequest(agreement=agreement_request()))
    assert fake.calls == calls  # every verdict came from the cache
    [cal] = resp.checks
    assert [p.threshold for p in cal.points] == [0.25, 1.0]
    assert cal.recommended_threshold == 1.0 and cal.recommended_kappa == pytest.approx(1.0)
    # 0.25 passes everything while people pass half: chance agreement, kappa 0
    assert cal.points[0].kappa == 0 and cal.points[0].accuracy == 0.5
    assert cal.cost_usd == 0 and cal.cost_per_pair_usd == 0 and cal.pairs == 4


async def test_repeated_samples_carry_their_spread_over_grpc(
    server: Server, fake: FakeOpenAI
) -> None:
    resp = await server.scoring.Score(
        pb.ScoreRequest(
            sample=pb.Sample(id="x"), output=pb.Output(text="good"), checks=[judge_spec(samples=3)]
        )
    )
    [score] = resp.scores
    assert fake.calls == 3
    assert score.value == 1.0 and score.passed
    assert score.spread.samples == 3 and score.spread.agreement == 1.0
    assert list(score.spread.values) == [1.0, 1.0, 1.0] and score.spread.stdev == 0


async def test_too_many_samples_is_refused_naming_the_setting(server: Server) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.scoring.Score(
            pb.ScoreRequest(output=pb.Output(text="x"), checks=[judge_spec(samples=17)])
        )
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_judge_samples" in (info.value.details() or "")


async def _fails(call: Any, code: grpc.StatusCode, *needles: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    assert info.value.code() == code, info.value.details()
    for needle in needles:
        assert needle in (info.value.details() or "")


async def test_zero_pairs_is_failed_precondition_never_kappa_zero(
    server: Server, fake: FakeOpenAI
) -> None:
    await put_labels(server, check="another")  # labels of another label check
    await _fails(
        server.labels.Agreement(agreement_request()),
        grpc.StatusCode.FAILED_PRECONDITION,
        "no output has both a judge verdict and a human label",
    )
    # naming the label check pairs them
    resp = await server.labels.Agreement(agreement_request(labels=lpb.LabelFilter(check="another")))
    assert resp.checks[0].pairs == 4


@pytest.mark.parametrize(
    ("request_kw", "code", "needle"),
    [
        ({"run_id": "r1"}, grpc.StatusCode.UNAVAILABLE, "keeps no run store"),
        (
            {"checks": [pb.CheckSpec(type="contains", params={"needles": ["o"]})]},
            grpc.StatusCode.INVALID_ARGUMENT,
            "none of the checks is judge-backed",
        ),
        ({"check": "nope"}, grpc.StatusCode.INVALID_ARGUMENT, "'nope' is not the name"),
        (
            {"options": lpb.AgreementOptions(resamples=5001)},
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "max_bootstrap_resamples",
        ),
        (
            {"options": lpb.AgreementOptions(confidence=1.5)},
            grpc.StatusCode.INVALID_ARGUMENT,
            "options.confidence",
        ),
    ],
)
async def test_bad_requests(
    server: Server, request_kw: dict[str, Any], code: grpc.StatusCode, needle: str
) -> None:
    await put_labels(server)
    await _fails(server.labels.Agreement(agreement_request(**request_kw)), code, needle)


async def test_calibrate_names_fields_under_agreement(server: Server) -> None:
    bad = agreement_request(checks=[pb.CheckSpec(type="judge", params={})])
    await _fails(
        server.labels.Calibrate(lpb.CalibrateRequest(agreement=bad)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "agreement.checks[0].params.rubric",
    )
    await _fails(
        server.labels.Calibrate(
            lpb.CalibrateRequest(agreement=agreement_request(), thresholds=[2])
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "thresholds[0]",
    )


# --- tenants ---------------------------------------------------------------------------------


def _token(name: str) -> str:
    return f"token-of-{name}-0123456789"


def _md(name: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {_token(name)}"),)


async def test_agreement_reads_only_the_labels_the_caller_may_list(
    fake: FakeOpenAI, tmp_path: Any, pki: dict[str, Any]
) -> None:
    import hashlib

    roles = {"checkout": "caller", "search": "caller", "root": "admin"}
    tokens = [
        {"name": n, "sha256": hashlib.sha256(_token(n).encode()).hexdigest(), "role": r}
        for n, r in roles.items()
    ]
    settings = Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model="openai:gpt-4o-mini",
        tls_cert=str(pki["srv_cert_path"]),
        tls_key=str(pki["srv_key_path"]),
        auth_tokens=json.dumps(tokens),
    )
    store = await SqliteLabelStore.open(str(tmp_path / "labels.db"))
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge, labels=store)
    creds = grpc.ssl_channel_credentials(root_certificates=pki["ca"])
    channel = grpc.aio.secure_channel(f"localhost:{port}", creds)
    stub = labels_pb2_grpc.LabelServiceStub(channel)
    try:
        # root writes checkout's labels as HUMAN and search's as all-pass
        for tenant, verdicts in (("checkout", HUMAN), ("search", [True] * 4)):
            await stub.PutLabels(
                lpb.PutLabelsRequest(
                    labels=[
                        lpb.Label(
                            sample_id=f"s{i}",
                            output_hash=output_hash(TEXTS[i]),
                            passed=p,
                            labeller="ana",
                            tenant=tenant,
                        )
                        for i, p in enumerate(verdicts)
                    ]
                ),
                metadata=_md("root"),
            )
        mine = await stub.Agreement(agreement_request(), metadata=_md("checkout"))
        theirs = await stub.Agreement(agreement_request(), metadata=_md("search"))
        # judge passes s0, s1 in both; checkout's people pass s0, s3, search's all four
        assert mine.checks[0].confusion.judge_pass_human_fail == 1
        assert theirs.checks[0].confusion.judge_pass_human_fail == 0
        assert theirs.checks[0].confusion.judge_fail_human_pass == 2
        await _fails(
            stub.Agreement(
                agreement_request(labels=lpb.LabelFilter(tenant="checkout")),
                metadata=_md("search"),
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "own tenant",
        )
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()
        await store.close()
