"""The run store itself, on SQLite and on a real PostgreSQL: write, read, page, retire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from scorewire.runs import Chunk, RunInfo, RunQuery, RunStatus, iter_results, new_run_id
from scorewire.scoring.recorded import CODEC, cases_blob
from scorewire.v1 import scoring_pb2 as pb

from tests.runs.conftest import case

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def run(name: str = "nightly", *, at: int = 0, tenant: str = "", **labels: str) -> RunInfo:
    return RunInfo(
        run_id=new_run_id(),
        name=name,
        source="RunSuite",
        tenant=tenant,
        labels=dict(labels),
        started_at=T0 + timedelta(seconds=at),
        suite="checks: []",
        suite_sha256="0" * 64,
        checks=["has_paris"],
        owner="p_test",
    )


def chunk(run_id: str, first: int, texts: list[str]) -> Chunk:
    cases = [case(f"s{first + i}", t) for i, t in enumerate(texts)]
    results = pb.RunSuiteResponse()
    for i, t in enumerate(texts):
        ok = "Paris" in t
        results.results.results.add(
            index=first + i,
            sample_id=f"s{first + i}",
            passed=ok,
            scores=[pb.Score(name="has_paris", type="contains", value=float(ok), passed=ok)],
        )
    return Chunk(
        run_id,
        cases_blob([c.SerializeToString() for c in cases]),
        results.SerializeToString(),
        len(texts),
    )


def finished(r: RunInfo, status: RunStatus = RunStatus.COMPLETE) -> RunInfo:
    r.status = status
    r.ended_at = r.started_at + timedelta(seconds=1)
    r.summary = {"cases": r.results}
    return r


async def test_a_written_run_reads_back_with_its_results_in_order(open_store) -> None:
    store = await open_store()
    try:
        r = run(model="gpt")
        await store.write([r], [chunk(r.run_id, 0, ["Paris", "Lyon"])], [])
        await store.write([], [chunk(r.run_id, 2, ["Paris!"])], [finished(r)])
        got = await store.get_run(r.run_id)
        assert got is not None
        assert (got.name, got.labels, got.status, got.results) == (
            "nightly",
            {"model": "gpt"},
            RunStatus.COMPLETE,
            3,
        )
        assert got.started_at == T0 and got.ended_at == T0 + timedelta(seconds=1)
        records = [rec async for _, rec in iter_results(store, CODEC, r.run_id)]
        assert [(x.sample_id, x.output, x.passed) for x in records] == [
            ("s0", "Paris", True),
            ("s1", "Lyon", False),
            ("s2", "Paris!", True),
        ]
        assert records[0].input == "capital of France?"
    finally:
        await store.close()


async def test_results_filter_by_outcome_and_resume_after_a_position(open_store) -> None:
    store = await open_store()
    try:
        r = run()
        await store.write([r], [chunk(r.run_id, 0, ["Paris", "Lyon", "Nice"])], [])
        await store.write([], [chunk(r.run_id, 3, ["Paris", "Metz"])], [])
        failed = [
            (pos, rec.sample_id)
            async for pos, rec in iter_results(store, CODEC, r.run_id, outcome="F")  # type: ignore[arg-type]
        ]
        assert [s for _, s in failed] == ["s1", "s2", "s4"]
        # Resuming after the second failure yields only the third (across chunks).
        rest = [
            rec.sample_id
            async for _, rec in iter_results(
                store,
                CODEC,
                r.run_id,
                outcome="F",
                after=failed[1][0],  # type: ignore[arg-type]
            )
        ]
        assert rest == ["s4"]
        # A check the run does not have matches nothing.
        assert [x async for x in iter_results(store, CODEC, r.run_id, check="nope")] == []
    finally:
        await store.close()


async def test_listing_is_newest_first_filtered_and_paged(open_store) -> None:
    store = await open_store()
    try:
        runs = [run("a", at=1, model="x"), run("b", at=2, model="y"), run("a", at=3, model="y")]
        await store.write(runs, [], [])
        every = await store.list_runs(RunQuery(), after=None, limit=10)
        assert [x.run_id for x in every] == [runs[2].run_id, runs[1].run_id, runs[0].run_id]
        named = await store.list_runs(RunQuery(name="a"), after=None, limit=10)
        assert [x.run_id for x in named] == [runs[2].run_id, runs[0].run_id]
        labelled = await store.list_runs(RunQuery(labels={"model": "y"}), after=None, limit=10)
        assert [x.run_id for x in labelled] == [runs[2].run_id, runs[1].run_id]
        timed = await store.list_runs(
            RunQuery(started_after=T0 + timedelta(seconds=2)), after=None, limit=10
        )
        assert [x.run_id for x in timed] == [runs[2].run_id, runs[1].run_id]
        first = await store.list_runs(RunQuery(), after=None, limit=1)
        second = await store.list_runs(
            RunQuery(), after=(first[0].started_at, first[0].run_id), limit=1
        )
        assert [first[0].run_id, second[0].run_id] == [runs[2].run_id, runs[1].run_id]
    finally:
        await store.close()


async def test_tenant_filter_sees_only_that_tenants_runs(open_store) -> None:
    store = await open_store()
    try:
        mine, theirs = run(tenant="checkout"), run(tenant="search")
        await store.write([mine, theirs], [], [])
        got = await store.list_runs(RunQuery(tenant="checkout"), after=None, limit=10)
        assert [x.run_id for x in got] == [mine.run_id]
    finally:
        await store.close()


async def test_delete_removes_the_run_and_its_results(open_store) -> None:
    store = await open_store()
    try:
        r = run()
        await store.write([r], [chunk(r.run_id, 0, ["Paris"])], [finished(r)])
        assert await store.delete_run(r.run_id) is True
        assert await store.get_run(r.run_id) is None
        assert await store.chunks(r.run_id, after_seq=0, limit=10) == []
        assert await store.delete_run(r.run_id) is False
    finally:
        await store.close()


async def test_retention_deletes_old_and_excess_finished_runs_but_never_running_ones(
    open_store,
) -> None:
    store = await open_store()
    try:
        old, mid, new, live = run(at=0), run(at=10), run(at=20), run(at=-100)
        await store.write([old, mid, new, live], [], [finished(old), finished(mid), finished(new)])
        assert await store.enforce_retention(older_than=T0 + timedelta(seconds=5), keep=None) == 1
        assert await store.get_run(old.run_id) is None
        assert await store.enforce_retention(older_than=None, keep=1) == 1
        left = await store.list_runs(RunQuery(), after=None, limit=10)
        assert {x.run_id for x in left} == {new.run_id, live.run_id}  # running: kept
    finally:
        await store.close()


async def test_runs_of_an_owner_whose_heartbeat_stopped_are_marked_incomplete(open_store) -> None:
    store = await open_store()
    try:
        dead, alive = run(), run()
        alive.owner = "p_alive"
        await store.write([dead, alive], [chunk(dead.run_id, 0, ["Paris"])], [])
        await store.heartbeat("p_test", T0)
        await store.heartbeat("p_alive", T0 + timedelta(seconds=60))
        assert await store.mark_stale(T0 + timedelta(seconds=30)) == 1
        got = await store.get_run(dead.run_id)
        assert got is not None and got.status == RunStatus.INCOMPLETE and got.results == 1
        still = await store.get_run(alive.run_id)
        assert still is not None and still.status == RunStatus.RUNNING
    finally:
        await store.close()


async def test_a_finished_run_is_not_finished_again(open_store) -> None:
    # A late "incomplete" (a cancelled call's cleanup) never overwrites a completed run.
    store = await open_store()
    try:
        r = run()
        await store.write([r], [], [finished(r)])
        late = finished(run(), RunStatus.INCOMPLETE)
        late.run_id = r.run_id
        await store.write([], [], [late])
        got = await store.get_run(r.run_id)
        assert got is not None and got.status == RunStatus.COMPLETE
    finally:
        await store.close()


async def test_runs_survive_closing_and_reopening_the_store(open_store) -> None:
    store = await open_store()
    r = run()
    await store.write([r], [chunk(r.run_id, 0, ["Paris"])], [finished(r)])
    await store.close()
    again = await open_store()
    try:
        got = await again.get_run(r.run_id)
        assert got is not None and got.results == 1
    finally:
        await again.close()


@pytest.mark.parametrize("bad", ["", "run_nope", "run_\x00"])
async def test_an_unknown_run_is_none(open_store, bad: str) -> None:
    store = await open_store()
    try:
        assert await store.get_run(bad) is None
    finally:
        await store.close()


async def test_a_chunks_keys_are_recorded_with_it_per_scope_and_forgotten_by_age(
    open_store,
) -> None:
    # the keys land in the chunk's transaction; a key in another scope is another key; a
    # key written twice (a writer told to) is kept once; keys go once past the age
    store = await open_store()
    try:
        r = run()
        keyed = chunk(r.run_id, 0, ["Paris", "Lyon"])
        keyed.keys, keyed.scope = ("t/o1", "t/o2"), "rule-a"
        other = chunk(r.run_id, 2, ["Paris"])
        other.keys, other.scope = ("t/o1",), "rule-b"
        await store.write([r], [keyed, other], [])
        asked = [f"t/o{i}" for i in range(1, 1200)]  # more than one statement's worth
        assert await store.recorded("rule-a", asked) == {"t/o1", "t/o2"}
        assert await store.recorded("rule-b", asked) == {"t/o1"}
        assert await store.recorded("rule-c", asked) == set()
        again = chunk(r.run_id, 3, ["Paris"])
        again.keys, again.scope = ("t/o2",), "rule-a"
        await store.write([], [again], [])  # no conflict error: the chunk still lands
        assert (await store.get_run(r.run_id)).results == 4  # type: ignore[union-attr]
        assert await store.forget_recorded(datetime.now(UTC) - timedelta(hours=1)) == 0
        assert await store.forget_recorded(datetime.now(UTC) + timedelta(seconds=1)) == 3
        assert await store.recorded("rule-a", asked) == set()
    finally:
        await store.close()
