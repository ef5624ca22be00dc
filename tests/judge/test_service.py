"""The judge service end to end: real SDKs against the protocol stand-ins on loopback."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.engine.execute import run_check
from scorewire.judge import JudgeService
from scorewire.judge.answers import CEILING_NOTE
from scorewire.settings import Settings

from tests.fakes.base import Reply
from tests.support.judge import (
    ANTHROPIC_KEY,
    OPENAI_KEY,
    compile_spec,
    judge_harness,
    level_reply,
    verdict,
)
from tests.support.wait import wait_until_async

GPT_4O_MINI_COST = (100 * 0.15 + 20 * 0.60) / 1e6  # the stand-in's default usage


def judge_check(**params: object):  # type: ignore[no-untyped-def]
    return compile_spec("judge", {"rubric": "Is it polite?", **params})


# --- wire protocol --------------------------------------------------------------------------


async def test_openai_request_asks_for_a_json_schema_verdict_at_temperature_0() -> None:
    async with judge_harness() as h:
        score = await h.run(judge_check(max_tokens=300), Sample("s", input="Hi?"), Output("Hello"))
        body = h.openai.requests[0].body
        assert score.error is None and score.value == 0.75 and score.passed
        assert score.cost_usd == pytest.approx(GPT_4O_MINI_COST) and not score.cached
        assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0
        assert body["max_tokens"] == 300
        assert body["response_format"]["type"] == "json_schema"
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
        user = body["messages"][1]["content"]
        assert "<input>\nHi?\n</input>" in user and "<output>\nHello\n</output>" in user


async def test_both_requests_are_json_with_a_json_content_type() -> None:
    # the OpenAI body goes to the SDK already encoded: the wire must not tell
    async with judge_harness() as h:
        await h.run(judge_check(), output=Output('café \u2028 \x01 "q"'))
        await h.run(judge_check(model="anthropic:claude-haiku-4-5"))
        sent = [h.openai.requests[0], h.anthropic.requests[0]]
        for r in sent:
            assert r.headers["content-type"] == "application/json"
            assert r.headers["content-length"] and isinstance(r.body, dict)
        user = sent[0].body["messages"][1]["content"]
        assert 'café \u2028 \x01 "q"' in user


async def test_anthropic_request_has_no_sampling_parameters() -> None:
    # API 2026-10-21 rejects temperature/top_p/top_k; the stand-in does too
    async with judge_harness() as h:
        h.anthropic.script(level_reply(5, input_tokens=1000, output_tokens=100))
        score = await h.run(judge_check(model="anthropic:claude-haiku-4-5"))
        body = h.anthropic.requests[0].body
        assert score.error is None and score.value == 1.0
        assert score.cost_usd == pytest.approx((1000 * 1.0 + 100 * 5.0) / 1e6)
        assert "temperature" not in body and body["system"] and body["max_tokens"] == 1024
        assert h.openai.calls == 0


async def test_json_schema_rejected_falls_back_to_json_object_once() -> None:
    # a server without structured outputs gets json_object; the fallback is remembered
    async with judge_harness(reject_json_schema=True) as h:
        first = await h.run(judge_check(), output=Output("a"))
        second = await h.run(judge_check(), output=Output("b"))
        formats = [r.body.get("response_format", {}).get("type") for r in h.openai.requests]
        assert first.error is None and second.error is None
        assert formats == ["json_schema", "json_object", "json_object"]


async def test_unpriced_model_is_flagged_not_guessed() -> None:
    async with judge_harness() as h:
        score = await h.run(judge_check(model="openai:my-local-llama"))
        assert score.error is None and score.unpriced and score.cost_usd == 0.0
        assert h.service.stats.unpriced_calls == 1


async def test_missing_usage_costs_the_ceiling_as_an_upper_bound() -> None:
    # a server that reports no token usage: the cost is at most the call's ceiling, which
    # is what the score says, with or without a budget (changed deliberately: it said $0
    # and `unpriced`, which means the model has no price)
    async with judge_harness() as h:
        h.openai.script(Reply(content=verdict(4), input_tokens=None, output_tokens=None))
        score = await h.run(judge_check())
        assert score.error is None and not score.unpriced
        assert score.cost_usd >= 1024 * 0.60 / 1e6  # gpt-4o-mini: all of max_tokens at least
        assert score.reason.endswith(CEILING_NOTE)


# --- routing --------------------------------------------------------------------------------


@pytest.fixture
def no_sdk_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


async def test_auto_picks_the_backend_with_credentials(no_sdk_env: None) -> None:
    # no OpenAI credentials: auto lands on Anthropic with its default model
    async with judge_harness(openai_api_key=None, openai_base_url=None, judge_model="auto") as h:
        h.anthropic.script(level_reply(4))
        score = await h.run(judge_check())
        assert score.error is None and h.anthropic.calls == 1
        assert h.anthropic.requests[0].body["model"] == "claude-haiku-4-5"
        assert h.service.describe() == "anthropic:claude-haiku-4-5"


async def test_sdk_environment_variables_are_the_fallback(
    no_sdk_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # OPENAI_API_KEY / OPENAI_BASE_URL are read when the SCOREWIRE_ settings are unset
    async with judge_harness() as h:
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", h.openai.url)
        svc = JudgeService.from_settings(Settings(judge_model="openai:gpt-4o-mini"))
        try:
            score = await run_check(judge_check(), Sample(), Output("x"), CheckContext(judge=svc))
        finally:
            await svc.aclose()
        assert score.error is None and h.openai.calls == 1


async def test_no_credentials_at_all_is_a_judge_error(no_sdk_env: None) -> None:
    svc = JudgeService.from_settings(Settings())
    try:
        score = await run_check(judge_check(), Sample(), Output("x"), CheckContext(judge=svc))
    finally:
        await svc.aclose()
    assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
    assert score.reason.startswith("no judge is configured")


async def test_unconfigured_backend_is_a_judge_error(no_sdk_env: None) -> None:
    async with judge_harness(anthropic_api_key=None) as h:
        score = await h.run(judge_check(model="anthropic:claude-haiku-4-5"))
        assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
        assert "SCOREWIRE_ANTHROPIC_API_KEY" in score.reason


# --- bad answers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        # out of range for the scale
        (Reply(content=verdict(9)), "outside the scale 1..5"),
        # prose, not JSON
        (Reply(content="I think it is a 4."), "not valid JSON"),
        # cut off at max_tokens
        (Reply(content='{"reasoning": "long', finish="length"), "cut off at max_tokens"),
        # a refusal
        (Reply(refusal="I can't help with that."), "refused to answer"),
    ],
)
async def test_invalid_verdict_is_an_error_whose_cost_counts_and_is_not_cached(
    reply: Reply, reason: str
) -> None:
    async with judge_harness() as h:
        h.openai.script(reply)
        first = await h.run(judge_check())
        again = await h.run(judge_check())  # the default reply is a valid verdict
        assert first.error is not None and first.error.code == ErrorCode.INVALID_VERDICT
        assert reason in first.reason and not first.passed and first.value == 0.0
        assert first.cost_usd == pytest.approx(GPT_4O_MINI_COST)
        assert again.error is None and not again.cached and h.openai.calls == 2


async def test_anthropic_refusal_is_an_invalid_verdict() -> None:
    async with judge_harness() as h:
        h.anthropic.script(Reply(refusal="No."))
        score = await h.run(judge_check(model="anthropic:claude-haiku-4-5"))
        assert score.error is not None and score.error.code == ErrorCode.INVALID_VERDICT


async def test_malformed_response_body_is_a_judge_error_not_retried() -> None:
    async with judge_harness() as h:
        h.openai.script(Reply(raw_body='{"id": "x", "choices": [ {oops'))
        score = await h.run(judge_check())
        assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
        assert "malformed response" in score.reason and h.openai.calls == 1


# --- retries --------------------------------------------------------------------------------


async def test_429_retry_after_is_honoured() -> None:
    async with judge_harness() as h:
        h.openai.script(Reply(status=429, headers={"retry-after": "2"}))
        score = await h.run(judge_check())
        assert score.error is None and h.openai.calls == 2
        assert len(h.sleeps) == 1 and 2.0 <= h.sleeps[0] <= 2.2
        assert h.service.stats.retries == 1


async def test_retry_after_ms_is_honoured() -> None:
    async with judge_harness() as h:
        h.anthropic.script(Reply(status=429, headers={"retry-after-ms": "1500"}), level_reply(4))
        score = await h.run(judge_check(model="anthropic:claude-haiku-4-5"))
        assert score.error is None and h.sleeps and h.sleeps[0] >= 1.5


async def test_5xx_is_retried_with_growing_backoff() -> None:
    # two 5xx (one Anthropic-style 529 overloaded) then success
    async with judge_harness(judge_retry_base_s=0.1) as h:
        h.openai.script(Reply(status=500), Reply(status=503))
        score = await h.run(judge_check())
        assert score.error is None and h.openai.calls == 3
        assert 0.05 <= h.sleeps[0] <= 0.1 and 0.1 <= h.sleeps[1] <= 0.2
        h.anthropic.script(Reply(status=529), level_reply(4))
        score = await h.run(judge_check(model="anthropic:claude-haiku-4-5"))
        assert score.error is None and h.anthropic.calls == 2


async def test_retries_are_bounded_and_the_failure_is_not_cached() -> None:
    async with judge_harness(judge_max_retries=2) as h:
        h.openai.script(*[Reply(status=500)] * 3)
        failed = await h.run(judge_check())
        assert failed.error is not None and failed.error.code == ErrorCode.JUDGE_ERROR
        assert "HTTP 500" in failed.reason and "after 3 attempts" in failed.reason
        assert h.openai.calls == 3 and failed.cost_usd == 0.0
        again = await h.run(judge_check())
        assert again.error is None and not again.cached and h.openai.calls == 4


async def test_client_errors_are_not_retried() -> None:
    async with judge_harness() as h:
        h.openai.script(Reply(status=404))
        score = await h.run(judge_check())
        assert score.error is not None and "HTTP 404" in score.reason and h.openai.calls == 1


async def test_retry_after_beyond_the_limit_gives_up_at_once() -> None:
    async with judge_harness(judge_retry_max_s=5) as h:
        h.openai.script(Reply(status=429, headers={"retry-after": "60"}))
        score = await h.run(judge_check())
        assert score.error is not None and "asked to wait 60 s" in score.reason
        assert h.openai.calls == 1 and not h.sleeps


async def test_sdk_retries_are_off_so_ours_are_the_only_ones() -> None:
    # one 500 and no retries configured: exactly one request reaches the server
    async with judge_harness(judge_max_retries=0) as h:
        h.openai.script(Reply(status=500))
        h.anthropic.script(Reply(status=500))
        await h.run(judge_check())
        await h.run(judge_check(model="anthropic:claude-haiku-4-5"))
        assert h.openai.calls == 1 and h.anthropic.calls == 1


@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"])
async def test_a_dropped_connection_says_so_and_is_retried(model: str) -> None:
    # the server closes every connection without answering: not a timeout
    seen: list[int] = []

    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        seen.append(1)
        writer.close()

    server = await asyncio.start_server(drop, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        async with judge_harness(
            judge_max_retries=1, openai_base_url=f"{url}/v1", anthropic_base_url=url
        ) as h:
            score = await h.run(judge_check(model=model))
        assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
        assert "could not reach the" in score.reason and "timed out" not in score.reason
        assert len(seen) == 2  # retried once
    finally:
        server.close()


async def test_a_hanging_server_times_out_and_is_retried() -> None:
    # 1 s a call, not less: on a busy machine a shorter timeout can end the retry before
    # its request reaches the stand-in, which then counts one call (a clean-clone run did)
    async with judge_harness(judge_timeout_s=1.0, judge_max_retries=1) as h:
        h.openai.script(Reply(hang=True), Reply(hang=True))
        score = await h.run(judge_check())
        assert score.error is not None and "timed out" in score.reason
        assert h.openai.calls == 2 and h.service.stats.in_flight == 0


async def test_the_deadline_bounds_the_judge_call() -> None:
    # a request deadline shorter than the judge timeout ends the call at the deadline
    async with judge_harness(judge_timeout_s=30) as h:
        h.openai.script(Reply(hang=True))
        ctx = h.ctx(deadline=time.monotonic() + 0.3)
        score = await h.run(judge_check(), ctx=ctx)
        assert score.error is not None
        assert score.error.code in (ErrorCode.DEADLINE_EXCEEDED, ErrorCode.JUDGE_ERROR)
        assert h.openai.calls == 1 and h.service.stats.in_flight == 0


async def test_no_retry_is_started_that_cannot_finish_before_the_deadline() -> None:
    async with judge_harness(real_sleep=True) as h:
        h.openai.script(Reply(status=429, headers={"retry-after": "5"}))
        ctx = h.ctx(deadline=time.monotonic() + 2)
        score = await h.run(judge_check(), ctx=ctx)
        assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
        assert "before the deadline" in score.reason and h.openai.calls == 1


async def test_cancelling_the_check_stops_the_call_and_its_retries() -> None:
    async with judge_harness(judge_timeout_s=30) as h:
        h.openai.script(Reply(hang=True))
        task = asyncio.create_task(h.run(judge_check()))
        await wait_until_async(lambda: h.openai.calls, "the request to reach the judge")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_until_async(lambda: h.service.stats.in_flight == 0, "no judge call in flight")
        await asyncio.sleep(0.1)  # not a wait but the observation: a retry would come meanwhile
        assert h.openai.calls == 1
        assert not h.service._flights


# --- single flight --------------------------------------------------------------------------


async def test_identical_checks_in_flight_make_one_call() -> None:
    async with judge_harness(openai_default=level_reply(4, delay_s=0.05)) as h:
        check = judge_check()
        scores = await asyncio.gather(*(h.run(check) for _ in range(100)))
        assert h.openai.calls == 1
        assert all(s.error is None and s.value == 0.75 for s in scores)
        paid = [s for s in scores if s.cost_usd > 0]
        assert len(paid) == 1 and not paid[0].cached
        assert sum(s.cached for s in scores) == 99
        assert h.service.stats.shared_calls == 99


async def test_a_cancelled_waiter_does_not_cancel_the_shared_call() -> None:
    async with judge_harness(openai_default=level_reply(4, delay_s=0.2)) as h:
        check = judge_check()
        leader = asyncio.create_task(h.run(check))
        follower = asyncio.create_task(h.run(check))
        await wait_until_async(lambda: h.openai.calls, "the shared call to reach the judge")
        leader.cancel()
        score = await follower
        assert score.error is None and h.openai.calls == 1


async def test_a_failed_shared_call_gives_every_waiter_the_error_once() -> None:
    async with judge_harness(judge_max_retries=0) as h:
        h.openai.script(Reply(status=500, delay_s=0.05))
        scores = await asyncio.gather(*(h.run(judge_check()) for _ in range(5)))
        assert h.openai.calls == 1
        assert all(s.error is not None and s.error.code == ErrorCode.JUDGE_ERROR for s in scores)


# --- credentials ----------------------------------------------------------------------------

WRONG_OPENAI = "sk-WRONG-openai-key-do-not-leak-1234"
WRONG_ANTHROPIC = "sk-ant-WRONG-anthropic-key-do-not-leak-5678"


async def test_credentials_never_appear_in_reasons_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the stand-ins answer 401 with the presented key in the message, as real APIs do
    caplog.set_level(logging.DEBUG)
    async with judge_harness(openai_api_key=WRONG_OPENAI, anthropic_api_key=WRONG_ANTHROPIC) as h:
        scores = [
            await h.run(judge_check()),
            await h.run(judge_check(model="anthropic:claude-haiku-4-5")),
        ]
        h.openai.api_key = None  # now accept anything, to log a success too
        scores.append(await h.run(judge_check(), output=Output("other")))
        text = caplog.text + " ".join(s.reason for s in scores)
        text += repr(h.service.stats.snapshot()) + h.service.describe()
    assert scores[0].error is not None and "HTTP 401" in scores[0].reason
    assert scores[1].error is not None and "HTTP 401" in scores[1].reason
    for secret in (WRONG_OPENAI, WRONG_ANTHROPIC, OPENAI_KEY, ANTHROPIC_KEY, "WRONG", "leak"):
        assert secret not in text
    assert caplog.records  # the SDKs and httpx did log at DEBUG: the check is not vacuous


# --- limits and configuration ---------------------------------------------------------------


async def test_concurrency_is_bounded_per_backend() -> None:
    async with judge_harness(judge_concurrency=4, openai_default=level_reply(4, delay_s=0.05)) as h:
        check = judge_check()
        scores = await asyncio.gather(*(h.run(check, output=Output(f"o{i}")) for i in range(20)))
        assert all(s.error is None for s in scores) and h.openai.calls == 20
        assert h.openai.max_in_flight <= 4


async def test_every_call_the_concurrency_allows_is_in_flight_at_once() -> None:
    # the HTTP pool must not be smaller than judge_concurrency and queue calls behind it
    slow = level_reply(4, delay_s=30)
    async with judge_harness(judge_concurrency=40, judge_timeout_s=60, openai_default=slow) as h:
        check = judge_check()
        tasks = [asyncio.create_task(h.run(check, output=Output(f"o{i}"))) for i in range(45)]
        try:
            await wait_until_async(lambda: h.openai.in_flight >= 40, "40 requests in flight")
            assert h.openai.max_in_flight == 40
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_keyless_openai_compatible_server_needs_only_a_base_url(no_sdk_env: None) -> None:
    # vLLM / Ollama style: no API key configured, only the base URL
    async with judge_harness(openai_api_key=None) as h:
        h.openai.api_key = None
        score = await h.run(judge_check())
        assert score.error is None and h.openai.calls == 1


async def test_a_budget_of_the_wrong_type_is_an_error_not_ignored() -> None:
    # a float on ctx.budget would otherwise silently mean "no limit"
    async with judge_harness() as h:
        ctx = CheckContext(judge=h.service, budget=1.0)
        score = await h.run(judge_check(), ctx=ctx)
        assert score.error is not None and score.error.code == ErrorCode.CHECK_FAILED
        assert h.openai.calls == 0


def test_a_redis_password_is_not_in_the_cache_description() -> None:
    from scorewire.judge.cache import VerdictCache
    from scorewire.judge.stats import JudgeStats

    cache = VerdictCache.from_url("redis://:hunter2@127.0.0.1:6390/3", stats=JudgeStats())
    assert "hunter2" not in cache.description and cache.description.endswith(":6390/3")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("memcached://x", "memory:// or redis://"),  # unsupported store
        ("redis://127.0.0.1:6379/zero", "must be a number"),  # bad database
    ],
)
def test_an_unusable_cache_url_fails_at_start_up(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        JudgeService.from_settings(Settings(cache_url=url))


def test_an_unusable_default_model_fails_at_start_up() -> None:
    with pytest.raises(ValueError, match="unknown judge backend"):
        JudgeService.from_settings(Settings(judge_model="bogus:model"))


async def test_stats_listeners_see_every_change_with_labels() -> None:
    # the hook a metrics exporter subscribes to: counters with backend/model labels
    async with judge_harness() as h:
        events: list[tuple[str, float, dict[str, str]]] = []
        h.service.stats.subscribe(
            lambda name, amount, labels: events.append((name, amount, dict(labels)))
        )
        await h.run(judge_check())
        await h.run(judge_check())
        names = [e[0] for e in events]
        labels = {"backend": "openai", "model": "gpt-4o-mini"}
        assert ("calls", 1, labels) in events and ("cost_usd", GPT_4O_MINI_COST, labels) in events
        assert [a for n, a, _ in events if n == "in_flight"] == [1, -1]
        assert names.count("cache_misses") == 1 and names.count("cache_hits") == 1
        assert h.service.stats.snapshot()["in_flight"] == 0


async def test_a_broken_listener_does_not_break_scoring() -> None:
    async with judge_harness() as h:

        def broken(name: str, amount: float, labels: object) -> None:
            raise RuntimeError("exporter bug")

        h.service.stats.subscribe(broken)
        score = await h.run(judge_check())
        assert score.error is None and h.service.stats.calls == 1


async def test_closing_the_service_ends_a_check_whose_flight_never_started() -> None:
    # aclose cancels a flight whose task has not run a step yet: the check waiting on
    # it must end too, not wait forever on a verdict nobody will bring.
    async with judge_harness(judge_timeout_s=30) as h:
        h.openai.script(Reply(hang=True))
        check = asyncio.create_task(h.run(judge_check()))
        await asyncio.sleep(0)  # the check asked; its flight's task is only scheduled
        assert h.service._flights, "the check should be waiting on a flight"
        await h.service.aclose()
        done, _ = await asyncio.wait({check}, timeout=5)
        assert done, "the check still waits on a flight that was cancelled"
        assert h.openai.calls == 0
