"""The job stores (SQLite and PostgreSQL) keep the same promises: a job is stored whole,
claimed by one runner at a time, taken over once its lease lapses, and no longer its
runner's once cancelled or taken over."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from scorewire.jobs import CaseChunk, Job, JobPlan, JobState, TooManyOpenJobs, new_job_id

from tests.jobs.conftest import StoreOpener


def _job(tenant: str = "t", cases: int = 10) -> tuple[Job, list[CaseChunk]]:
    job = Job(new_job_id(), tenant, "j", JobPlan(compact=("contains:a",)), cases, {"k": "v"})
    chunks = [
        CaseChunk(i // 4, i, [f"c{n}".encode() for n in range(i, min(i + 4, cases))])
        for i in range(0, cases, 4)
    ]
    return job, chunks


async def test_a_job_is_stored_whole_and_read_back(open_jobs: StoreOpener) -> None:
    # every field round-trips; the chunks come back from the one holding a case index
    store = await open_jobs()
    job, chunks = _job()
    await store.create(job, chunks, None)
    got = await store.get(job.job_id)
    assert got is not None and got.plan == job.plan and got.labels == {"k": "v"}
    assert got.state == JobState.QUEUED and got.cases_total == 10
    after5 = await store.chunks(job.job_id, 5)
    assert [c.first for c in after5] == [4, 8] and after5[0].cases[1] == b"c5"
    await store.close()


async def test_one_runner_claims_a_job_and_renews_it_until_cancelled(
    open_jobs: StoreOpener,
) -> None:
    # a second claim finds nothing; a cancelled job's runner learns it at its renewal
    store = await open_jobs()
    job, chunks = _job()
    await store.create(job, chunks, None)
    claimed = await store.claim("r1", 30)
    assert claimed is not None and claimed.state == JobState.RUNNING
    assert await store.claim("r2", 30) is None
    assert await store.renew(job.job_id, "r1", 30, 4)
    assert not await store.renew(job.job_id, "r2", 30, 4)  # not r2's
    assert await store.cancel(job.job_id)
    assert not await store.renew(job.job_id, "r1", 30, 8)
    assert not await store.cancel(job.job_id)  # ended already
    got = await store.get(job.job_id)
    assert got is not None and got.state == JobState.CANCELLED and got.cases_done == 4
    await store.close()


async def test_a_lapsed_lease_is_taken_over_and_the_old_runner_is_shut_out(
    open_jobs: StoreOpener,
) -> None:
    # r1 dies (stops renewing); r2 claims once the lease lapsed; r1 can no longer finish
    store = await open_jobs()
    job, chunks = _job()
    await store.create(job, chunks, None)
    assert await store.claim("r1", 0.2) is not None
    await asyncio.sleep(0.3)
    taken = await store.claim("r2", 30)
    assert taken is not None and taken.job_id == job.job_id
    assert not taken.progress_exact  # r1 may have recorded past its last checkpoint
    assert not await store.finish(job.job_id, "r1", JobState.SUCCEEDED, 10, "", None)
    assert await store.finish(job.job_id, "r2", JobState.SUCCEEDED, 10, "", {"cases": 10})
    got = await store.get(job.job_id)
    assert got is not None and got.summary == {"cases": 10} and got.lease_owner == ""
    assert await store.chunks(job.job_id, 0) == []  # the cases go with the job's end
    await store.close()


async def test_replicas_claiming_at_once_take_different_jobs(open_jobs: StoreOpener) -> None:
    # four stores (replicas) claim together over four jobs: each job once
    stores = [await open_jobs() for _ in range(4)]
    for _ in range(4):
        await stores[0].create(*_job(), None)
    claimed = await asyncio.gather(*(s.claim(f"r{i}", 30) for i, s in enumerate(stores)))
    ids = [c.job_id for c in claimed if c is not None]
    assert len(ids) == len(set(ids)) == 4
    for s in stores:
        await s.close()


async def test_a_tenant_past_its_open_jobs_is_refused(open_jobs: StoreOpener) -> None:
    # the limit counts queued and running jobs of that tenant only
    store = await open_jobs()
    await store.create(*_job("a"), 2)
    await store.create(*_job("a"), 2)
    with pytest.raises(TooManyOpenJobs):
        await store.create(*_job("a"), 2)
    await store.create(*_job("b"), 2)
    assert len(await store.list_jobs("a", None, None, 10)) == 2
    assert len(await store.list_jobs(None, JobState.QUEUED, None, 10)) == 3
    await store.close()


async def test_listing_pages_newest_first(open_jobs: StoreOpener) -> None:
    # a cursor of (created, id) continues after the previous page's last job
    from scorewire.jobs.sql import micros

    store = await open_jobs()
    made = []
    for _ in range(5):
        job, chunks = _job()
        await store.create(job, chunks, None)
        made.append(job.job_id)
    first = await store.list_jobs(None, None, None, 3)
    last = first[-1]
    rest = await store.list_jobs(None, None, (micros(last.created_at), last.job_id), 3)
    assert [j.job_id for j in first + rest] == made[::-1]
    await store.close()


async def test_only_ended_jobs_past_the_age_are_deleted(open_jobs: StoreOpener) -> None:
    # a cancelled job goes; a queued one stays however old
    from scorewire.jobs.sql import micros
    from scorewire.runs import utc_now

    store = await open_jobs()
    ended, chunks = _job()
    await store.create(ended, chunks, None)
    await store.cancel(ended.job_id)
    queued, chunks = _job()
    await store.create(queued, chunks, None)
    assert await store.prune(micros(utc_now())) == 1
    assert await store.get(ended.job_id) is None and await store.get(queued.job_id) is not None
    await store.close()


async def test_a_claim_takes_the_tenant_running_fewest_jobs(open_jobs: StoreOpener) -> None:
    # a queues three jobs before b's one: once one of a's runs, b's is claimed next
    store = await open_jobs()
    a_jobs = [_job("a")[0] for _ in range(3)]
    for job in a_jobs:
        await store.create(job, _job()[1], None)
        await asyncio.sleep(0.002)  # distinct creation times
    b_job, b_chunks = _job("b")
    await store.create(b_job, b_chunks, None)
    order = [await store.claim(f"r{i}", 30) for i in range(3)]
    assert [j.job_id for j in order if j is not None] == [
        a_jobs[0].job_id, b_job.job_id, a_jobs[1].job_id,
    ]  # fmt: skip
    assert all(j is not None and j.progress_exact for j in order)  # queued: nothing recorded
    await store.close()


async def test_a_released_job_gives_its_turn_and_resumes_at_its_checkpoint(
    open_jobs: StoreOpener,
) -> None:
    # a's job runs, b's waits: a is told another tenant waits, releases at 4 cases, b's job
    # is claimed next, then a's again, exactly at 4 and not counted as a failed claim
    store = await open_jobs()
    a_job, a_chunks = _job("a")
    await store.create(a_job, a_chunks, None)
    assert await store.claim("r1", 30) is not None
    assert not await store.others_waiting("a")  # nobody else has a job
    b_job, b_chunks = _job("b")
    await store.create(b_job, b_chunks, None)
    assert await store.others_waiting("a")
    assert not await store.others_waiting("b")  # a runs more than b: a's wait is no reason
    assert await store.renew(a_job.job_id, "r1", 30, 4)
    assert not await store.release(a_job.job_id, "r2", 4)  # not r2's to give back
    assert await store.release(a_job.job_id, "r1", 4)
    assert not await store.renew(a_job.job_id, "r1", 30, 8)  # no longer r1's
    nxt = await store.claim("r1", 30)
    assert nxt is not None and nxt.job_id == b_job.job_id
    again = await store.claim("r2", 30)
    assert again is not None and again.job_id == a_job.job_id
    assert again.cases_done == 4 and again.progress_exact and again.claims == 1
    await store.close()


async def test_with_one_runner_tenants_take_turns(open_jobs: StoreOpener) -> None:
    # a's three jobs came before b's: after a's first ends, b's is next, then a's again
    # (ordering by creation alone ran all of a's first)
    store = await open_jobs()
    a_jobs = []
    for _ in range(3):
        job, chunks = _job("a")
        await store.create(job, chunks, None)
        a_jobs.append(job)
        await asyncio.sleep(0.002)
    b_job, b_chunks = _job("b")
    await store.create(b_job, b_chunks, None)
    ran = []
    for _ in range(4):
        job = await store.claim("r1", 30)
        assert job is not None
        ran.append(job.tenant)
        assert await store.finish(job.job_id, "r1", JobState.SUCCEEDED, 10, "", None)
        await asyncio.sleep(0.002)
    assert ran == ["a", "b", "a", "a"]
    await store.close()


async def test_a_finished_jobs_webhook_is_stored_with_it_and_leased_to_one_sender(
    open_jobs: StoreOpener,
) -> None:
    # stored in the finish's transaction; one sender at a time; a failed try makes it due
    # again for any server; a delivered one is gone
    store = await open_jobs()
    job, chunks = _job()
    await store.create(job, chunks, None)
    assert await store.claim("r1", 30) is not None
    assert await store.finish(job.job_id, "r1", JobState.SUCCEEDED, 10, "", None,
                              ("http://hook.invalid/x", '{"job_id": "j"}'))  # fmt: skip
    (due,) = await store.due_webhooks("s1", 30, 10)
    assert (due.job_id, due.url, due.body, due.attempts) == (
        job.job_id, "http://hook.invalid/x", '{"job_id": "j"}', 0,
    )  # fmt: skip
    assert await store.due_webhooks("s2", 30, 10) == []  # leased to s1
    await store.webhook_tried(job.job_id, "s2", done=True, attempts=1, retry_at_us=0)
    await store.webhook_tried(job.job_id, "s1", done=False, attempts=1, retry_at_us=0)
    (again,) = await store.due_webhooks("s2", 30, 10)  # s2's wrong write changed nothing
    assert again.attempts == 1
    await store.webhook_tried(job.job_id, "s2", done=True, attempts=2, retry_at_us=0)
    assert await store.due_webhooks("s1", 30, 10) == []
    await store.close()


async def test_what_a_job_spent_is_kept_at_each_checkpoint_and_given_to_the_next_runner(
    open_jobs: StoreOpener,
) -> None:
    # the budget travels in the plan; spending is written by renew and release (None leaves
    # it), and the runner that takes the job over reads it back
    store = await open_jobs()
    job, chunks = _job()
    job.plan = JobPlan(compact=("contains:a",), budget_usd=0.5)
    await store.create(job, chunks, None)
    assert await store.claim("r1", 30) is not None
    assert await store.renew(job.job_id, "r1", 30, 4, 0.125)
    assert await store.renew(job.job_id, "r1", 30, 4)  # the lease alone: spending kept
    got = await store.get(job.job_id)
    assert got is not None and got.spent_usd == 0.125 and got.plan.budget_usd == 0.5
    assert await store.release(job.job_id, "r1", 8, 0.25)
    again = await store.claim("r2", 30)
    assert again is not None and again.spent_usd == 0.25 and again.cases_done == 8
    await store.close()


async def test_a_job_table_from_before_job_budgets_gains_the_column(tmp_path: Path) -> None:
    # a store file written by the previous release (no spent_usd column) opens, and its
    # jobs read as having spent nothing
    import sqlite3

    from scorewire.jobs import sql
    from scorewire.jobs.sqlite import SqliteJobStore

    path = tmp_path / "jobs.db"
    old = sqlite3.connect(path)
    names = sql.tables("")
    for text in sql.SCHEMA:  # the tables as first released: spent_usd is added on open
        old.execute(sql.statement(text, names))
    old.execute(
        "INSERT INTO jobs VALUES ('job_old', 't', 'j', ?, '{}', '', 'queued', 1, 0, '', '',"
        " 0, 0, NULL, '', 0, 0)",
        (JobPlan(compact=("contains:a",)).to_json(),),
    )
    old.commit()
    old.close()
    store = await SqliteJobStore.open(path)
    got = await store.get("job_old")
    assert got is not None and got.spent_usd == 0.0 and got.plan.budget_usd is None
    await store.close()
