"""The SQLite label store: history, latest-wins, durability across reopen, concurrent writers."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
import sys
from asyncio.subprocess import PIPE
from dataclasses import replace

import pytest
from scorewire.labels.label_model import LabelQuery, LabelsUnavailable
from scorewire.labels.sqlite import SqliteLabelStore

from tests.labels.conftest import label


async def test_lookup_returns_the_latest_label_of_each_labeller(sqlite_store) -> None:
    # History is kept; per labeller the latest created_at counts.
    await sqlite_store.put([label(passed=False, at=1), label(passed=True, at=9)])
    await sqlite_store.put([label(labeller="bo", passed=False, at=3)])
    await sqlite_store.put([label(passed=False, at=5)])  # older than the pass at 9
    got = await sqlite_store.lookup("s1", label().output_hash, "default")
    assert [(lb.labeller, lb.passed) for lb in got] == [("ana", True), ("bo", False)]
    history = await sqlite_store.list_labels(
        LabelQuery(include_history=True), after_id=0, limit=100
    )
    assert len(history) == 4


async def test_same_time_goes_to_the_label_stored_last(sqlite_store) -> None:
    await sqlite_store.put([label(passed=True, at=5)])
    await sqlite_store.put([label(passed=False, at=5)])
    (got,) = await sqlite_store.lookup("s1", label().output_hash, "default")
    assert got.passed is False


async def test_lookup_separates_outputs_and_checks(sqlite_store) -> None:
    await sqlite_store.put([label(text="A"), label(text="B", check="tone")])
    assert await sqlite_store.lookup("s1", label(text="B").output_hash, "default") == []
    assert len(await sqlite_store.lookup("s1", label(text="B").output_hash, "tone")) == 1


async def test_labels_round_trip_every_field(sqlite_store) -> None:
    # Times keep microseconds and come back timezone-aware UTC.
    original = label(note="naïve — ok", check="tone")
    await sqlite_store.put([original])
    (got,) = await sqlite_store.lookup("s1", original.output_hash, "tone")
    assert got == original


async def test_labels_survive_closing_and_reopening_the_file(tmp_path) -> None:
    # An acknowledged put is committed: a new process opening the file sees it.
    path = str(tmp_path / "labels.db")
    first = await SqliteLabelStore.open(path)
    await first.put([label()])
    await first.close()
    second = await SqliteLabelStore.open(path)
    try:
        assert len(await second.lookup("s1", label().output_hash, "default")) == 1
    finally:
        await second.close()


async def test_file_is_in_wal_mode_with_full_sync(tmp_path) -> None:
    path = str(tmp_path / "labels.db")
    store = await SqliteLabelStore.open(path)
    await store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


async def test_concurrent_writers_on_one_file_never_clobber(tmp_path) -> None:
    # Two stores (two servers on one host) writing the same keys at once: all kept.
    path = str(tmp_path / "labels.db")
    a, b = await SqliteLabelStore.open(path), await SqliteLabelStore.open(path)
    try:
        writes = [
            store.put([label(labeller=name, at=i, passed=i % 2 == 0)])
            for i in range(40)
            for store, name in ((a, "ana"), (b, "bo"))
        ]
        await asyncio.gather(*writes)
        history = await a.list_labels(LabelQuery(include_history=True), after_id=0, limit=1000)
        assert len(history) == 80
        latest = await b.lookup("s1", label().output_hash, "default")
        assert [(lb.labeller, lb.created_at.second) for lb in latest] == [("ana", 39), ("bo", 39)]
    finally:
        await a.close()
        await b.close()


def _write_in_process(path: str, labeller: str, n: int) -> None:
    async def main() -> None:
        store = await SqliteLabelStore.open(path)
        for i in range(n):
            await store.put([label(sample_id=f"s{i}", labeller=labeller)])
        await store.close()

    asyncio.run(main())


@pytest.mark.slow
async def test_writer_processes_sharing_the_file_all_land(tmp_path) -> None:
    # Server workers are processes: busy_timeout queues their writes instead of failing.
    path = str(tmp_path / "labels.db")
    await (await SqliteLabelStore.open(path)).close()  # the schema exists before the race
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_in_process, args=(path, f"w{i}", 30)) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    store = await SqliteLabelStore.open(path)
    try:
        history = await store.list_labels(LabelQuery(include_history=True), after_id=0, limit=1000)
        assert len(history) == 90
    finally:
        await store.close()


async def test_a_closed_store_does_not_answer(tmp_path) -> None:
    store = await SqliteLabelStore.open(str(tmp_path / "labels.db"))
    await store.close()
    with pytest.raises(LabelsUnavailable):
        await store.lookup("s1", label().output_hash, "default")
    with pytest.raises(LabelsUnavailable):
        await store.put([label()])


async def test_an_unopenable_path_is_reported_at_open(tmp_path) -> None:
    # A directory that does not exist: a configuration error at start-up.
    with pytest.raises(LabelsUnavailable):
        await SqliteLabelStore.open(str(tmp_path / "missing" / "labels.db"))


async def test_list_filters_and_pages_by_storage_id(sqlite_store) -> None:
    await sqlite_store.put([label(sample_id=f"s{i}") for i in range(5)])
    await sqlite_store.put([label(sample_id="s2", labeller="bo")])
    first = await sqlite_store.list_labels(LabelQuery(), after_id=0, limit=4)
    rest = await sqlite_store.list_labels(LabelQuery(), after_id=first[-1][0], limit=4)
    assert [lb.sample_id for _, lb in first + rest] == ["s0", "s1", "s2", "s3", "s4", "s2"]
    only = await sqlite_store.list_labels(LabelQuery(labeller="bo"), after_id=0, limit=10)
    assert [lb.sample_id for _, lb in only] == ["s2"]


_SCHEMA_BEFORE_TENANTS = """
CREATE TABLE label_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT NOT NULL, output_hash TEXT NOT NULL,
    label_check TEXT NOT NULL, labeller TEXT NOT NULL, passed INTEGER NOT NULL,
    note TEXT NOT NULL, created_at_us INTEGER NOT NULL, stored_at_us INTEGER NOT NULL
);
INSERT INTO label_history (sample_id, output_hash, label_check, labeller, passed, note,
    created_at_us, stored_at_us) VALUES ('s1', '{hash}', 'default', 'ana', 1, '', 1, 1);
"""


async def test_a_file_made_before_tenants_is_upgraded_in_place(tmp_path) -> None:
    # The old label keeps counting (no tenant: every run without a tenant reads it), and
    # the upgraded file takes labels with tenants and request ids.
    path = str(tmp_path / "old.db")
    with sqlite3.connect(path) as db:
        db.executescript(_SCHEMA_BEFORE_TENANTS.format(hash=label().output_hash))
    db.close()
    store = await SqliteLabelStore.open(path)
    try:
        (old,) = await store.lookup("s1", label().output_hash, "default")
        assert (old.labeller, old.tenant, old.passed) == ("ana", "", True)
        await store.put([replace(label(passed=False), tenant="checkout")])
        mine = await store.lookup("s1", label().output_hash, "default", tenant="checkout")
        assert [(lb.tenant, lb.passed) for lb in mine] == [("checkout", False)]
    finally:
        await store.close()


def test_a_write_is_either_abandoned_or_committed_never_both() -> None:
    # The decision a timed-out put and its thread share: whoever moves first wins.
    from scorewire.labels.sqlite import _Attempt

    given_up = _Attempt()
    assert given_up.abandon() and not given_up.may_commit()  # rolls back: "nothing stored"
    committing = _Attempt()
    assert committing.may_commit() and not committing.abandon()  # waited for, then answered


async def test_an_up_to_date_file_opens_while_another_process_holds_the_write_lock(
    tmp_path,
) -> None:
    # Opening checks the schema without taking the write lock (a restart next to a busy
    # writer must not fail), and reads work beside the writer (WAL).
    from tests.labels.test_truthful_errors import _HOLDER

    path = str(tmp_path / "labels.db")
    await (await SqliteLabelStore.open(path)).close()
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _HOLDER, path, stdin=PIPE, stdout=PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert (await holder.stdout.readline()).strip() == b"locked"
        store = await SqliteLabelStore.open(path)
        try:
            assert await store.list_labels(LabelQuery(), after_id=0, limit=1) == []
        finally:
            await store.close()
        holder.stdin.write(b"release\n")
        await holder.stdin.drain()
        assert await asyncio.wait_for(holder.wait(), 30) == 0
    finally:
        if holder.returncode is None:
            holder.kill()
            await holder.wait()
