"""OpenTelemetry traces from a real server process to a real OTLP receiver.

The server exports over OTLP/gRPC only when OTEL_EXPORTER_OTLP_ENDPOINT is set; the
receiver (`tests.support.otlp`) is the collector's TraceService on a free port. The
caller is the Python client inside a span of the test's own SDK tracer provider: the
server's spans must be in the caller's trace, the RPC span a child of the caller's.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from scorewire.client import Client
from scorewire.core import tracing
from scorewire.core.errors import StartupError
from scorewire.server.otlp import start_tracing

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.otlp import OtlpReceiver, ReceivedSpan
from tests.support.servers import SCOREWIRE
from tests.support.shared_replicas import REPLICA_KEY, Replicas, replica_env

SERVER = trace.SpanKind.SERVER.value + 1  # OTLP's enum counts UNSPECIFIED as 0
CLIENT = trace.SpanKind.CLIENT.value + 1

_provider = TracerProvider()


@pytest.fixture(scope="module")
def caller_tracer() -> trace.Tracer:
    """A recording tracer of the test process (the caller's side), set once."""
    trace.set_tracer_provider(_provider)
    return trace.get_tracer("caller")


@pytest.fixture
def judge() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(
        default=Reply(content=json.dumps({"reasoning": "r", "score": 5})), api_key=REPLICA_KEY
    )
    with fake.running():
        yield fake


def _traced_env(judge: FakeOpenAI, otlp: OtlpReceiver, tmp_path: Path) -> dict[str, str]:
    env = replica_env(judge, "memory://", tmp_path)
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = otlp.endpoint
    env["OTEL_BSP_SCHEDULE_DELAY"] = "100"  # export within 0.1 s, not 5 s
    env["OTEL_SERVICE_NAME"] = "scorewire-under-test"
    return env


def _in_trace(spans: list[ReceivedSpan], trace_id: str) -> list[ReceivedSpan]:
    return [s for s in spans if s.trace_id == trace_id]


def test_a_score_with_a_judge_is_one_trace_under_the_callers_span(
    judge: FakeOpenAI, tmp_path: Path, caller_tracer: trace.Tracer
) -> None:
    rubric = {"name": "helpful", "type": "judge", "params": {"rubric": "Is it helpful?"}}
    with OtlpReceiver() as otlp, Replicas(1, _traced_env(judge, otlp, tmp_path)) as replicas:
        with (
            Client(replicas.addresses[0]) as client,
            caller_tracer.start_as_current_span("caller") as caller,
        ):
            result = client.score("a helpful answer", checks=[rubric])
        ctx = caller.get_span_context()
        trace_id, caller_id = f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"
        spans = otlp.wait_for(
            lambda got: any(s.name.startswith("chat ") for s in _in_trace(got, trace_id)),
            "the judge call's span to arrive",
        )
    assert result.passed
    mine = _in_trace(spans, trace_id)
    by_name = {s.name: s for s in mine}
    rpc = by_name["/scorewire.v1.ScoringService/Score"]
    assert rpc.kind == SERVER and rpc.parent_span_id == caller_id  # joined the caller's trace
    assert rpc.service == "scorewire-under-test"
    cases = by_name["scorewire.cases"]
    assert cases.parent_span_id == rpc.span_id and cases.attributes[tracing.CASES] == 1
    ask = by_name["judge gpt-4o-mini"]
    assert ask.parent_span_id == cases.span_id
    assert ask.attributes[tracing.REQUEST_MODEL] == "gpt-4o-mini"
    assert ask.attributes[tracing.CACHED] is False and ask.attributes[tracing.COST_USD] > 0
    assert ask.attributes[tracing.INPUT_TOKENS] == 100
    evaluation = dict(ask.events)[tracing.EVALUATION_EVENT]
    assert evaluation[tracing.EVALUATION_SCORE_VALUE] == 5.0
    assert evaluation[tracing.EVALUATION_NAME]
    chat = by_name["chat gpt-4o-mini"]
    assert chat.kind == CLIENT and chat.parent_span_id == ask.span_id
    assert chat.attributes[tracing.OPERATION] == "chat"
    assert chat.attributes[tracing.PROVIDER] == "openai"
    assert chat.attributes[tracing.OUTPUT_TOKENS] == 20
    assert {s.trace_id for s in mine} == {trace_id}


def test_a_cached_verdict_is_traced_as_cached_without_a_call(
    judge: FakeOpenAI, tmp_path: Path, caller_tracer: trace.Tracer
) -> None:
    rubric = {"name": "helpful", "type": "judge", "params": {"rubric": "Is it helpful?"}}
    with OtlpReceiver() as otlp, Replicas(1, _traced_env(judge, otlp, tmp_path)) as replicas:
        with Client(replicas.addresses[0]) as client:
            client.score("same", checks=[rubric])
            with caller_tracer.start_as_current_span("second") as second:
                client.score("same", checks=[rubric])
        trace_id = f"{second.get_span_context().trace_id:032x}"
        spans = otlp.wait_for(
            lambda got: any(s.name.startswith("judge ") for s in _in_trace(got, trace_id)),
            "the cached ask's span",
        )
    mine = _in_trace(spans, trace_id)
    ask = next(s for s in mine if s.name.startswith("judge "))
    assert ask.attributes[tracing.CACHED] is True and ask.attributes[tracing.COST_USD] == 0
    assert not any(s.name.startswith("chat ") for s in mine) and judge.calls == 1


def test_without_an_endpoint_tracing_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    assert start_tracing() is None and tracing.ENABLED is False
    with tracing.span("x") as current:
        assert not current.is_recording()  # the no-op span: nothing is made


def test_an_unsupported_otlp_protocol_is_a_start_up_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    with pytest.raises(StartupError, match="OTLP/gRPC only"):
        start_tracing()


def test_the_server_refuses_to_start_with_an_unsupported_protocol(
    judge: FakeOpenAI, tmp_path: Path
) -> None:
    env = dict(os.environ, **replica_env(judge, "memory://", tmp_path))
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:4317"
    env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf"
    done = subprocess.run(
        [SCOREWIRE, "serve", "--port", "0"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0 and "OTLP/gRPC only" in done.stderr
    assert "Traceback" not in done.stderr
