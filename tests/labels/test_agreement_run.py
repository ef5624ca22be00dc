"""LabelService.Agreement and .Calibrate of a recorded run, through a real server with a run
store: RunSuite records the stand-in judge's verdicts, labels go through PutLabels, and the
figures are read from the run without a single judge call."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from scorewire.judge import JudgeService
from scorewire.labels.sqlite import SqliteLabelStore
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import labels_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.openai_server import FakeOpenAI
from tests.labels.test_agreement_rpc import (
    HUMAN,
    KEY,
    TEXTS,
    _fails,
    _judge,
    cases,
    judge_spec,
    put_labels,
    store,  # noqa: F401 - the label store fixture (SQLite and PostgreSQL)
)
from tests.labels.test_agreement_rpc import Server as LabelServer

CONTAINS = pb.CheckSpec(type="contains", params={"needles": ["o"]})


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    f = FakeOpenAI(api_key=KEY)
    f.responder = _judge
    with f.running():
        yield f


@dataclass
class RunLabelServer(LabelServer):
    address: str = ""


def _settings(fake: FakeOpenAI, **overrides: Any) -> Settings:
    return Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model="openai:gpt-4o-mini",
        max_bootstrap_resamples=5000,
        **overrides,
    )


@pytest.fixture
async def server(fake: FakeOpenAI, store: Any, tmp_path: Any) -> AsyncIterator[RunLabelServer]:  # noqa: F811
    settings = _settings(fake)
    judge = JudgeService.from_settings(settings)
    runs = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    running, port = await create_server(settings, judge=judge, labels=store, runs=runs)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield RunLabelServer(
            labels_pb2_grpc.LabelServiceStub(channel),
            scoring_pb2_grpc.ScoringServiceStub(channel),
            None,  # type: ignore[arg-type]
            f"127.0.0.1:{port}",
        )
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


async def record(
    scoring: scoring_pb2_grpc.ScoringServiceStub,
    checks: list[pb.CheckSpec],
    metadata: Any = None,
) -> str:
    req = pb.RunSuiteRequest(cases=cases(), checks=checks, record=True, run_name="nightly")
    summary = pb.RunSummary()
    async for ev in scoring.RunSuite(req, metadata=metadata):
        if ev.WhichOneof("event") == "summary":
            summary = ev.summary
    assert summary.run_id
    return summary.run_id


async def test_a_recorded_run_gives_the_figures_of_scoring_now_without_a_judge_call(
    server: LabelServer, fake: FakeOpenAI
) -> None:
    await put_labels(server)
    run_id = await record(server.scoring, [judge_spec(), CONTAINS])
    assert fake.calls == 4
    options = lpb.AgreementOptions(seed=3, resamples=2000)
    resp = await server.labels.Agreement(lpb.AgreementRequest(run_id=run_id, options=options))
    assert fake.calls == 4  # read from the run: no judge call
    [check] = resp.checks  # `contains` is not judge-backed
    # judge passes s0, s1 (good); people pass s0, s3
    assert (check.name, check.type, check.judge_model) == ("polite", "judge", "openai:gpt-4o-mini")
    assert check.pairs == 4 and check.accuracy == 0.5 and check.unlabelled == 0
    c = check.confusion
    assert (c.judge_pass_human_pass, c.judge_pass_human_fail) == (1, 1)
    assert (c.judge_fail_human_pass, c.judge_fail_human_fail) == (1, 1)
    assert check.HasField("kappa") and check.kappa == pytest.approx(0.0)
    assert [d.sample_id for d in check.disagreements] == ["s1", "s3"]
    assert check.disagreements[0].human_note == "ana: no to 1"
    assert check.disagreements[1].judge_reason.startswith("level 2/5")
    assert check.cost_usd > 0  # what the run's judge calls cost when it was recorded
    # scoring the same cases now (from the verdict cache) answers the same figures
    now = await server.labels.Agreement(
        lpb.AgreementRequest(cases=cases(), checks=[judge_spec(), CONTAINS], options=options)
    )
    assert fake.calls == 4
    [scored] = now.checks
    scored.cost_usd = check.cost_usd  # cached now, paid when recorded
    assert scored == check


async def test_calibrate_a_recorded_run_calls_no_judge(
    server: LabelServer, fake: FakeOpenAI
) -> None:
    await put_labels(server, [True, True, False, False])  # people pass the "good" outputs
    run_id = await record(server.scoring, [judge_spec()])
    calls = fake.calls
    resp = await server.labels.Calibrate(
        lpb.CalibrateRequest(agreement=lpb.AgreementRequest(run_id=run_id), thresholds=[0.25, 1])
    )
    assert fake.calls == calls
    [cal] = resp.checks
    assert [p.threshold for p in cal.points] == [0.25, 1.0]
    assert cal.recommended_threshold == 1.0 and cal.recommended_kappa == pytest.approx(1.0)
    assert cal.points[0].kappa == 0 and cal.points[0].accuracy == 0.5
    assert cal.pairs == 4 and cal.cost_per_pair_usd == pytest.approx(cal.cost_usd / 4)
    assert cal.cost_usd > 0


async def test_the_judge_model_and_the_check_come_from_the_run(
    server: LabelServer, fake: FakeOpenAI
) -> None:
    await put_labels(server)
    other = judge_spec(model="openai:gpt-4o")
    other.name = "polite_4o"
    run_id = await record(server.scoring, [judge_spec(), other])
    calls = fake.calls
    both = await server.labels.Agreement(lpb.AgreementRequest(run_id=run_id))
    assert [(c.name, c.judge_model) for c in both.checks] == [
        ("polite", "openai:gpt-4o-mini"),
        ("polite_4o", "openai:gpt-4o"),
    ]
    one = await server.labels.Agreement(lpb.AgreementRequest(run_id=run_id, check="polite_4o"))
    assert [c.name for c in one.checks] == ["polite_4o"] and one.checks[0].pairs == 4
    assert fake.calls == calls


async def test_labels_of_other_outputs_do_not_pair(server: LabelServer, fake: FakeOpenAI) -> None:
    # labels for s0..s3 of the texts, but the run recorded other outputs for s2, s3
    await put_labels(server)
    req = pb.RunSuiteRequest(
        cases=[
            *cases()[:2],
            *(
                pb.Case(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text=f"changed {i}"))
                for i in (2, 3)
            ),
        ],
        checks=[judge_spec()],
        record=True,
    )
    run_id = ""
    async for ev in server.scoring.RunSuite(req):
        if ev.WhichOneof("event") == "summary":
            run_id = ev.summary.run_id
    resp = await server.labels.Agreement(lpb.AgreementRequest(run_id=run_id))
    [check] = resp.checks
    assert check.pairs == 2 and check.unlabelled == 2


async def test_a_recorded_run_that_cannot_be_measured(
    server: LabelServer, fake: FakeOpenAI
) -> None:
    await _fails(
        server.labels.Agreement(lpb.AgreementRequest(run_id="no-such-run")),
        grpc.StatusCode.NOT_FOUND,
        "no run 'no-such-run'",
    )
    plain = await record(server.scoring, [CONTAINS])
    await _fails(
        server.labels.Agreement(lpb.AgreementRequest(run_id=plain)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "recorded no judge-backed score",
    )
    judged = await record(server.scoring, [judge_spec(), CONTAINS])
    await _fails(
        server.labels.Agreement(lpb.AgreementRequest(run_id=judged, check="contains")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "no judge-backed score named 'contains'",
    )
    await put_labels(server, check="another")  # labels of another label check: zero pairs
    await _fails(
        server.labels.Calibrate(
            lpb.CalibrateRequest(agreement=lpb.AgreementRequest(run_id=judged))
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "no output has both a judge verdict and a human label",
    )
    await _fails(
        server.labels.Agreement(lpb.AgreementRequest(run_id=judged, cases=cases())),
        grpc.StatusCode.INVALID_ARGUMENT,
        "cases",
        "must be empty when run_id is set",
    )
    await _fails(
        server.labels.Calibrate(
            lpb.CalibrateRequest(agreement=lpb.AgreementRequest(run_id=judged, budget_usd=1.0))
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "agreement.budget_usd",
    )


# --- tenants ---------------------------------------------------------------------------------


def _token(name: str) -> str:
    return f"token-of-{name}-0123456789"


def _md(name: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {_token(name)}"),)


async def test_another_tenants_run_is_not_found(
    fake: FakeOpenAI, tmp_path: Any, pki: dict[str, Any]
) -> None:
    roles = {"checkout": "caller", "search": "caller", "root": "admin"}
    tokens = [
        {"name": n, "sha256": hashlib.sha256(_token(n).encode()).hexdigest(), "role": r}
        for n, r in roles.items()
    ]
    settings = _settings(
        fake,
        tls_cert=str(pki["srv_cert_path"]),
        tls_key=str(pki["srv_key_path"]),
        auth_tokens=json.dumps(tokens),
    )
    labels = await SqliteLabelStore.open(str(tmp_path / "labels.db"))
    runs = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge, labels=labels, runs=runs)
    creds = grpc.ssl_channel_credentials(root_certificates=pki["ca"])
    channel = grpc.aio.secure_channel(f"localhost:{port}", creds)
    stub = labels_pb2_grpc.LabelServiceStub(channel)
    scoring = scoring_pb2_grpc.ScoringServiceStub(channel)
    try:
        from scorewire.labels.label_model import output_hash

        await stub.PutLabels(
            lpb.PutLabelsRequest(
                labels=[
                    lpb.Label(sample_id=f"s{i}", output_hash=output_hash(TEXTS[i]), passed=p)
                    for i, p in enumerate(HUMAN)
                ]
            ),
            metadata=_md("checkout"),
        )
        run_id = await record(scoring, [judge_spec()], metadata=_md("checkout"))
        mine = await stub.Agreement(lpb.AgreementRequest(run_id=run_id), metadata=_md("checkout"))
        assert mine.checks[0].pairs == 4
        await _fails(
            stub.Agreement(lpb.AgreementRequest(run_id=run_id), metadata=_md("search")),
            grpc.StatusCode.NOT_FOUND,
            f"no run {run_id!r}",
        )
        # root sees every run; its own (admin) labels view is every tenant's
        root = await stub.Agreement(lpb.AgreementRequest(run_id=run_id), metadata=_md("root"))
        assert root.checks[0].pairs == 4
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()
        await labels.close()


# --- the CLI ---------------------------------------------------------------------------------


async def test_the_cli_reads_a_recorded_run_from_the_server(
    server: RunLabelServer, fake: FakeOpenAI, tmp_path: Any
) -> None:
    import asyncio

    from tests.cli.test_agreement import scorewire

    await put_labels(server)
    run_id = await record(server.scoring, [judge_spec(), CONTAINS])
    calls = fake.calls
    addr = server.address
    done = await asyncio.to_thread(
        scorewire, "agreement", run_id, "--server", addr, "--seed", "3", "--json", "-"
    )
    assert done.code == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["format"] == "scorewire.agreement/1" and doc["results"] == run_id
    [check] = doc["checks"]
    assert (check["name"], check["pairs"], check["accuracy"]) == ("polite", 4, 0.5)
    assert [d["sample_id"] for d in check["disagreements"]] == ["s1", "s3"]
    # the server's numeric figures, as its Agreement sent them: values 1, 1, 0.25, 0.25
    # against verdicts 1, 0, 0, 1 do not correlate; MAE (0 + 1 + 0.25 + 0.75) / 4
    assert (check["pearson"], check["spearman"], check["mae"]) == pytest.approx((0, 0, 0.5))
    assert check["kappa_band"] == "poor"  # kappa 0
    assert "Pearson r 0.000, Spearman rho 0.000, MAE 0.500" in done.stderr
    cal = await asyncio.to_thread(
        scorewire, "calibrate", run_id, "--server", addr, "--thresholds", "0.25,1", "--json", "-"
    )
    assert cal.code == 0, cal.stderr
    assert [p["threshold"] for p in json.loads(cal.stdout)["checks"][0]["points"]] == [0.25, 1.0]
    assert fake.calls == calls
    # an unknown run is the server's NOT_FOUND, exit 2; a run id without --server is usage
    missing = await asyncio.to_thread(scorewire, "agreement", "run_" + "0" * 20, "--server", addr)
    assert missing.code == 2 and "NOT_FOUND" in missing.stderr
    nolabels = await asyncio.to_thread(
        scorewire, "agreement", run_id, "--labels", str(tmp_path / "none.jsonl")
    )
    assert nolabels.code == 2 and "give --server" in nolabels.stderr
