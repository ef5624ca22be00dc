"""The Python client's evaluation-job helpers (sync and asyncio) against a real server.

Each test names its jobs uniquely, so tests sharing one server never mistake another's
job for theirs. Waits carry a deadline, so a job that never ends fails the test.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from scorewire.client import AsyncClient, Client, ScorewireError, _jobs, jobs_pb, pb

CHECKS = [{"name": "has_paris", "type": "contains", "params": {"needles": ["Paris"]}}]
WAIT_S = 60.0
LONG_CASES = 50_000
"""A job this long (seconds of scoring) is still open when it is cancelled right after
it is created: its cancel is one round trip."""


@pytest.fixture
def client(scorewire_addr: str) -> Iterator[Client]:
    with Client(scorewire_addr) as c:
        yield c


@pytest.fixture
async def aclient(scorewire_addr: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(scorewire_addr) as c:
        yield c


def cases(n: int) -> list[object]:
    """n cases in the plain forms run_suite takes; every fourth (i % 4 == 0) lacks Paris."""
    out: list[object] = []
    for i in range(n):
        text = "Lyon" if i % 4 == 0 else f"Paris {i}"
        out.append(
            {"sample": {"id": f"s{i}"}, "output": text} if i % 2 else ({"id": f"s{i}"}, text)
        )
    return out


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


# --- no server: how the cases are cut into messages ---------------------------------------


def test_cases_go_500_a_message() -> None:
    # the RunSuiteStream chunk: 1201 small cases are 500 + 500 + 201
    sizes = [len(m.cases.cases) for m in _jobs.case_messages([{"output": "x"}] * 1201)]
    assert sizes == [500, 500, 201]


def test_large_cases_go_within_4_mib_a_message_and_a_larger_one_alone() -> None:
    mib = 1024 * 1024
    texts = ["a" * (3 * mib // 2)] * 3 + ["b" * (5 * mib)] + ["c"]
    messages = list(_jobs.case_messages([{"output": t} for t in texts]))
    assert [len(m.cases.cases) for m in messages] == [2, 1, 1, 1]
    assert all(m.ByteSize() <= _jobs.JOB_CHUNK_BYTES + 64 for m in messages[:2])
    assert [c.output.text[0] for m in messages for c in m.cases.cases] == list("aaabc")


def test_an_unknown_state_name_is_refused_before_sending(client: Client) -> None:
    with pytest.raises(ValueError, match="state must be one of"):
        client.list_jobs(state="done")


# --- against the server -----------------------------------------------------------------


def test_a_job_from_plain_cases_is_watched_to_success_with_aggregations(client: Client) -> None:
    # 600 cases: two CreateJob messages; progress only grows; the end has the aggregations
    name = unique("py-job")
    job = client.create_job(
        cases(600), checks=CHECKS, compact=["length:1..20"], name=name, labels={"team": "qa"}
    )
    assert (job.state, job.cases_total, job.name) == (jobs_pb.JOB_STATE_QUEUED, 600, name)
    seen = list(client.watch_job(job.job_id, timeout=WAIT_S))
    done = [j.cases_done for j in seen]
    assert done == sorted(done) and [j.state for j in seen] == sorted(j.state for j in seen)
    end = seen[-1]
    assert (end.state, end.cases_done) == (jobs_pb.JOB_STATE_SUCCEEDED, 600)
    assert [a.name for a in end.aggregations] == ["has_paris", "length:1..20"]
    paris = end.aggregations[0]
    assert (paris.count, paris.average, paris.median) == (600, 0.75, 1.0)
    assert end.summary.cases == 600 and end.summary.cases_passed == 450
    run = client.get_run(end.run_id)
    assert run.name == name and run.labels["team"] == "qa" and run.results == 600
    # wait on a job that has ended answers at once, the same job
    assert client.wait_job(job.job_id, timeout=WAIT_S) == client.get_job(job.job_id)


def test_a_long_job_is_cancelled_and_ends_cancelled(client: Client) -> None:
    job = client.create_job([{"output": "Paris"}] * LONG_CASES, compact=["contains:Paris"])
    cancelled = client.cancel_job(job.job_id)
    assert cancelled.state == jobs_pb.JOB_STATE_CANCELLED
    end = client.wait_job(job.job_id, timeout=WAIT_S)
    assert end.state == jobs_pb.JOB_STATE_CANCELLED and end.cases_done < LONG_CASES
    # cancelling it again is refused naming the job, not ignored
    with pytest.raises(ScorewireError) as err:
        client.cancel_job(job.job_id)
    assert err.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert [v.field for v in err.value.field_violations] == ["job_id"]


def test_jobs_are_listed_newest_first_page_by_page(client: Client) -> None:
    # page_size 1: three jobs can only be found over three pages or more
    one = [{"output": "Paris"}]
    made = [client.create_job(one, compact=["contains:Paris"]) for _ in range(3)]
    ids = [j.job_id for j in made]
    found = []
    for job in client.list_jobs(page_size=1):
        if job.job_id in ids:
            found.append(job.job_id)
        if len(found) == len(ids):
            break
    assert found == ids[::-1]
    for job_id in ids:
        client.wait_job(job_id, timeout=WAIT_S)
    succeeded = {j.job_id for j in client.list_jobs(state="succeeded", page_size=1000)}
    assert set(ids) <= succeeded
    assert all(j.state == jobs_pb.JOB_STATE_CANCELLED for j in client.list_jobs(state="cancelled"))


@pytest.mark.parametrize(
    ("kwargs", "code", "field"),
    [
        # a webhook on a server with no secret to sign it with
        (
            {"compact": ["contains:Paris"], "webhook_url": "http://127.0.0.1:1/hook"},
            grpc.StatusCode.FAILED_PRECONDITION,
            "config.webhook_url",
        ),
        # a parameter the check does not have
        (
            {"checks": [{"type": "contains", "params": {"needlez": ["Paris"]}}]},
            grpc.StatusCode.INVALID_ARGUMENT,
            "checks[0].params.needlez",
        ),
    ],
)
def test_a_refused_job_names_the_field_and_is_not_stored(
    client: Client, kwargs: dict[str, object], code: grpc.StatusCode, field: str
) -> None:
    name = unique("py-refused")
    with pytest.raises(ScorewireError) as err:
        client.create_job([{"output": "Paris"}], name=name, **kwargs)  # type: ignore[arg-type]
    assert err.value.code == code
    assert field in [v.field for v in err.value.field_violations]
    assert name not in {j.name for j in client.list_jobs(page_size=1000)}


def test_a_case_that_cannot_be_converted_raises_the_callers_error(client: Client) -> None:
    # the conversion fails mid-stream: its TypeError, not the CANCELLED of the call
    name = unique("py-bad-case")
    with pytest.raises(TypeError, match="bogus"):
        client.create_job(
            [{"output": "Paris"}] * 700 + [{"output": {"bogus": 1}}],
            compact=["contains:Paris"],
            name=name,
        )
    assert name not in {j.name for j in client.list_jobs(page_size=1000)}


def test_an_unknown_job_is_not_found(client: Client) -> None:
    for call in (client.get_job, client.cancel_job, client.wait_job):
        with pytest.raises(ScorewireError) as err:
            call("job_missing")
        assert err.value.code == grpc.StatusCode.NOT_FOUND


async def test_the_async_client_creates_watches_and_waits(aclient: AsyncClient) -> None:
    # the same calls awaited: create from plain cases, watch to the end, wait, get
    job = await aclient.create_job(cases(8), compact=["contains:Paris"], name=unique("py-async"))
    seen = [j async for j in aclient.watch_job(job.job_id, timeout=WAIT_S)]
    assert [j.cases_done for j in seen] == sorted(j.cases_done for j in seen)
    end = await aclient.wait_job(job.job_id, timeout=WAIT_S)
    assert end == seen[-1] and end.state == jobs_pb.JOB_STATE_SUCCEEDED and end.run_id
    assert end.aggregations[0].name == "contains:Paris"
    assert end.aggregations[0].average == 0.75
    listed = [j.job_id async for j in aclient.list_jobs(page_size=1)]
    assert job.job_id in listed


async def test_the_async_client_cancels_and_names_refused_fields(aclient: AsyncClient) -> None:
    job = await aclient.create_job([{"output": "Paris"}] * LONG_CASES, compact=["contains:Paris"])
    assert (await aclient.cancel_job(job.job_id)).state == jobs_pb.JOB_STATE_CANCELLED
    assert (await aclient.wait_job(job.job_id, timeout=WAIT_S)).state == (
        jobs_pb.JOB_STATE_CANCELLED
    )
    with pytest.raises(ScorewireError) as err:
        await aclient.create_job(
            [pb.Case(output=pb.Output(text="Paris"))], compact=["contains:Paris"],
            webhook_url="https://example.invalid/hook",
        )  # fmt: skip
    assert err.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert [v.field for v in err.value.field_violations] == ["config.webhook_url"]
    with pytest.raises(TypeError, match="bogus"):
        await aclient.create_job([{"output": {"bogus": 1}}], compact=["contains:Paris"])


def test_a_jobs_budget_reaches_the_server(client: Client) -> None:
    # deterministic checks spend nothing: the job keeps its budget and reports $0 spent
    job = client.create_job(cases(4), checks=CHECKS, name=unique("py-budget"), budget_usd=0.25)
    assert job.HasField("budget_usd") and job.budget_usd == 0.25
    end = client.wait_job(job.job_id, timeout=WAIT_S)
    assert end.budget_usd == 0.25 and end.spent_usd == 0
    plain = client.create_job(cases(1), checks=CHECKS, name=unique("py-no-budget"))
    assert not plain.HasField("budget_usd")


def test_a_bad_budget_is_refused_naming_the_field(client: Client) -> None:
    with pytest.raises(ScorewireError) as err:
        client.create_job(cases(1), checks=CHECKS, budget_usd=-1.0)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "config.budget_usd" in str(err.value)
