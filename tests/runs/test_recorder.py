"""The recorder's guarantees on a real SQLite file: backpressure when the store is slow,
no result lost, and a failed store reported to the caller instead of dropped."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from scorewire.runs import Chunk, RunRecorder, RunsUnavailable, iter_results
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.scoring.recorded import CODEC

from tests.runs.test_store import chunk, run
from tests.support.wait import wait_until_async


async def test_a_full_queue_makes_appends_wait_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    recorder = RunRecorder(await SqliteRunStore.open(str(path)), queue_chunks=2, heartbeat_s=60)
    await recorder.start()
    r = run()
    await recorder.begin(r)
    # Another process holds the database's write lock: the writer's commit waits on it.
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        appends = [
            asyncio.create_task(recorder.append(chunk(r.run_id, i, ["Paris"]))) for i in range(8)
        ]
        # One chunk is in the blocked commit, two fill the queue, the rest wait for room.
        await wait_until_async(lambda: recorder._queue.full(), "the queue is full")
        await asyncio.sleep(0.1)  # the window in which nothing may complete
        assert not any(t.done() for t in appends)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    await asyncio.gather(*appends)
    stored = [rec async for _, rec in iter_results(recorder.store, CODEC, r.run_id)]
    assert len(stored) == 8
    assert recorder.commits < 1 + 8  # chunks that waited together went in one commit
    await recorder.close()


async def test_one_commit_takes_at_most_its_bytes_and_loses_nothing(tmp_path: Path) -> None:
    # 24 MiB of chunks queued behind a blocked commit go in two transactions, not one:
    # a transaction must fit in the store's deadline (MAX_BYTES_PER_COMMIT, 16 MiB).
    path = tmp_path / "runs.db"
    recorder = RunRecorder(await SqliteRunStore.open(str(path)), queue_chunks=16, heartbeat_s=60)
    await recorder.start()
    r = run()
    await recorder.begin(r)
    blob = b"x" * (3 * 1024 * 1024)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        appends = [asyncio.create_task(recorder.append(Chunk(r.run_id, blob, b"", 0)))]
        taken = lambda: recorder._queue.empty() and not recorder._idle.is_set()  # noqa: E731
        await wait_until_async(taken, "the first chunk in the blocked commit")
        appends += [
            asyncio.create_task(recorder.append(Chunk(r.run_id, blob, b"", 0))) for _ in range(8)
        ]
        await wait_until_async(lambda: recorder._queue.qsize() == 8, "24 MiB queued behind it")
        commits = recorder.commits
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    await asyncio.gather(*appends)
    assert recorder.commits - commits == 3  # the blocked one, then 5 + 3 chunks
    assert len(await recorder.store.chunks(r.run_id, after_seq=0, limit=99)) == 9
    await recorder.close()


async def test_a_store_that_fails_fails_the_append(tmp_path: Path) -> None:
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    recorder = RunRecorder(store, queue_chunks=4, heartbeat_s=60)
    await recorder.start()
    r = run()
    await recorder.begin(r)
    await store.close()  # the store is gone under the writer
    with pytest.raises(RunsUnavailable):
        await recorder.append(Chunk(r.run_id, b"", b"", 0))
    await recorder.close()
