"""The JobService through the generated stubs on a real server: create, watch to the
end with the aggregations, get, list, cancel, tenant isolation, and refusals naming
their field."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from scorewire.v1 import jobs_pb2 as jpb
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import scoring_pb2 as pb

import tests.server.custom_checks  # noqa: F401 - registers test.slow
from tests.jobs.servers import case, job_server, requests, sample_ids, texts, watch_to_end
from tests.support.wait import wait_until_async

CHECKS = [pb.CheckSpec(name="paris", type="contains")]
CHECKS[0].params["expected"] = "Paris"


def _config(**kw: object) -> jpb.JobConfig:
    config = jpb.JobConfig(checks=CHECKS, compact=["length:1..20"], **kw)  # type: ignore[arg-type]
    return config


async def test_a_job_is_watched_to_its_end_and_its_run_has_the_aggregations(
    tmp_path: Path,
) -> None:
    # 10 cases in chunks of 4: progress moves 0 -> 4 -> 8 -> 10, then succeeded
    outputs = ["Paris"] * 7 + ["Lyon"] * 3
    async with job_server(tmp_path) as srv:
        made = await srv.jobs.CreateJob(requests(_config(name="nightly"), texts(outputs)))
        job = made.job
        assert job.state == jpb.JOB_STATE_QUEUED and job.cases_total == 10
        seen = await watch_to_end(srv.jobs, job.job_id)
        end = seen[-1]
        assert end.state == jpb.JOB_STATE_SUCCEEDED and end.cases_done == 10
        assert [j.cases_done for j in seen] == sorted(j.cases_done for j in seen)
        assert end.summary.cases == 10 and end.summary.cases_passed == 7
        paris = end.aggregations[0]
        assert paris.name == "paris" and paris.count == 10
        assert paris.average == pytest.approx(0.7) and paris.mode == 1.0
        assert paris.min == 0.0 and paris.max == 1.0 and paris.median == 1.0
        assert paris.variance == pytest.approx(0.21) and paris.std == pytest.approx(0.21**0.5)
        assert paris.p90 == 1.0 and paris.p99 == 1.0
        run = (await srv.runs.GetRun(rpb.GetRunRequest(run_id=end.run_id))).run
        assert run.status == rpb.RUN_STATUS_COMPLETE and run.source == "Job"
        assert run.labels["job_id"] == job.job_id and run.name == "nightly"
        ids = await sample_ids(srv.runs, end.run_id)
        assert sorted(ids) == sorted(f"s{i}" for i in range(10))
        got = await srv.jobs.GetJob(jpb.GetJobRequest(job_id=job.job_id))
        assert got.job.aggregations == end.aggregations
        listed = await srv.jobs.ListJobs(jpb.ListJobsRequest())
        assert [j.job_id for j in listed.jobs] == [job.job_id]


async def test_percentiles_interpolate_between_values(tmp_path: Path) -> None:
    # a numeric check: values 0.1 .. 1.0 (length / 10), p90 between the two highest
    outputs = ["x" * n for n in range(1, 11)]
    config = jpb.JobConfig(checks=[pb.CheckSpec(name="len", type="test.echo_len")])
    async with job_server(tmp_path, imports=["tests.server.custom_checks"]) as srv:
        job = (await srv.jobs.CreateJob(requests(config, texts(outputs)))).job
        end = (await watch_to_end(srv.jobs, job.job_id))[-1]
        agg = end.aggregations[0]
        assert agg.median == pytest.approx(0.55) and agg.p90 == pytest.approx(0.91)
        assert agg.p95 == pytest.approx(0.955) and agg.min == pytest.approx(0.1)


async def test_a_cancelled_job_stops_and_its_run_ends_incomplete(tmp_path: Path) -> None:
    # slow cases: cancelled while running, it scores no further chunk
    slow = [pb.CheckSpec(name="slow", type="test.slow")]
    cases = [case(i, "Paris", sleep=0.2) for i in range(40)]
    async with job_server(tmp_path, imports=["tests.server.custom_checks"]) as srv:
        job = (await srv.jobs.CreateJob(requests(jpb.JobConfig(checks=slow), cases))).job
        async for m in srv.jobs.WatchJob(jpb.WatchJobRequest(job_id=job.job_id)):
            if m.job.cases_done >= 4:
                break
        cancelled = await srv.jobs.CancelJob(jpb.CancelJobRequest(job_id=job.job_id))
        assert cancelled.job.state == jpb.JOB_STATE_CANCELLED
        end = (await watch_to_end(srv.jobs, job.job_id))[-1]
        assert end.state == jpb.JOB_STATE_CANCELLED and end.cases_done < 40

        async def run_ended() -> bool:
            run = (await srv.runs.GetRun(rpb.GetRunRequest(run_id=end.run_id))).run
            return run.status == rpb.RUN_STATUS_INCOMPLETE

        await wait_until_async(run_ended, "the cancelled job's run ends incomplete", timeout_s=5)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.jobs.CancelJob(jpb.CancelJobRequest(job_id=job.job_id))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


@pytest.mark.parametrize(
    ("config", "cases", "code", "field"),
    [
        # more cases than declared
        (jpb.JobConfig(case_count=2), 3, grpc.StatusCode.INVALID_ARGUMENT, "config.case_count"),
        # over the server's limit
        (jpb.JobConfig(case_count=99), 1, grpc.StatusCode.RESOURCE_EXHAUSTED, "case_count"),
        # a webhook with no secret to sign it
        (
            jpb.JobConfig(webhook_url="http://127.0.0.1:1/hook"),
            1,
            grpc.StatusCode.FAILED_PRECONDITION,
            "config.webhook_url",
        ),
        # a check the catalog does not have
        (
            jpb.JobConfig(checks=[pb.CheckSpec(type="no_such_check")]),
            1,
            grpc.StatusCode.INVALID_ARGUMENT,
            "checks[0]",
        ),
    ],
)
async def test_bad_jobs_are_refused_naming_the_field(
    tmp_path: Path, config: jpb.JobConfig, cases: int, code: grpc.StatusCode, field: str
) -> None:
    if not config.checks:
        config.checks.extend(CHECKS)
    async with job_server(tmp_path, jobs_max_cases=10) as srv:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.jobs.CreateJob(requests(config, texts(["Paris"] * cases)))
        assert err.value.code() == code
        assert field in (err.value.details() or "") or field in str(err.value.trailing_metadata())
        assert (await srv.jobs.ListJobs(jpb.ListJobsRequest())).jobs == []


async def test_a_tenant_neither_sees_nor_cancels_another_tenants_job(tmp_path: Path) -> None:
    # two bearer tokens: b gets NOT_FOUND for a's job, and an empty list
    import hashlib
    import json

    def token(name: str) -> dict[str, str]:
        digest = hashlib.sha256(f"token-{name}".encode()).hexdigest()
        return {"name": name, "sha256": digest, "role": "caller"}

    tokens = json.dumps([token("a"), token("b")])
    async with job_server(tmp_path, auth_tokens=tokens) as srv:
        a = [("authorization", "Bearer token-a")]
        b = [("authorization", "Bearer token-b")]
        job = (await srv.jobs.CreateJob(requests(_config(), texts(["Paris"])), metadata=a)).job
        for call in (srv.jobs.GetJob, srv.jobs.CancelJob):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call(jpb.GetJobRequest(job_id=job.job_id), metadata=b)  # type: ignore[operator]
            assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert (await srv.jobs.ListJobs(jpb.ListJobsRequest(), metadata=b)).jobs == []
        mine = await srv.jobs.ListJobs(jpb.ListJobsRequest(), metadata=a)
        assert [j.job_id for j in mine.jobs] == [job.job_id]


async def test_a_job_claimed_too_often_fails_instead_of_holding_a_runner(tmp_path: Path) -> None:
    # claimed MAX_CLAIMS times already (every runner died on it): the next claim fails it
    from scorewire.jobs.job_runner import MAX_CLAIMS
    from scorewire.jobs.sqlite import SqliteJobStore

    async with job_server(tmp_path, jobs_runners=0) as srv:
        job = (await srv.jobs.CreateJob(requests(_config(), texts(["Paris"])))).job
    store = await SqliteJobStore.open(tmp_path / "jobs.db")
    for _ in range(MAX_CLAIMS):
        assert await store.claim("dead", 0.000001) is not None
    await store.close()
    async with job_server(tmp_path) as srv:
        end = (await watch_to_end(srv.jobs, job.job_id))[-1]
    assert end.state == jpb.JOB_STATE_FAILED and "without finishing" in end.error


async def test_a_jobs_judge_calls_spend_its_tenants_token_budget(tmp_path: Path) -> None:
    # A job is its tenant's work: its judge calls are held in the tenant's token budget
    # (before, a job's context had no budget, so jobs spent past it). Each call reports
    # nearly its ceiling (~$0.0008 at gpt-4o-mini's price): $0.0012 holds one call.
    import hashlib
    import json

    from scorewire.judge import JudgeService

    from tests.fakes.base import Reply
    from tests.fakes.openai_server import FakeOpenAI

    key = "sk-jobs-budget"
    fake = FakeOpenAI(
        api_key=key,
        default=Reply(
            content=json.dumps({"reasoning": "r", "score": 5}),
            input_tokens=1300,
            output_tokens=1024,
        ),
    )
    digest = hashlib.sha256(b"token-a").hexdigest()
    tokens = json.dumps([{"name": "a", "sha256": digest, "role": "caller"}])
    judge = pb.CheckSpec(name="helpful", type="judge", params={"rubric": "Is it helpful?"})
    config = jpb.JobConfig(checks=[judge])
    with fake.running():
        async with job_server(
            tmp_path,
            auth_tokens=tokens,
            judge_budget_per_token_usd=0.0012,
            openai_base_url=fake.url,
            openai_api_key=key,
            judge_model="openai:gpt-4o-mini",
            jobs_chunk_cases=1,
            judge=JudgeService.from_settings,
        ) as srv:
            a = [("authorization", "Bearer token-a")]
            made = await srv.jobs.CreateJob(
                requests(config, texts(["one", "two", "three"])), metadata=a
            )
            seen = await watch_to_end(srv.jobs, made.job.job_id, metadata=a)
            assert seen[-1].state == jpb.JOB_STATE_SUCCEEDED
            run = seen[-1].run_id
            page = await srv.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=run), metadata=a)
            codes = sorted(r.result.scores[0].error.code for r in page.results)
    assert codes == ["", "BUDGET_EXHAUSTED", "BUDGET_EXHAUSTED"], (codes, seen[-1])
    assert fake.calls == 1


async def test_a_jobs_cases_are_held_in_the_tenants_bytes_in_flight(tmp_path: Path) -> None:
    # CreateJob holds its cases in memory until they are stored: they count against the
    # bytes in flight, per tenant, as RunSuite's do (before, ten concurrent CreateJobs of
    # max_message_bytes each were held whole, uncounted). Refused at its field; the bytes
    # are given back, so the same tenant's small job is accepted after.
    big = texts(["x" * 1000] * 300)  # ~300 kB
    async with job_server(tmp_path, max_bytes_in_flight_per_tenant=200_000) as srv:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.jobs.CreateJob(requests(_config(), big, per_message=20))
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "max_bytes_in_flight_per_tenant" in (err.value.details() or "")
        assert (await srv.jobs.ListJobs(jpb.ListJobsRequest())).jobs == []
        small = await srv.jobs.CreateJob(requests(_config(), texts(["Paris"] * 3)))
        assert small.job.cases_total == 3


@pytest.mark.parametrize("fresh", [True, False])
async def test_a_suite_that_asks_the_judges_again_does_so_in_a_job(
    tmp_path: Path, fresh: bool
) -> None:
    # "thank you" is judged (and cached) by a RunSuite first; a job of the same suite asks
    # the judge again when the suite says fresh_judges (before, a job ignored it), and
    # reads the cached verdict when it does not
    import json

    from scorewire.judge import JudgeService
    from scorewire.v1 import scoring_pb2_grpc

    from tests.fakes.base import Reply
    from tests.fakes.openai_server import FakeOpenAI

    key = "sk-jobs-fresh"
    fake = FakeOpenAI(
        api_key=key, default=Reply(content=json.dumps({"reasoning": "r", "score": 5}))
    )
    suite = f"settings: {{fresh_judges: {str(fresh).lower()}}}\n" + (
        'checks:\n  polite: {type: judge, rubric: "Is it polite?"}\n'
    )
    cases = texts(["thank you"])
    with fake.running():
        async with job_server(
            tmp_path, openai_base_url=fake.url, openai_api_key=key,
            judge_model="openai:gpt-4o-mini", judge=JudgeService.from_settings,
        ) as srv:  # fmt: skip
            scoring = scoring_pb2_grpc.ScoringServiceStub(srv.channel)
            read = pb.RunSuiteRequest(
                suite_yaml=suite, cases=cases, judge_cache=pb.JUDGE_CACHE_READ
            )
            _ = [m async for m in scoring.RunSuite(read)]
            assert fake.calls == 1
            made = await srv.jobs.CreateJob(requests(jpb.JobConfig(suite_yaml=suite), cases))
            end = (await watch_to_end(srv.jobs, made.job.job_id))[-1]
            assert end.state == jpb.JOB_STATE_SUCCEEDED
    assert fake.calls == (2 if fresh else 1)


def _judged_server(tmp_path: Path, fake: object, key: str, **settings: object):  # type: ignore[no-untyped-def]
    from scorewire.judge import JudgeService

    return job_server(
        tmp_path, openai_base_url=fake.url, openai_api_key=key,  # type: ignore[attr-defined]
        judge_model="openai:gpt-4o-mini", judge=JudgeService.from_settings, **settings,
    )  # fmt: skip


def _judge_fake(key: str, output_tokens: int = 20):  # type: ignore[no-untyped-def]
    import json

    from tests.fakes.base import Reply
    from tests.fakes.openai_server import FakeOpenAI

    verdict = json.dumps({"reasoning": "r", "score": 5})
    return FakeOpenAI(api_key=key, default=Reply(content=verdict, output_tokens=output_tokens))


POLITE = 'checks:\n  polite: {type: judge, rubric: "Is it polite?"}\n'


async def _error_codes(srv: object, run_id: str) -> list[str]:
    page = await srv.runs.ListRunResults(  # type: ignore[attr-defined]
        rpb.ListRunResultsRequest(run_id=run_id, page_size=500)
    )
    return [r.result.scores[0].error.code for r in page.results]


async def test_a_job_spends_no_more_than_its_budget_across_its_chunks(tmp_path: Path) -> None:
    # 12 distinct outputs in chunks of 4, a budget that pays for a few calls: the job
    # stops calling once it is spent (the rest BUDGET_EXHAUSTED, never a pass), and says
    # what it spent, which is what its recorded scores cost
    key = "sk-jobs-budget"
    fake = _judge_fake(key, output_tokens=500)  # $0.000315 a call at gpt-4o-mini's price
    outputs = [f"thank you {i}" for i in range(12)]
    with fake.running():
        async with _judged_server(tmp_path, fake, key) as srv:
            config = jpb.JobConfig(suite_yaml=POLITE, budget_usd=0.0015)
            made = await srv.jobs.CreateJob(requests(config, texts(outputs)))
            assert made.job.budget_usd == 0.0015 and made.job.spent_usd == 0
            end = (await watch_to_end(srv.jobs, made.job.job_id))[-1]
            assert end.state == jpb.JOB_STATE_SUCCEEDED and end.cases_done == 12
            codes = await _error_codes(srv, end.run_id)
            page = await srv.runs.ListRunResults(
                rpb.ListRunResultsRequest(run_id=end.run_id, page_size=500)
            )
            cost = sum(r.result.scores[0].cost_usd for r in page.results)
    assert 0 < fake.calls < 12
    assert codes.count("") == fake.calls
    assert codes.count("BUDGET_EXHAUSTED") == 12 - fake.calls
    assert 0 < end.spent_usd <= 0.0015
    assert end.spent_usd == pytest.approx(cost)


async def test_a_resumed_job_goes_on_from_what_its_checkpoints_spent(tmp_path: Path) -> None:
    # a runner gave the job back at a checkpoint having spent its whole budget: the next
    # runner (another server on the same store) makes no judge call for the rest
    from scorewire.jobs import open_job_store
    from scorewire.settings import Settings

    key = "sk-jobs-resume"
    fake = _judge_fake(key)
    with fake.running():
        async with _judged_server(tmp_path, fake, key, jobs_runners=0) as srv:
            config = jpb.JobConfig(suite_yaml=POLITE, budget_usd=0.01)
            made = await srv.jobs.CreateJob(requests(config, texts(["a", "b", "c", "d", "e"])))
        store = await open_job_store(Settings(state_dir=str(tmp_path)))
        assert await store.claim("gone", 30) is not None
        assert await store.release(made.job.job_id, "gone", 0, 0.01)
        await store.close()
        async with _judged_server(tmp_path, fake, key) as srv:
            end = (await watch_to_end(srv.jobs, made.job.job_id))[-1]
            codes = await _error_codes(srv, end.run_id)
    assert fake.calls == 0
    assert codes == ["BUDGET_EXHAUSTED"] * 5
    assert end.spent_usd == pytest.approx(0.01)


async def test_a_job_holds_its_suites_budget(tmp_path: Path) -> None:
    # settings: {budget: 0} in the suite is the job's budget when the config names none
    # (before, a job ignored it and paid for every case)
    key = "sk-jobs-suite-budget"
    fake = _judge_fake(key)
    with fake.running():
        async with _judged_server(tmp_path, fake, key) as srv:
            config = jpb.JobConfig(suite_yaml="settings: {budget: 0}\n" + POLITE)
            made = await srv.jobs.CreateJob(requests(config, texts(["a", "b"])))
            assert made.job.budget_usd == 0 and made.job.HasField("budget_usd")
            end = (await watch_to_end(srv.jobs, made.job.job_id))[-1]
            codes = await _error_codes(srv, end.run_id)
    assert fake.calls == 0 and codes == ["BUDGET_EXHAUSTED"] * 2


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
async def test_a_bad_job_budget_is_refused_at_its_field(tmp_path: Path, bad: float) -> None:
    async with job_server(tmp_path) as srv:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.jobs.CreateJob(requests(_config(budget_usd=bad), texts(["Paris"])))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "config.budget_usd" in (err.value.details() or "")


async def test_an_unpriced_judge_under_a_job_budget_is_refused_at_creation(
    tmp_path: Path,
) -> None:
    # a budget cannot price the calls of a model without a price: refused before the job
    # is stored, not scored as errors case after case once the caller has gone
    key = "sk-jobs-unpriced"
    fake = _judge_fake(key)
    suite = 'checks:\n  polite: {type: judge, rubric: "p?", model: "openai:my-local"}\n'
    with fake.running():
        async with _judged_server(tmp_path, fake, key) as srv:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                config = jpb.JobConfig(suite_yaml=suite, budget_usd=1.0)
                await srv.jobs.CreateJob(requests(config, texts(["a"])))
            assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "my-local" in (err.value.details() or "")
            assert (await srv.jobs.ListJobs(jpb.ListJobsRequest())).jobs == []
