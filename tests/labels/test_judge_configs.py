"""Agreement and Calibrate of panels and cascades through a real server: the report and the
kappa gauge name the judge configuration, never the default judge; F1 and the base rate
stand beside kappa; Calibrate proposes a pass level for a level judge.

The stand-in judge answers by model: `m-lenient` passes every "good" output (s0, s1),
`m-strict` and `m-third` pass what people pass (s0, s3), so a majority panel of the three
agrees with people where the lenient judge alone does not.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from scorewire.judge import JudgeService
from scorewire.labels.label_model import output_hash
from scorewire.labels.sqlite import SqliteLabelStore
from scorewire.metrics import ServerMetrics, start_metrics
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.scoring.judge_configs import judge_config, suite_params
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import labels_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.metrics.helpers import scrape_url

KEY = "sk-test-configs"
TEXTS = ["good one", "good but wrong", "bad", "bad but right"]
HUMAN = [True, False, False, True]
LENIENT, STRICT, THIRD = "openai:m-lenient", "openai:m-strict", "openai:m-third"
PANEL = f"panel(majority: {LENIENT}, {STRICT}, {THIRD})"
CASCADE = f"cascade({LENIENT} → {STRICT})"


def _level(model: str, text: str) -> int:
    if model == "m-lenient":
        # level 4 (the pass boundary: a cascade asks on) for the output it is wrong about
        return {"good one": 5, "good but wrong": 4}.get(text, 2)
    return 5 if text in ("good one", "bad but right") else 2


def _judge(body: Any) -> Reply:
    user = body["messages"][-1]["content"]
    text = next(t for t in sorted(TEXTS, key=len, reverse=True) if f"<output>\n{t}" in user)
    level = _level(body["model"], text)
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
    address: str


@pytest.fixture
async def server(fake: FakeOpenAI, tmp_path: Any) -> AsyncIterator[Server]:
    async with serving(fake, tmp_path) as srv:
        yield srv


@asynccontextmanager
async def serving(
    fake: FakeOpenAI, tmp_path: Any, judge_model: str = "openai:gpt-4o-mini"
) -> AsyncIterator[Server]:
    """A server whose label and run stores are files in `tmp_path`."""
    settings = Settings(
        host="127.0.0.1",
        port=0,
        metrics_port=0,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model=judge_model,
        judge_prices={"m-lenient": (1.0, 1.0), "m-strict": (10.0, 10.0), "m-third": (1.0, 1.0)},
    )
    judge = JudgeService.from_settings(settings)
    metrics = start_metrics(settings, judge=judge)
    assert metrics is not None
    labels = await SqliteLabelStore.open(str(tmp_path / "labels.db"))
    runs = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    running, port = await create_server(
        settings, judge=judge, labels=labels, runs=runs, agreement_observer=metrics.agreement
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        srv = Server(
            labels_pb2_grpc.LabelServiceStub(channel),
            scoring_pb2_grpc.ScoringServiceStub(channel),
            metrics,
            f"127.0.0.1:{port}",
        )
        await srv.labels.PutLabels(
            lpb.PutLabelsRequest(
                labels=[
                    lpb.Label(
                        sample_id=f"s{i}",
                        output_hash=output_hash(TEXTS[i]),
                        passed=passed,
                        labeller="ana",
                    )
                    for i, passed in enumerate(HUMAN)
                ]
            )
        )
        yield srv
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()
        await labels.close()
        metrics.close()


def cases() -> list[pb.Case]:
    return [
        pb.Case(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text=t)) for i, t in enumerate(TEXTS)
    ]


def spec(name: str, **params: Any) -> pb.CheckSpec:
    # a rubric per check: no check finds another's verdicts in the cache, so each pays
    s = pb.CheckSpec(name=name, type="judge")
    s.params.update({"rubric": f"Is it right ({name})?", **params})
    return s


CHECKS = [
    spec("single", model=LENIENT),
    spec("panel", judges=[LENIENT, STRICT, THIRD]),
    spec("cascade", cascade=[LENIENT, STRICT]),
]


async def test_panels_and_cascades_are_named_in_the_report_and_the_gauge(server: Server) -> None:
    resp = await server.labels.Agreement(
        lpb.AgreementRequest(cases=cases(), checks=CHECKS, options=lpb.AgreementOptions(seed=1))
    )
    by_name = {c.name: c for c in resp.checks}
    assert [(c.name, c.judge_model) for c in resp.checks] == [
        ("single", LENIENT),
        ("panel", PANEL),
        ("cascade", CASCADE),
    ]
    # the lenient judge passes s0, s1; the panel's majority passes s0, s3 as people do
    assert by_name["single"].kappa == pytest.approx(0.0)
    assert by_name["panel"].kappa == pytest.approx(1.0) and by_name["panel"].accuracy == 1.0
    # the cascade sends s1 (level 4: at the boundary) on to the strict judge, which fails it
    cascade = by_name["cascade"].confusion
    assert (cascade.judge_pass_human_pass, cascade.judge_fail_human_pass) == (1, 1)
    assert cascade.judge_pass_human_fail == 0
    # 120 tokens a call at $1 (lenient, third) or $10 (strict) per 1M: a panel asks every
    # judge of the 4 cases, a cascade the lenient one 4 times and the strict one once
    assert by_name["single"].cost_usd == pytest.approx(4 * 0.00012)
    assert by_name["panel"].cost_usd == pytest.approx(8 * 0.00012 + 4 * 0.0012)
    assert by_name["cascade"].cost_usd == pytest.approx(4 * 0.00012 + 0.0012)
    scrape = scrape_url(f"http://127.0.0.1:{server.metrics.http_port}/metrics")
    for name, config in (("panel", PANEL), ("cascade", CASCADE)):
        kappa = by_name[name].kappa
        assert scrape.value(
            "scorewire_judge_agreement_kappa", check=name, judge_model=config
        ) == pytest.approx(kappa)


async def test_a_sampled_judge_sent_over_grpc_is_named_with_its_sampling(server: Server) -> None:
    # a CheckSpec's params travel as a Struct, whose numbers are floats (samples: 3.0):
    # the name read them as no sampling at all
    sampled = spec("sampled", model=LENIENT, samples=3, aggregate="median")
    resp = await server.labels.Agreement(
        lpb.AgreementRequest(cases=cases(), checks=[sampled], options=lpb.AgreementOptions(seed=1))
    )
    assert [c.judge_model for c in resp.checks] == [f"{LENIENT} (samples 3, median)"]


async def test_f1_and_the_base_rate_stand_beside_kappa(server: Server) -> None:
    resp = await server.labels.Agreement(
        lpb.AgreementRequest(cases=cases(), checks=CHECKS[:1], options=lpb.AgreementOptions(seed=1))
    )
    [single] = resp.checks
    # TP 1 (s0), FP 1 (s1), FN 1 (s3): F1 = 2 / (2 + 1 + 1); people passed 2 of 4
    assert single.HasField("f1") and single.f1 == pytest.approx(0.5)
    assert single.base_rate == pytest.approx(0.5)


async def test_a_recorded_run_names_its_panel_not_the_default_judge(server: Server) -> None:
    req = pb.RunSuiteRequest(cases=cases(), checks=CHECKS, record=True, run_name="panels")
    run_id = ""
    async for ev in server.scoring.RunSuite(req):
        if ev.WhichOneof("event") == "summary":
            run_id = ev.summary.run_id
    assert run_id
    resp = await server.labels.Agreement(lpb.AgreementRequest(run_id=run_id))
    assert [(c.name, c.judge_model) for c in resp.checks] == [
        ("single", LENIENT),
        ("panel", PANEL),
        ("cascade", CASCADE),
    ]
    cal = await server.labels.Calibrate(
        lpb.CalibrateRequest(agreement=lpb.AgreementRequest(run_id=run_id, check="panel"))
    )
    assert cal.checks[0].judge_model == PANEL
    # the CLI prints the configuration the server names, and writes it to the JSON
    from tests.cli.test_agreement import scorewire

    done = await asyncio.to_thread(
        scorewire, "agreement", run_id, "--server", server.address, "--json", "-"
    )
    assert done.code == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [c["judge"] for c in doc["checks"]] == [LENIENT, PANEL, CASCADE]
    assert doc["checks"][1]["f1"] == 1.0 and doc["checks"][1]["base_rate"] == 0.5


async def test_a_recorded_run_names_the_judge_that_judged_it_not_todays_default(
    fake: FakeOpenAI, tmp_path: Any
) -> None:
    # a check naming no model was judged by the default of its day (gpt-4o-mini, as its
    # scores record); a server whose default is now m-strict still names gpt-4o-mini
    req = pb.RunSuiteRequest(
        cases=cases(), checks=[spec("defaulted")], record=True, run_name="defaults"
    )
    async with serving(fake, tmp_path) as first:
        events = [ev async for ev in first.scoring.RunSuite(req)]
    run_id = events[-1].summary.run_id
    async with serving(fake, tmp_path, judge_model=STRICT) as later:
        resp = await later.labels.Agreement(lpb.AgreementRequest(run_id=run_id))
    assert [(c.name, c.judge_model) for c in resp.checks] == [("defaulted", "openai:gpt-4o-mini")]


async def test_calibrate_proposes_the_pass_level_of_a_level_judge(server: Server) -> None:
    # the lenient judge gives s0 5, s1 4, s2 2, s3 2 on a 1..5 scale; people pass s0, s3.
    # Level 5 passes s0 only (kappa 0.5), 4 passes s0, s1 (kappa 0), 2 or less everything.
    resp = await server.labels.Calibrate(
        lpb.CalibrateRequest(
            agreement=lpb.AgreementRequest(cases=cases(), checks=CHECKS[:1]),
            thresholds=[0.5],  # a threshold between levels: the pass level is still a level
        )
    )
    [cal] = resp.checks
    assert cal.scale == 5 and cal.HasField("recommended_pass_level")
    assert cal.recommended_pass_level == 5
    assert cal.pass_level_point.threshold == 1.0
    assert cal.pass_level_point.kappa == pytest.approx(0.5)
    assert [p.threshold for p in cal.points] == [0.5]  # the thresholds asked for, unchanged


CHECKLLM = """
judge: {backend: openai, model: m-lenient}
tests:
  - vars: {q: one}
    assert:
      - {type: correctness, value: "is right"}
      - {type: sentiment, judges: [openai:m-strict, openai:m-third], panel: all}
  - vars: {q: two}
    assert: [{type: correctness, value: "other", model: openai:m-strict}]
"""


def test_a_recorded_checkllm_suite_names_the_files_judge_and_an_assertions_panel() -> None:
    # what Agreement of a recorded checkllm run reads: the suite text as recorded
    params = suite_params(CHECKLLM)
    describe = {None: "openai:gpt-4o-mini"}.get
    named = {
        kind: judge_config(kind, params.get(kind), lambda m: describe(m, m)).judge_model
        for kind in ("correctness", "sentiment", "not_asserted")
    }
    assert named == {
        "correctness": LENIENT,  # the first assertion of the type, with the file's judge
        "sentiment": f"panel(all: {STRICT}, {THIRD})",
        "not_asserted": "openai:gpt-4o-mini",  # the server's default judge
    }
    assert judge_config("sentiment", params["sentiment"], str).scale == 5


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"model": "a"}, "a"),
        ({"model": "a", "samples": 1}, "a"),  # one sample is the plain configuration
        ({"model": "a", "samples": 3}, "a (samples 3, mean)"),
        ({"model": "a", "samples": 5, "aggregate": "majority"}, "a (samples 5, majority)"),
        (
            {"judges": ["a", "b"], "samples": 3, "aggregate": "median"},
            "panel(majority: a, b; samples 3, median)",
        ),
        (
            {"cascade": ["a", "b"], "audit_share": 0.1, "samples": 2},
            "cascade(a → b; audit 0.1; samples 2, mean)",
        ),
    ],
)
def test_a_judge_asked_several_times_is_another_configuration(
    params: dict[str, object], named: str
) -> None:
    assert judge_config("judge", params, lambda m: m or "default").judge_model == named
