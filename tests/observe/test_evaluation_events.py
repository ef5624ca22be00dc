"""`gen_ai.evaluation.result` events: each score of online evaluation, over real OTLP.

A real server scores observations (SQLite queue and run store) with the emitter started
as the server starts it, exporting over OTLP/gRPC to the test's receiver (the collector's
LogsService, `tests.support.otlp`); the events must carry the caller's trace id and span
id and the conventions' attributes.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from prometheus_client import CollectorRegistry
from scorewire.core.model import Score
from scorewire.engine.runner import CaseResult
from scorewire.metrics.observe import ObserveMetrics
from scorewire.observe import evaluation_events as ev
from scorewire.observe.queue import SqliteQueue
from scorewire.observe.rules import parse_rules
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.server.otlp import tracing_endpoint
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import observe_pb2_grpc

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.observe.servers import observation, observe_server
from tests.support.otlp import OtlpReceiver, ReceivedLog
from tests.support.servers import serve_process, stop_process
from tests.support.wait import wait_until_async

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
RULES = {
    "rules": [
        {
            "name": "answers",
            "compact": ["contains:Paris", "json_valid"],
            # no judge on this server: the judge check scores an error state
            "checks": [{"name": "polite", "type": "judge", "rubric": "Is it polite?"}],
        }
    ]
}


@pytest.fixture
def otlp(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpReceiver]:
    """A receiver the environment points OTLP at, exporting within 0.1 s."""
    with OtlpReceiver() as receiver:
        for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_BLRP_SCHEDULE_DELAY", "100")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "scorewire-under-test")
        yield receiver


async def _scored(tmp_path: Path, obs: opb.Observation, events: ev.EvaluationEvents | None) -> Any:
    """Observe `obs` on a real server with `events` installed; the rule's recorded results."""
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    queue = SqliteQueue(tmp_path / "observe.db", max_depth=100)
    await queue.start()
    ev.install(events)
    try:
        async with observe_server(queue, parse_rules(RULES), runs=store) as srv:
            await srv.observe.Observe(opb.ObserveRequest(observations=[obs]))

            async def scored() -> float | None:
                n = srv.metric("scorewire_observe_scored_total", rule="answers", outcome="fail")
                return n or None

            return await wait_until_async(scored, "the observation scored")
    finally:
        ev.install(None)
        if events is not None:
            await events.aclose()
        await queue.close()


async def _logs(otlp: OtlpReceiver, n: int) -> list[ReceivedLog]:
    async def arrived() -> list[ReceivedLog] | None:
        got = otlp.logs()
        return got if len(got) >= n else None

    return await wait_until_async(arrived, f"{n} evaluation events")


async def test_each_score_is_an_evaluation_event_under_the_callers_span(
    otlp: OtlpReceiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one event per check, in the caller's trace and parented to its span, with the
    # conventions' attributes and scorewire's extras (explanations asked for)
    obs = observation("Paris", trace=TRACE, oid="obs-1")
    obs.trace.span_id = SPAN
    obs.metadata.labels["gen_ai.response.id"] = "chatcmpl-42"
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    events = ev.start_evaluation_events(tracing_endpoint(), judge_model="openai:gpt-4o-mini")
    assert events is not None
    await _scored(tmp_path, obs, events)
    got = {r.attributes["gen_ai.evaluation.name"]: r for r in await _logs(otlp, 3)}
    assert sorted(got) == ["contains:Paris", "json_valid", "polite"]
    for record in got.values():
        assert record.event_name == "gen_ai.evaluation.result"
        assert (record.trace_id, record.span_id) == (TRACE, SPAN)
        assert record.service == "scorewire-under-test"
        assert record.attributes["gen_ai.response.id"] == "chatcmpl-42"
        assert record.attributes["scorewire.observe.rule"] == "answers"
        assert record.attributes["scorewire.observation.id"] == "obs-1"
    passed = got["contains:Paris"].attributes
    assert passed["gen_ai.evaluation.score.value"] == 1.0
    assert passed["gen_ai.evaluation.score.label"] == "pass"
    assert passed["scorewire.check.type"] == "contains"
    assert passed["gen_ai.evaluation.explanation"] == "found all 1 needle"
    assert "error.type" not in passed and "scorewire.judge.model" not in passed
    failed = got["json_valid"].attributes
    assert failed["gen_ai.evaluation.score.value"] == 0.0
    assert failed["gen_ai.evaluation.score.label"] == "fail"


async def test_a_check_that_could_not_score_sets_error_type_and_no_score(
    otlp: OtlpReceiver, tmp_path: Path
) -> None:
    # an error is a state of its own: error.type is its code; no value, no pass/fail label
    obs = observation("Paris", trace=TRACE)
    events = ev.start_evaluation_events(tracing_endpoint(), judge_model="openai:gpt-4o-mini")
    await _scored(tmp_path, obs, events)
    (judge,) = [
        r for r in await _logs(otlp, 3) if r.attributes["gen_ai.evaluation.name"] == "polite"
    ]
    assert judge.attributes["error.type"] == "JUDGE_ERROR"
    assert "gen_ai.evaluation.score.value" not in judge.attributes
    assert "gen_ai.evaluation.score.label" not in judge.attributes
    assert judge.attributes["scorewire.check.type"] == "judge"
    assert judge.attributes["scorewire.judge.model"] == "openai:gpt-4o-mini"
    assert judge.attributes["scorewire.cost_usd"] == 0.0
    # reasons may quote the output: not sent unless asked for
    assert "gen_ai.evaluation.explanation" not in judge.attributes
    # no span id given: the caller's trace, no parent span
    assert (judge.trace_id, judge.span_id) == (TRACE, "")


async def test_nothing_is_sent_when_otlp_is_off(
    otlp: OtlpReceiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no endpoint (tracing off), or the logs exporter turned off: no emitter at all
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "none")
    assert ev.start_evaluation_events(tracing_endpoint()) is None
    monkeypatch.delenv("OTEL_LOGS_EXPORTER")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
    events = ev.start_evaluation_events(tracing_endpoint())
    assert events is None
    await _scored(tmp_path, observation("Paris", trace=TRACE), events)
    await asyncio.sleep(0.5)  # five export intervals
    assert otlp.logs() == []


class _Broken:
    def get_logger(self, name: str) -> Any:
        return self

    def emit(self, **record: Any) -> None:
        raise RuntimeError("the SDK failed")

    def shutdown(self) -> None:
        pass


async def test_an_emitter_that_fails_never_fails_the_consumer(tmp_path: Path) -> None:
    # the scores are recorded and counted once, whatever becomes of their events
    assert await _scored(tmp_path, observation("Paris"), ev.EvaluationEvents(_Broken())) == 1


def test_emitting_to_an_endpoint_that_never_answers_neither_blocks_nor_grows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bounded and non-blocking: the consumer's hand-off returns at once, and 6,000 events
    # built into the SDK's queue of 200 leave it at its bound (the oldest dropped)
    monkeypatch.setenv("OTEL_BLRP_MAX_QUEUE_SIZE", "200")
    monkeypatch.setenv("OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", "200")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")  # seconds: shutdown gives up soon
    events = ev.start_evaluation_events("http://127.0.0.1:9")  # nothing listens there
    assert events is not None
    rule = parse_rules(RULES)[0]
    scored = [(observation("Paris", trace=TRACE), _result())] * 2_000
    try:
        started = time.perf_counter()
        for _ in range(3):
            events.submit(rule, scored)
        took = time.perf_counter() - started
        events.emit(rule, scored)
        # the SDK's batch queue (a bounded deque; internal to the pinned SDK version)
        (processor,) = events._provider._multi_log_record_processor._log_record_processors
        assert len(processor._batch_processor._queue) <= 200
    finally:
        events.close()
    assert took < 0.5, took  # three hand-offs, no record built (building 6,000 takes ~0.5 s)


class _Slow(_Broken):
    def emit(self, **record: Any) -> None:
        time.sleep(0.05)


def test_a_full_hand_off_drops_and_counts_instead_of_waiting() -> None:
    # the emitting thread is behind: further batches are dropped and counted, not queued
    registry = CollectorRegistry()
    counter = ObserveMetrics(registry).events_dropped
    events = ev.EvaluationEvents(_Slow(), pending=1, dropped_counter=counter)
    rule = parse_rules(RULES)[0]
    scored = [(observation("Paris"), _result())]
    try:
        for _ in range(10):
            events.submit(rule, scored)
        assert 8 <= events.dropped <= 9  # one being emitted (perhaps), one waiting
        dropped = registry.get_sample_value("scorewire_observe_events_dropped_total")
        assert dropped == events.dropped
    finally:
        events.close()


def _result() -> CaseResult:
    return CaseResult(0, "s", [Score(1.0, True, "ok"), Score(0.0, False), Score(0.0, False)])


def test_a_served_process_sends_the_events_of_a_judge_rule(tmp_path: Path) -> None:
    # `scorewire serve` as deployed: OTLP on from the environment, a judge rule from the
    # rules file; the judge check's event names the judge model and what it cost
    state = tmp_path / "state"
    state.mkdir()
    (state / "rules.yaml").write_text(
        "rules:\n  - name: polite\n    checks: [{name: polite, type: judge, rubric: Polite}]\n",
        encoding="utf-8",
    )
    fake = FakeOpenAI(default=Reply(content=json.dumps({"reasoning": "kind", "score": 5})))
    with fake.running(), OtlpReceiver() as otlp:
        env = {
            "SCOREWIRE_STATE_DIR": str(state),
            "SCOREWIRE_OBSERVE_RULES_FILE": "rules.yaml",
            "SCOREWIRE_OPENAI_BASE_URL": fake.url,
            "SCOREWIRE_OPENAI_API_KEY": "sk-test",
            "SCOREWIRE_JUDGE_MODEL": "openai:gpt-4o-mini",
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint,
            "OTEL_BLRP_SCHEDULE_DELAY": "100",
        }
        proc, address = serve_process(env)
        try:
            obs = observation("Thank you kindly.", trace=TRACE)
            obs.trace.span_id = SPAN
            with grpc.insecure_channel(address) as channel:
                stub = observe_pb2_grpc.ObserveServiceStub(channel)
                stub.Observe(opb.ObserveRequest(observations=[obs]), timeout=10)
            (event,) = otlp.wait_for_logs(bool, "the judge check's event")
        finally:
            stop_process(proc)
    assert event.event_name == "gen_ai.evaluation.result" and event.service == "scorewire"
    assert (event.trace_id, event.span_id) == (TRACE, SPAN)
    assert event.attributes["gen_ai.evaluation.name"] == "polite"
    assert event.attributes["gen_ai.evaluation.score.label"] == "pass"
    assert event.attributes["scorewire.judge.model"] == "openai:gpt-4o-mini"
    assert event.attributes["scorewire.cost_usd"] > 0
