"""Judge-backed checks through the real server: cost, the verdict cache, budgets, Redis."""

import json
import re
from collections.abc import AsyncIterator

import grpc
import pytest
import redis.asyncio as aioredis
from scorewire.judge import JudgeService
from scorewire.judge.cache_entry import NAMESPACE
from scorewire.server.app import create_server
from scorewire.server.call_context import RUN_ID_METADATA
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.servers import serve_process, stop_process

KEY = "sk-test-grpc-judge-0123456789"


def verdict(score: int) -> Reply:
    return Reply(content=json.dumps({"reasoning": "r", "score": score}))


@pytest.fixture
def fake_openai() -> AsyncIterator[FakeOpenAI]:
    fake = FakeOpenAI(default=verdict(5), api_key=KEY)
    with fake.running():
        yield fake


def judge_settings(fake: FakeOpenAI, **extra: object) -> Settings:
    return Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model="openai:gpt-4o-mini",
        **extra,
    )


def judge_cases(n: int) -> list[pb.Case]:
    return [
        pb.Case(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text=f"answer number {i}"))
        for i in range(n)
    ]


JUDGE = pb.CheckSpec(name="helpful", type="judge", params={"rubric": "Is the answer helpful?"})


@pytest.fixture
async def judge_server(fake_openai: FakeOpenAI):
    settings = judge_settings(fake_openai)
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield scoring_pb2_grpc.ScoringServiceStub(channel)
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


async def run(stub, **kw) -> tuple[list[pb.CaseResult], pb.RunSummary]:
    results: list[pb.CaseResult] = []
    summary = None
    async for ev in stub.RunSuite(pb.RunSuiteRequest(**kw)):
        if ev.WhichOneof("event") == "results":
            results.extend(ev.results.results)
        else:
            summary = ev.summary
    assert summary is not None
    return results, summary


async def test_judge_costs_once_then_comes_from_the_cache(judge_server, fake_openai) -> None:
    # A second identical run makes no judge call and costs $0, every score cached.
    results, summary = await run(judge_server, checks=[JUDGE], cases=judge_cases(10))
    assert fake_openai.calls == 10
    assert summary.passed == 10 and summary.cost_usd > 0
    assert sum(r.scores[0].cost_usd for r in results) == pytest.approx(summary.cost_usd)
    again, summary2 = await run(judge_server, checks=[JUDGE], cases=judge_cases(10))
    assert fake_openai.calls == 10
    assert summary2.cost_usd == 0 and all(r.scores[0].cached for r in again)
    assert summary2.checks[0].cached == 10


async def test_a_threshold_change_reuses_cached_verdicts(judge_server, fake_openai) -> None:
    # The cache stores the raw verdict, so a new pass_level costs nothing.
    await run(judge_server, checks=[JUDGE], cases=judge_cases(3))
    strict = pb.CheckSpec(
        type="judge", params={"rubric": "Is the answer helpful?", "pass_level": 5}
    )
    _, summary = await run(judge_server, checks=[strict], cases=judge_cases(3))
    assert fake_openai.calls == 3 and summary.cost_usd == 0


async def test_budget_exhaustion_is_an_error_never_a_pass(judge_server, fake_openai) -> None:
    # With a budget too small for every call, the rest are BUDGET_EXHAUSTED errors.
    results, summary = await run(
        judge_server, checks=[JUDGE], cases=judge_cases(20), budget_usd=0.000001
    )
    codes = {r.scores[0].error.code for r in results if r.scores[0].error.code}
    assert "BUDGET_EXHAUSTED" in codes
    assert all(not r.scores[0].passed for r in results if r.scores[0].error.code)
    assert summary.errored > 0 and not summary.gate_passed


BUDGET_USD = 0.05


@pytest.mark.parametrize(
    ("shared", "max_tokens", "usage"),
    [
        # ceilings of ~$0.0135 (1000 tokens at gpt-4o's price), calls of $0.00125
        (False, 1000, (300, 50)),
        # the same with the run's budget in Redis (a recorded run id), as replicas share it
        (True, 1000, (300, 50)),
        # a ceiling of ~$0.0435 and a call of $0.011: after one call $0.039 is left, less
        # than a ceiling, so the other 63 are refused with 78% unspent. That is the bound
        # doing its work (the next call could cost its whole ceiling), not a queueing fault
        (False, 4000, (400, 1000)),
    ],
    ids=["in-process", "redis", "ceiling-above-what-is-left"],
)
async def test_a_crowd_of_cheap_calls_spends_the_budget_until_no_ceiling_fits(
    shared: bool, max_tokens: int, usage: tuple[int, int], request: pytest.FixtureRequest
) -> None:
    # 64 cases at once under $0.05, each judge call's ceiling a few cents and its cost
    # much less: calls wait behind the budget as ceilings held by others settle, and are
    # scored until what is left is less than one ceiling; the spend never exceeds the
    # budget.
    reply = Reply(content=json.dumps({"reasoning": "r", "score": 5}), input_tokens=usage[0],
                  output_tokens=usage[1], delay_s=0.05)  # fmt: skip
    fake = FakeOpenAI(default=reply, api_key=KEY)
    with fake.running():
        redis_url = request.getfixturevalue("redis_server").url if shared else None
        extra = {"cache_url": redis_url} if redis_url else {}
        settings = judge_settings(fake, **extra)
        judge = JudgeService.from_settings(settings)
        running, port = await create_server(settings, judge=judge)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        stub = scoring_pb2_grpc.ScoringServiceStub(channel)
        spec = pb.CheckSpec(
            type="judge",
            params={"rubric": "Is it helpful?", "model": "openai:gpt-4o", "max_tokens": max_tokens},
        )
        request = pb.RunSuiteRequest(checks=[spec], cases=judge_cases(64), budget_usd=BUDGET_USD)
        metadata = [(RUN_ID_METADATA, "crowd")] if shared else []
        results: list[pb.CaseResult] = []
        try:
            async for ev in stub.RunSuite(request, metadata=metadata):
                if ev.WhichOneof("event") == "results":
                    results.extend(ev.results.results)
                else:
                    summary = ev.summary
        finally:
            await channel.close()
            await running.stop(0)
            await judge.aclose()
        scores = [r.scores[0] for r in results]
        refused = [s for s in scores if s.error.code == "BUDGET_EXHAUSTED"]
        scored = [s for s in scores if not s.error.code]
        assert len(scored) + len(refused) == 64 and len(scored) == fake.calls
        cost = (usage[0] * 2.50 + usage[1] * 10.00) / 1e6
        assert summary.cost_usd == pytest.approx(len(scored) * cost)
        assert summary.cost_usd <= BUDGET_USD
        # every refusal says the ceiling no longer fits: what is left is under one ceiling
        ceiling = float(re.search(r"up to \$([0-9.]+)", refused[0].reason).group(1))
        assert BUDGET_USD - summary.cost_usd < ceiling
        assert all("more than the $" in s.reason for s in refused)
        # at most as many calls were in flight at once as ceilings fit in the budget
        assert fake.max_in_flight <= BUDGET_USD // ceiling
        if redis_url is not None:  # the money was held and spent in Redis
            client = aioredis.from_url(redis_url, decode_responses=True)
            spent = [k async for k in client.scan_iter("scorewire:budget:*run:*:spent")]
            assert len(spent) == 1
            assert float(await client.get(spent[0])) == pytest.approx(summary.cost_usd)
            await client.aclose()


async def test_unparseable_verdict_is_an_error_whose_cost_counts(judge_server, fake_openai) -> None:
    # A judge answering garbage gives INVALID_VERDICT with its cost, and is not cached.
    fake_openai.script(Reply(content="I think it is fine"))
    resp = await judge_server.Score(
        pb.ScoreRequest(output=pb.Output(text="garbage case"), checks=[JUDGE])
    )
    s = resp.scores[0]
    assert s.error.code == "INVALID_VERDICT" and not s.passed and s.cost_usd > 0
    resp = await judge_server.Score(
        pb.ScoreRequest(output=pb.Output(text="garbage case"), checks=[JUDGE])
    )
    assert resp.scores[0].passed and not resp.scores[0].cached


def test_two_server_processes_sharing_redis_make_one_judge_call(
    fake_openai,
    redis_server,
    tmp_path,
) -> None:
    # Replicas share verdicts through Redis: the second server pays nothing.
    env = {
        "SCOREWIRE_OPENAI_BASE_URL": fake_openai.url,
        "SCOREWIRE_OPENAI_API_KEY": KEY,
        "SCOREWIRE_JUDGE_MODEL": "openai:gpt-4o-mini",
        "SCOREWIRE_CACHE_URL": redis_server.url,
        "SCOREWIRE_METRICS_ENABLED": "false",
        "SCOREWIRE_LABELS_PATH": str(tmp_path / "labels.db"),
    }
    servers = [serve_process(env), serve_process(env)]
    req = pb.ScoreRequest(output=pb.Output(text="the same output"), checks=[JUDGE])
    try:
        costs = []
        for _, addr in servers:
            with grpc.insecure_channel(addr) as ch:
                resp = scoring_pb2_grpc.ScoringServiceStub(ch).Score(req, timeout=30)
                assert resp.passed
                costs.append((resp.scores[0].cost_usd, resp.scores[0].cached))
        assert fake_openai.calls == 1
        assert costs[0][0] > 0 and costs[1] == (0.0, True)
    finally:
        for proc, _ in servers:
            stop_process(proc)


async def test_each_token_has_its_own_judge_budget(fake_openai) -> None:
    # A token that spent its budget gets BUDGET_EXHAUSTED; another token still scores.
    import hashlib

    tokens = ["token-a-0123456789", "token-b-0123456789"]
    digests = ",".join(hashlib.sha256(t.encode()).hexdigest() for t in tokens)
    # Each call reports nearly its ceiling (~1,370 prompt tokens, all 1024 completion
    # tokens: ~$0.0008 at gpt-4o-mini's price), so $0.0012 holds one call, not two.
    fake_openai.default = Reply(
        content=json.dumps({"reasoning": "r", "score": 5}), input_tokens=1300, output_tokens=1024
    )
    settings = judge_settings(
        fake_openai, auth_token_sha256=digests, judge_budget_per_token_usd=0.0012
    )
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = scoring_pb2_grpc.ScoringServiceStub(channel)

    def md(token: str):
        return (("authorization", f"Bearer {token}"),)

    def req(text: str) -> pb.ScoreRequest:
        return pb.ScoreRequest(output=pb.Output(text=text), checks=[JUDGE])

    try:
        first = await stub.Score(req("a1"), metadata=md(tokens[0]))
        assert first.passed
        spent = await stub.Score(req("a2"), metadata=md(tokens[0]))
        assert spent.scores[0].error.code == "BUDGET_EXHAUSTED" and not spent.passed
        other = await stub.Score(req("b1"), metadata=md(tokens[1]))
        assert other.passed
        assert fake_openai.calls == 2
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


async def test_unpriced_models_and_huge_max_tokens_bypass_no_budget(fake_openai) -> None:
    # Finding 2: an unpriced model with max_tokens 32768 made 200 of 200 calls under run,
    # per-token and server budgets of $0.001. Now none is made: the unpriced model is an
    # UNPRICED_MODEL error naming the setting that prices it, a priced model's ceiling
    # ($0.33 for gpt-4o) does not fit, and the server's budget does not move.
    import hashlib

    token = "token-budget-0123456789"
    settings = judge_settings(
        fake_openai,
        auth_token_sha256=hashlib.sha256(token.encode()).hexdigest(),
        judge_budget_per_token_usd=0.001,
        judge_budget_usd=0.001,
    )
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = scoring_pb2_grpc.ScoringServiceStub(channel)
    md = (("authorization", f"Bearer {token}"),)

    def huge(model: str) -> pb.CheckSpec:
        params = {"rubric": "Is the answer helpful?", "model": model, "max_tokens": 32768}
        return pb.CheckSpec(name="helpful", type="judge", params=params)

    try:
        # Deliberately changed by the preflight: the unpriced model is refused before any
        # case runs (FAILED_PRECONDITION naming the price setting), where it used to score
        # 100 UNPRICED_MODEL errors.
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in stub.RunSuite(
                pb.RunSuiteRequest(
                    checks=[huge("openai:o1-pro")], cases=judge_cases(100), budget_usd=0.001
                ),
                metadata=md,
            ):
                pass
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "SCOREWIRE_JUDGE_PRICES" in caught.value.details()
        for model, code in (("openai:gpt-4o", "BUDGET_EXHAUSTED"),):
            results: list[pb.CaseResult] = []
            request = pb.RunSuiteRequest(
                checks=[huge(model)], cases=judge_cases(100), budget_usd=0.001
            )
            async for ev in stub.RunSuite(request, metadata=md):
                if ev.WhichOneof("event") == "results":
                    results.extend(ev.results.results)
                else:
                    assert ev.summary.errored == 100 and not ev.summary.gate_passed
            assert {r.scores[0].error.code for r in results} == {code}
            assert all(not r.scores[0].passed for r in results)
        ceiling_reason = results[0].scores[0].reason  # the last loop: gpt-4o
        assert fake_openai.calls == 0
        assert judge.server_budget is not None
        assert judge.server_budget.remaining_usd() == pytest.approx(0.001)
        # the unpriced model's refusal names the model and the setting that prices it,
        # also for a Score without a budget of its own (the token's and server's hold it)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.Score(
                pb.ScoreRequest(output=pb.Output(text="x"), checks=[huge("openai:o1-pro")]),
                metadata=md,
            )
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "o1-pro" in caught.value.details()
        assert "SCOREWIRE_JUDGE_PRICES" in caught.value.details()
        assert "32768 max_tokens" in ceiling_reason
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


async def test_negative_usage_from_the_judge_never_raises_the_budget(fake_openai) -> None:
    # Finding 5: a judge reporting negative prompt_tokens gave a negative cost and raised
    # budget_remaining above its limit. Now it is a JUDGE_ERROR charged at the ceiling.
    settings = judge_settings(fake_openai, judge_budget_usd=1.0)
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = scoring_pb2_grpc.ScoringServiceStub(channel)
    try:
        fake_openai.script(
            Reply(content=json.dumps({"reasoning": "r", "score": 5}), input_tokens=-(10**9))
        )
        resp = await stub.Score(pb.ScoreRequest(output=pb.Output(text="x"), checks=[JUDGE]))
        s = resp.scores[0]
        assert s.error.code == "JUDGE_ERROR" and not s.passed
        assert "prompt_tokens=-1000000000" in s.reason
        assert judge.server_budget is not None
        assert s.cost_usd > 0 and judge.server_budget.remaining_usd() == pytest.approx(
            1.0 - s.cost_usd
        )
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


def tenant_settings(fake: FakeOpenAI, names: list[str], **extra: object) -> Settings:
    """Judge settings with one caller token per name (`token-of-<name>-0123456789`)."""
    import hashlib

    entries = [
        {
            "name": n,
            "sha256": hashlib.sha256(f"token-of-{n}-0123456789".encode()).hexdigest(),
            "role": "caller",
        }
        for n in names
    ]
    return judge_settings(fake, auth_tokens=json.dumps(entries), **extra)


def md(name: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer token-of-{name}-0123456789"),)


def judge_request(text: str) -> pb.ScoreRequest:
    return pb.ScoreRequest(output=pb.Output(text=text), checks=[JUDGE])


async def checkout_pays(stub: scoring_pb2_grpc.ScoringServiceStub) -> None:
    """The tenant "checkout" pays for 3 verdicts."""
    for i in range(3):
        await stub.Score(judge_request(f"checkout answer {i}"), metadata=md("checkout"))


async def search_floods(stub: scoring_pb2_grpc.ScoringServiceStub) -> None:
    """The tenant "search" pays for 40 distinct verdicts in one RunSuite."""
    flood = [
        pb.Case(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text=f"search answer {i}"))
        for i in range(40)
    ]
    async for _ in stub.RunSuite(
        pb.RunSuiteRequest(checks=[JUDGE], cases=flood), metadata=md("search")
    ):
        pass


async def test_cached_never_tells_a_tenant_what_another_tenant_scored(fake_openai) -> None:
    # The verdict cache is shared (one upstream call), but only the tenant that paid for a
    # verdict sees it as cached; another token's identical request looks like a fresh call.
    settings = tenant_settings(fake_openai, ["checkout", "search"])
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = scoring_pb2_grpc.ScoringServiceStub(channel)

    req = pb.ScoreRequest(output=pb.Output(text="the same answer"), checks=[JUDGE])
    try:
        first = (await stub.Score(req, metadata=md("checkout"))).scores[0]
        again = (await stub.Score(req, metadata=md("checkout"))).scores[0]
        other = (await stub.Score(req, metadata=md("search"))).scores[0]
        assert (first.cached, again.cached, other.cached) == (False, True, False)
        assert other.cost_usd > 0 and other.passed  # priced as the call it would have been
        assert fake_openai.calls == 1  # yet the shared cache answered it
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


async def test_a_tenant_flooding_the_in_process_cache_evicts_its_own_verdicts(
    fake_openai,
) -> None:
    # The memory:// cache holds about ten verdicts. "search" pays for 40 distinct ones;
    # the three "checkout" paid for before stay cached: the flood evicts search's own.
    settings = tenant_settings(fake_openai, ["checkout", "search"], cache_memory_bytes=4500)
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = scoring_pb2_grpc.ScoringServiceStub(channel)

    req = judge_request
    try:
        await checkout_pays(stub)
        assert fake_openai.calls == 3
        await search_floods(stub)
        store = judge.cache.store
        assert fake_openai.calls == 43 and judge.stats.cache_evictions > 0
        for i in range(3):
            s = (await stub.Score(req(f"checkout answer {i}"), metadata=md("checkout"))).scores[0]
            assert s.cached and s.cost_usd == 0, i
        assert fake_openai.calls == 43
        assert store.bytes <= 4500 and store.held("search") < store.bytes
        # search's own first verdicts were the ones that went: asking again pays again
        s = (await stub.Score(req("search answer 0"), metadata=md("search"))).scores[0]
        assert not s.cached and fake_openai.calls == 44
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


async def test_a_tenant_flooding_a_redis_cache_evicts_only_its_own_verdicts(
    fake_openai, redis_server
) -> None:
    # As above, with the verdicts in Redis and each tenant held to about ten of them
    # (cache_tenant_max_bytes): search's flood of 40 deletes search's oldest verdicts;
    # the three checkout paid for stay cached. The stores go through the fused
    # store-and-release script (the leases share the cache's Redis).
    settings = tenant_settings(
        fake_openai,
        ["checkout", "search"],
        cache_url=redis_server.url,
        cache_tenant_max_bytes=2500,
        cache_timeout_s=30.0,  # a slow moment on a busy machine must not bypass the cache
    )
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = scoring_pb2_grpc.ScoringServiceStub(channel)
    client = aioredis.from_url(redis_server.url, decode_responses=True)

    req = judge_request
    try:
        await checkout_pays(stub)
        await search_floods(stub)
        assert judge.stats.cache_bypasses == 0
        assert fake_openai.calls == 43 and judge.stats.cache_evictions > 0
        base = f"{NAMESPACE}tenant:"
        assert int(await client.get(base + "search:bytes")) <= 2500
        assert await client.zcard(base + "search:lru") < 40
        for i in range(3):
            s = (await stub.Score(req(f"checkout answer {i}"), metadata=md("checkout"))).scores[0]
            assert s.cached and s.cost_usd == 0, i
        assert fake_openai.calls == 43
        s = (await stub.Score(req("search answer 0"), metadata=md("search"))).scores[0]
        assert not s.cached and fake_openai.calls == 44  # search's oldest went: paid again
    finally:
        await client.aclose()
        await channel.close()
        await running.stop(0)
        await judge.aclose()
