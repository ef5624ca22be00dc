"""Helpers of the metrics tests: a real server with metrics on, its /metrics, scraping.

The server is built the way `serve` builds it: `start_metrics(settings, judge=...)` serves
/metrics on `settings.metrics_port` (0 here: a free port), and its interceptors and
observer go to `create_server`. Judge-backed traffic goes to the OpenAI stand-in under
tests/fakes over real HTTP.
"""

from __future__ import annotations

import asyncio
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from prometheus_client.parser import text_string_to_metric_families
from scorewire.engine.custom import check
from scorewire.judge import JudgeService
from scorewire.metrics import ServerMetrics, start_metrics
from scorewire.server.app import Running, create_server
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

import tests.server.custom_checks  # noqa: F401 - registers test.slow
from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
API_KEY = "sk-test-metrics"
PRICED_MODEL = "gpt-4o-mini"
"""In the built-in price table: $0.15 / $0.60 per 1M input / output tokens."""


@check("test.metrics_boom")
def boom(sample: Any, output: Any) -> bool:
    """Always raises: a custom check that raises scores as a CHECK_FAILED error."""
    raise ValueError("boom")


# --- scraping -------------------------------------------------------------------------


@dataclass
class Scrape:
    """One scrape of /metrics: every sample by name and labels."""

    text: str
    samples: list[tuple[str, dict[str, str], float]] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> Scrape:
        scrape = cls(text)
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                scrape.samples.append((s.name, dict(s.labels), float(s.value)))
        return scrape

    @property
    def names(self) -> set[str]:
        """Every sample name (histograms contribute _bucket, _sum and _count)."""
        return {name for name, _, _ in self.samples}

    def matching(self, name: str, **labels: str) -> list[tuple[dict[str, str], float]]:
        """Samples of `name` whose labels include `labels`."""
        return [
            (lb, v)
            for n, lb, v in self.samples
            if n == name and all(lb.get(k) == want for k, want in labels.items())
        ]

    def has(self, name: str, **labels: str) -> bool:
        """Whether a series of `name` with these labels exists."""
        return bool(self.matching(name, **labels))

    def total(self, name: str, **labels: str) -> float:
        """The sum over the matching series; 0 when none exists."""
        return sum(v for _, v in self.matching(name, **labels))

    def value(self, name: str, **labels: str) -> float:
        """The sum over the matching series; fails when none exists."""
        found = self.matching(name, **labels)
        assert found, f"no series {name}{labels or ''} in the scrape"
        return sum(v for _, v in found)


def scrape_url(url: str) -> Scrape:
    """GET /metrics over HTTP and parse it."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain")
        return Scrape.parse(resp.read().decode("utf-8"))


# --- servers ----------------------------------------------------------------------------


@dataclass
class MetricsServer:
    """A started server with metrics, a channel to it and its /metrics URL."""

    running: Running
    metrics: ServerMetrics
    channel: grpc.aio.Channel
    stub: scoring_pb2_grpc.ScoringServiceStub
    port: int
    metrics_url: str
    judge: JudgeService | None

    async def scrape(self) -> Scrape:
        """Scrape /metrics over HTTP (off the event loop, which keeps serving)."""
        return await asyncio.to_thread(scrape_url, self.metrics_url)

    async def close(self) -> None:
        await self.channel.close()
        await self.running.stop(0)


async def start_metrics_server(*, judge: bool = False, **overrides: Any) -> MetricsServer:
    """Start a server on port 0 with /metrics on a free port (and a judge if asked)."""
    settings = Settings(host="127.0.0.1", port=0, metrics_port=0, **overrides)
    service = JudgeService.from_settings(settings) if judge else None
    metrics = start_metrics(settings, judge=service)
    assert metrics is not None
    running, port = await create_server(
        settings, judge=service, observer=metrics.observer, interceptors=metrics.interceptors
    )
    running.closers.append(metrics.aclose)
    if service is not None:
        running.closers.append(service.aclose)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    return MetricsServer(
        running,
        metrics,
        channel,
        scoring_pb2_grpc.ScoringServiceStub(channel),
        port,
        f"http://127.0.0.1:{metrics.http_port}/metrics",
        service,
    )


def judge_settings(fake: FakeOpenAI, **overrides: Any) -> dict[str, Any]:
    """Settings overrides pointing the judge at the stand-in (no retry waits)."""
    return {
        "openai_base_url": fake.url,
        "openai_api_key": API_KEY,
        "judge_model": f"openai:{PRICED_MODEL}",
        "judge_retry_base_s": 0.0,
        "judge_max_retries": 2,
        **overrides,
    }


# --- traffic ------------------------------------------------------------------------------


def judge_spec(rubric: str = "The answer is polite.", model: str | None = None) -> pb.CheckSpec:
    """A `judge` check spec."""
    spec = pb.CheckSpec(type="judge")
    spec.params.update({"rubric": rubric, **({"model": model} if model else {})})
    return spec


def cases(texts: list[str]) -> list[pb.Case]:
    """RunSuite cases with these output texts."""
    out = []
    for i, text in enumerate(texts):
        c = pb.Case()
        c.sample.id = f"s{i}"
        c.output.text = text
        out.append(c)
    return out


@dataclass
class Seen:
    """What the client saw: scores, messages and RPC outcomes, to compare with metrics."""

    scores: list[pb.Score] = field(default_factory=list)
    suite_gates: list[bool] = field(default_factory=list)
    messages_received: dict[str, int] = field(default_factory=dict)

    def add_scores(self, scores: Any) -> None:
        self.scores.extend(scores)

    def outcomes(self) -> dict[tuple[str, str], int]:
        """(type, outcome) -> count, the way the metrics classify scores."""
        counts: dict[tuple[str, str], int] = {}
        for s in self.scores:
            outcome = "error" if s.error.code else ("pass" if s.passed else "fail")
            counts[(s.type, outcome)] = counts.get((s.type, outcome), 0) + 1
        return counts


async def run_suite(
    stub: scoring_pb2_grpc.ScoringServiceStub, req: pb.RunSuiteRequest, seen: Seen
) -> int:
    """Run a suite, recording scores and the gate; returns the messages received."""
    n = 0
    async for event in stub.RunSuite(req):
        n += 1
        if event.WhichOneof("event") == "results":
            for r in event.results.results:
                seen.add_scores(r.scores)
        else:
            seen.suite_gates.append(event.summary.gate_passed)
    return n


def judge_replies() -> list[Reply]:
    """Scripted answers for `judge_traffic`, in the order the calls are made."""
    return [
        Reply(status=429, headers={"Retry-After": "0"}),  # retried, then...
        Reply(input_tokens=100, output_tokens=20),  # ...answered
        Reply(input_tokens=200, output_tokens=30),
        Reply(input_tokens=300, output_tokens=40),
    ]


async def judge_traffic(srv: MetricsServer, fake: FakeOpenAI) -> Seen:
    """Uncached then cached judge calls, a retry, an unpriced model, an invalid verdict
    and a failed call; returns every score the client saw, in order."""
    seen = Seen()
    fake.script(*judge_replies())
    texts = ["answer zero", "answer one", "answer two"]
    # Three uncached calls (one of them retried once). Which case gets which scripted
    # reply depends on scheduling; the totals do not.
    await run_suite(srv.stub, pb.RunSuiteRequest(checks=[judge_spec()], cases=cases(texts)), seen)
    # The same three outputs again: every verdict comes from the cache.
    await run_suite(srv.stub, pb.RunSuiteRequest(checks=[judge_spec()], cases=cases(texts)), seen)
    # A model with no price: answered, but its cost is unknown.
    fake.script(Reply(input_tokens=50, output_tokens=5))
    resp = await srv.stub.Score(
        pb.ScoreRequest(
            output=pb.Output(text="unpriced"), checks=[judge_spec(model="openai:my-local-model")]
        )
    )
    seen.add_scores(resp.scores)
    # An answer that is not a verdict, then a call that fails without retries (400).
    fake.script(Reply(content="no verdict here", input_tokens=10, output_tokens=3))
    resp = await srv.stub.Score(
        pb.ScoreRequest(output=pb.Output(text="invalid"), checks=[judge_spec()])
    )
    seen.add_scores(resp.scores)
    fake.script(Reply(status=400, error_message="bad request"))
    resp = await srv.stub.Score(
        pb.ScoreRequest(output=pb.Output(text="error"), checks=[judge_spec()])
    )
    seen.add_scores(resp.scores)
    return seen
