"""Many processes, one service: budgets and single flight shared through a real Redis.

Real `scorewire serve` processes (`tests.support.shared_replicas`) share one redis-server and
the stand-in judge, which counts the upstream calls. Before this, a server-wide budget
of $0.0035 spent $0.0070 across two servers or `--workers 2` (2.00×): each process kept
its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from scorewire.judge.pricing import PriceTable
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.components import require_binary
from tests.support.pki import pki  # noqa: F401 - fixture
from tests.support.redis import RedisServer, redis_server  # noqa: F401 - fixture
from tests.support.servers import free_port, read_line_until
from tests.support.shared_replicas import REPLICA_KEY, Replicas, replica_env
from tests.support.wait import wait_until

JUDGE = pb.CheckSpec(name="helpful", type="judge", params={"rubric": "Is the answer helpful?"})
LIMIT = 0.0035
"""The server-wide budget of the finding: $0.0035 spent $0.0070 over two processes."""
# Each call reports nearly its ceiling, so $0.0035 holds four calls, and a per-process
# budget would let each process make four.
NEAR_CEILING = Reply(
    content=json.dumps({"reasoning": "r", "score": 5}), input_tokens=1300, output_tokens=1024
)
CALL_COST = PriceTable().cost("gpt-4o-mini", 1300, 1024) or 0.0


@pytest.fixture
def judge() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(default=NEAR_CEILING, api_key=REPLICA_KEY)
    with fake.running():
        yield fake


def _score(stub: Any, text: str, **kw: Any) -> pb.ScoreResponse:
    req = pb.ScoreRequest(output=pb.Output(text=text), checks=[JUDGE])
    return stub.Score(req, timeout=60, **kw)


def _spread(stubs: list[Any], texts: list[str]) -> list[pb.ScoreResponse]:
    """Send one Score per text at once, round-robin over `stubs`."""
    with ThreadPoolExecutor(len(texts)) as pool:
        futures = [pool.submit(_score, stubs[i % len(stubs)], t) for i, t in enumerate(texts)]
        return [f.result() for f in futures]


def _spent_in_redis(url: str) -> float:
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        keys = client.keys("scorewire:budget:{b}:server:*:spent")
        return sum(float(client.get(k) or 0) for k in keys)
    finally:
        client.close()


def _codes(responses: list[pb.ScoreResponse]) -> list[str]:
    return [r.scores[0].error.code if r.scores[0].HasField("error") else "" for r in responses]


def test_two_replicas_never_spend_beyond_one_server_budget(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    # 16 different judge checks at once over two replicas with a $0.0035 server-wide
    # budget: four calls' worth. Before: each replica spent its own $0.0035 (2.00×).
    env = replica_env(judge, redis_server.url, tmp_path, judge_budget_usd=str(LIMIT))
    with Replicas(2, env) as replicas:
        responses = _spread(replicas.stubs(), [f"answer {i}" for i in range(16)])
    codes = _codes(responses)
    assert judge.calls * CALL_COST <= LIMIT  # the documented bound: the limit itself
    assert judge.calls == 4 and codes.count("") == 4
    assert codes.count("BUDGET_EXHAUSTED") == 12
    spent = sum(r.scores[0].cost_usd for r in responses)
    assert _spent_in_redis(redis_server.url) == pytest.approx(spent) and spent <= LIMIT


def _scores_served(metrics_port: int) -> float:
    """Score calls a worker has handled, from its own /metrics."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=2) as r:
            text = r.read().decode()
    except OSError:
        return -1.0  # not listening yet
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("grpc_server_handled_total{") and 'grpc_method="Score"' in line
    )


def _two_free_ports() -> int:
    """A port P with P + 1 free too (worker i serves /metrics on P + i)."""
    for _ in range(50):
        port = free_port()
        with contextlib.suppress(OSError), socket.socket() as s:
            s.bind(("127.0.0.1", port + 1))
            return port
    raise AssertionError("no two adjacent free ports")


def test_workers_2_share_the_server_budget(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    # `--workers 2` is two processes on one port: one budget between them (was 2.00×).
    metrics = _two_free_ports()
    env = replica_env(
        judge,
        redis_server.url,
        tmp_path,
        judge_budget_usd=str(LIMIT),
        metrics_enabled="true",
        metrics_port=str(metrics),
    )
    cheap = pb.ScoreRequest(output=pb.Output(text="x"), compact=["contains:x"])
    with Replicas(1, env, "--workers", "2", port=free_port()) as replicas:

        def both_serving() -> bool:
            # New connections until each worker has answered one (the kernel spreads
            # connections over the workers' SO_REUSEPORT sockets).
            scoring_pb2_grpc.ScoringServiceStub(replicas.channel(0)).Score(cheap, timeout=30)
            return min(_scores_served(metrics), _scores_served(metrics + 1)) > 0

        wait_until(both_serving, "both workers to answer a Score")
        before = (_scores_served(metrics), _scores_served(metrics + 1))
        stubs = [scoring_pb2_grpc.ScoringServiceStub(replicas.channel(0)) for _ in range(16)]
        responses = _spread(stubs, [f"worker answer {i}" for i in range(16)])
        after = (_scores_served(metrics), _scores_served(metrics + 1))
    assert after[0] > before[0] and after[1] > before[1]  # both workers took judge checks
    assert judge.calls == 4 and judge.calls * CALL_COST <= LIMIT
    assert _codes(responses).count("BUDGET_EXHAUSTED") == 12


def test_identical_checks_on_two_replicas_make_one_upstream_call(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    # The judge answers slowly, so every replica misses the cache at once: the lease
    # makes one call, the others wait for its verdict in the shared cache.
    judge.default = Reply(content=json.dumps({"reasoning": "r", "score": 5}), delay_s=1.0)
    env = replica_env(judge, redis_server.url, tmp_path)
    with Replicas(2, env) as replicas:
        responses = _spread(replicas.stubs(), ["the same output"] * 8)
    assert judge.calls == 1
    assert all(r.passed for r in responses)
    assert sum(r.scores[0].cost_usd > 0 for r in responses) == 1


def test_a_dead_lease_holder_does_not_block_the_call(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    # Replica 0 takes the lease and is killed mid-call; replica 1, asked the same, waits
    # single_flight_wait_s for a verdict that never comes, then calls anyway.
    judge.script(Reply(hang=True))
    env = replica_env(judge, redis_server.url, tmp_path, single_flight_wait_s="0.5")
    with Replicas(2, env) as replicas, ThreadPoolExecutor(1) as pool:
        stubs = replicas.stubs()
        doomed = pool.submit(_score, stubs[0], "asked twice")
        wait_until(lambda: judge.calls == 1, "replica 0's call to reach the judge")
        replicas.procs[0].kill()
        answer = _score(stubs[1], "asked twice")
        with pytest.raises(grpc.RpcError):
            doomed.result()
    assert answer.passed and judge.calls == 2


@contextlib.contextmanager
def _outage(redis: RedisServer, kind: str) -> Iterator[None]:
    """Redis stopped (connections refused) or frozen (open, never answering)."""
    if kind == "frozen":
        with redis.frozen():
            yield
        return
    redis.stop()
    try:
        yield
    finally:
        redis.start()


@pytest.mark.parametrize("outage", ["stopped", "frozen"])
def test_redis_down_refuses_budgeted_calls_with_budget_unavailable(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
    outage: str,
) -> None:
    # Fail closed: no budgeted call is made unmetered, and none passes; the refusal
    # comes within the budget's timeout (0.5 s; bound asserted 10 s), and once Redis
    # answers again so does the budget.
    env = replica_env(judge, redis_server.url, tmp_path, judge_budget_usd="1.0")
    with Replicas(1, env) as replicas:
        stub = replicas.stubs()[0]
        assert _score(stub, "before").passed
        with _outage(redis_server, outage):
            started = time.monotonic()
            down = _score(stub, "while redis is down")
            elapsed = time.monotonic() - started
        after = _score(stub, "after")
    assert down.scores[0].error.code == "BUDGET_UNAVAILABLE" and not down.passed
    assert "SCOREWIRE_BUDGET_FAIL_OPEN" in down.scores[0].reason and elapsed < 10.0
    assert after.passed and judge.calls == 2


def test_a_frozen_redis_cache_is_passed_by_then_found_again(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    # The verdict cache fails open: with Redis frozen a judge check is scored by a call
    # of its own, well within 10 s (the cache's timeout is 0.25 s), and once Redis runs
    # again the verdict cached before the freeze is found. (A failed cache is bypassed
    # for SCOREWIRE_CACHE_BACKOFF_S, 0 here so the next call shows it.)
    env = replica_env(judge, redis_server.url, tmp_path, cache_backoff_s="0")
    with Replicas(1, env) as replicas:
        stub = replicas.stubs()[0]
        assert _score(stub, "cached before").passed
        with redis_server.frozen():
            started = time.monotonic()
            down = _score(stub, "while redis is frozen")
            elapsed = time.monotonic() - started
        again = _score(stub, "cached before")
    assert down.passed and not down.scores[0].cached and elapsed < 10.0
    assert again.passed and again.scores[0].cached and judge.calls == 2


def test_redis_down_with_fail_open_meters_in_process(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    # Fail open: the call runs, held in the process's own copy of the budget, which
    # still refuses what does not fit ($0.0035: four calls).
    env = replica_env(
        judge,
        redis_server.url,
        tmp_path,
        judge_budget_usd=str(LIMIT),
        budget_fail_open="true",
    )
    with Replicas(1, env) as replicas:
        stub = replicas.stubs()[0]
        redis_server.stop()
        responses = [_score(stub, f"open {i}") for i in range(6)]
    codes = _codes(responses)
    assert codes.count("") == 4 and codes.count("BUDGET_EXHAUSTED") == 2
    assert judge.calls == 4


def test_leases_asked_of_a_frozen_redis_do_not_hold_up_the_calls_after(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    # A lease asked of a frozen Redis is taken when Redis resumes, after its call gave
    # up on it and went ahead without single flight. Before, nobody gave it back, so the
    # same verdicts asked again waited SCOREWIRE_SINGLE_FLIGHT_WAIT_S (30 s) for verdicts
    # that never came; now it is given back once Redis answers (a 10 s bound: 0.5 s
    # budget timeout).
    env = replica_env(judge, redis_server.url, tmp_path)
    texts = [f"asked while frozen {i}" for i in range(8)]
    with Replicas(1, env) as replicas:
        stub = replicas.stubs()[0]
        _spread([stub], [f"warm {i}" for i in range(8)])  # pooled connections to freeze
        with redis_server.frozen():
            frozen = _spread([stub], texts)
        started = time.monotonic()
        again = _spread([stub], texts)
        elapsed = time.monotonic() - started
    assert all(r.passed for r in frozen + again) and elapsed < 10.0


def test_holds_asked_of_a_frozen_redis_do_not_hold_the_budget_after(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    # A reserve sent to a frozen Redis runs when Redis resumes, after its call was
    # refused: the hold it makes is nobody's. Before, it held its money until
    # SCOREWIRE_BUDGET_RESERVATION_TTL_S (15 min), so a budget with room for one more
    # call made the first call after the outage wait; now the hold is taken back once
    # Redis answers. (Budgets in Redis, verdicts in process: the reserve is the call's
    # first Redis command, so it goes out on the open connection instead of a new one.)
    env = replica_env(
        judge,
        redis_server.url,
        tmp_path,
        cache_url="memory://",
        budget_url=redis_server.url,
        judge_budget_usd=str(2.5 * CALL_COST),
    )
    with Replicas(1, env) as replicas:
        stub = replicas.stubs()[0]
        assert _score(stub, "before").passed  # one call spent: room for one more
        wait_until(lambda: _spent_in_redis(redis_server.url) > 0, "the call settled")
        with redis_server.frozen():
            frozen = _score(stub, "while frozen")
        started = time.monotonic()
        after = _score(stub, "after")
        elapsed = time.monotonic() - started
    assert _codes([frozen]) == ["BUDGET_UNAVAILABLE"]
    assert after.passed and elapsed < 10.0 and judge.calls == 2


def test_an_acl_user_url_logs_in_as_that_user(judge: FakeOpenAI, tmp_path: Path) -> None:
    # The user name was dropped: `AUTH password` as `default`, which is off here.
    require_binary("redis-server", "redis-server")
    with RedisServer(users={"scorewire": "s3cret"}) as server:
        url = f"redis://scorewire:s3cret@127.0.0.1:{server.port}/0"
        env = replica_env(judge, url, tmp_path, judge_budget_usd="1.0")
        with Replicas(1, env) as replicas:
            stub = replicas.stubs()[0]
            first, second = _score(stub, "acl"), _score(stub, "acl")
        assert first.passed and not first.scores[0].cached
        assert second.scores[0].cached and judge.calls == 1  # the cache worked too
        assert _spent_in_redis(url) == pytest.approx(first.scores[0].cost_usd)


def test_a_rediss_url_with_a_ca_speaks_tls(
    judge: FakeOpenAI,
    tmp_path: Path,
    pki: dict[str, Any],  # noqa: F811
) -> None:
    require_binary("redis-server", "redis-server")
    with RedisServer(tls=pki) as server:
        env = replica_env(
            judge, server.url, tmp_path, judge_budget_usd="1.0", redis_tls_ca=str(pki["ca_path"])
        )
        with Replicas(1, env) as replicas:
            stub = replicas.stubs()[0]
            first, second = _score(stub, "tls"), _score(stub, "tls")
        assert first.passed and second.scores[0].cached and judge.calls == 1
        spent = redis.Redis.from_url(server.url, ssl_ca_certs=str(pki["ca_path"]))
        try:
            assert spent.keys("scorewire:budget:*")
        finally:
            spent.close()


def test_a_rediss_url_without_the_ca_is_not_trusted(
    judge: FakeOpenAI,
    tmp_path: Path,
    pki: dict[str, Any],  # noqa: F811
) -> None:
    # The test CA is not the system's: the certificate is refused, so the budget is
    # unavailable and the call is not made.
    require_binary("redis-server", "redis-server")
    with RedisServer(tls=pki) as server:
        env = replica_env(judge, server.url, tmp_path, judge_budget_usd="1.0")
        with Replicas(1, env) as replicas:
            resp = _score(replicas.stubs()[0], "untrusted")
    assert resp.scores[0].error.code == "BUDGET_UNAVAILABLE" and judge.calls == 0


@pytest.mark.parametrize(
    ("extra", "args", "why"),
    [({"replicas": "3"}, (), "SCOREWIRE_REPLICAS=3"), ({}, ("--workers", "2"), "--workers 2")],
)
def test_several_processes_on_sqlite_labels_warn_at_start_up(
    judge: FakeOpenAI,
    tmp_path: Path,
    extra: dict[str, str],
    args: tuple[str, ...],
    why: str,
) -> None:
    env = replica_env(judge, "memory://", tmp_path, **extra)
    port = free_port() if args else 0
    with Replicas(1, env, *args, port=port, stderr=subprocess.PIPE) as replicas:
        proc = replicas.procs[0]
        assert proc.stderr is not None
        line, _ = read_line_until(proc, proc.stderr, lambda s: "SQLite" in s, 15)
    assert line is not None and why in line and "SCOREWIRE_DATABASE_URL" in line
    assert "labels (" in line and ("runs (" in line) == ("REPLICAS" in why)
    # replicas each with an observe.db would score apart what each acknowledged
    assert ("observe queue (" in line) == ("SCOREWIRE_OBSERVE_QUEUE_URL" in line)
    assert ("observe queue (" in line) == ("REPLICAS" in why)


def test_one_process_on_sqlite_does_not_warn(judge: FakeOpenAI, tmp_path: Path) -> None:
    env = replica_env(judge, "memory://", tmp_path)
    with Replicas(1, env, stderr=subprocess.PIPE) as replicas:
        proc = replicas.procs[0]
        replicas.stop()
        assert proc.stderr is not None
        assert "SQLite" not in proc.stderr.read()


def test_a_run_id_shares_a_run_budget_over_replicas(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    # A batch sharded over replicas sends its run id; the run's $0.0035 holds across them.
    env = replica_env(judge, redis_server.url, tmp_path)
    run = (("scorewire-run-id", "batch-42"),)
    with Replicas(2, env) as replicas:
        stubs = replicas.stubs()
        req = [
            pb.ScoreRequest(output=pb.Output(text=f"run {i}"), checks=[JUDGE], budget_usd=LIMIT)
            for i in range(12)
        ]
        with ThreadPoolExecutor(12) as pool:
            futures = [
                pool.submit(stubs[i % 2].Score, r, timeout=60, metadata=run)
                for i, r in enumerate(req)
            ]
            responses = [f.result() for f in futures]
        # Another run has its own budget.
        fresh = pb.ScoreRequest(output=pb.Output(text="new"), checks=[JUDGE], budget_usd=LIMIT)
        other = stubs[0].Score(fresh, timeout=60, metadata=(("scorewire-run-id", "b-43"),))
        with pytest.raises(grpc.RpcError) as bad:
            stubs[0].Score(req[0], timeout=60, metadata=(("scorewire-run-id", "x" * 129),))
    assert judge.calls == 5 and _codes(responses).count("") == 4
    assert other.passed
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_tokens_budget_holds_over_replicas(
    judge: FakeOpenAI,
    redis_server: RedisServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    # A bearer token's $0.0035 per period is one budget on every replica; another
    # token's is its own.
    tokens = ["token-a-0123456789", "token-b-0123456789"]
    digests = ",".join(hashlib.sha256(t.encode()).hexdigest() for t in tokens)
    env = replica_env(
        judge,
        redis_server.url,
        tmp_path,
        auth_token_sha256=digests,
        judge_budget_per_token_usd=str(LIMIT),
    )
    auth = (("authorization", f"Bearer {tokens[0]}"),)
    with Replicas(2, env) as replicas:
        stubs = replicas.stubs()
        with ThreadPoolExecutor(12) as pool:
            futures = [
                pool.submit(_score, stubs[i % 2], f"token {i}", metadata=auth) for i in range(12)
            ]
            responses = [f.result() for f in futures]
        other = _score(
            stubs[1], "other token", metadata=(("authorization", f"Bearer {tokens[1]}"),)
        )
    assert _codes(responses).count("") == 4 and _codes(responses).count("BUDGET_EXHAUSTED") == 8
    assert other.passed and judge.calls == 5
