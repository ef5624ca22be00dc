"""`StoreRunSource` in process: a real SQLite run store on an event loop of its own
thread, read from the calling thread as the viewer's request threads read it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from scorewire.runs import RunInfo, RunStatus, new_run_id, utc_now
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.viewer.store import StoreRuns, StoreRunSource
from scorewire.viewer.view_model import RunNotFound, SourceUnavailable


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own (the server's, in the viewer)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def _on(loop: asyncio.AbstractEventLoop, coro):  # type: ignore[no-untyped-def]
    return asyncio.run_coroutine_threadsafe(coro, loop).result(10)


@pytest.fixture
def store(loop: asyncio.AbstractEventLoop, tmp_path: Path) -> Iterator[SqliteRunStore]:
    s = _on(loop, SqliteRunStore.open(str(tmp_path / "runs.sqlite3")))
    try:
        yield s
    finally:
        _on(loop, s.close())


def _run(tenant: str, name: str) -> RunInfo:
    return RunInfo(
        run_id=new_run_id(),
        name=name,
        source="RunSuite",
        tenant=tenant,
        labels={"git_sha": "abc"},
        started_at=utc_now(),
        suite="checks: {}",
        suite_sha256="0" * 64,
        checks=["has_paris"],
        status=RunStatus.INCOMPLETE,
        ended_at=utc_now(),
    )


def test_a_run_without_a_summary_is_shown_interrupted_with_its_checks(
    loop: asyncio.AbstractEventLoop, store: SqliteRunStore
) -> None:
    run = _run("alice", "nightly")
    _on(loop, store.write([run], [], []))
    source = StoreRunSource(StoreRuns(store, loop, timeout_s=10), "alice")
    (listed,) = source.list_runs()
    assert (listed.id, listed.name, listed.interrupted, listed.labels) == (
        run.run_id,
        "nightly",
        True,
        {"git_sha": "abc"},
    )
    assert [c.name for c in source.get_run(run.run_id).checks] == ["has_paris"]
    assert source.results(run.run_id) == []
    with pytest.raises(RunNotFound):
        StoreRunSource(StoreRuns(store, loop, timeout_s=10), "bob").get_run(run.run_id)


def test_a_store_read_that_outlasts_the_timeout_is_unavailable_not_an_error_page(
    loop: asyncio.AbstractEventLoop, store: SqliteRunStore
) -> None:
    busy, release = threading.Event(), threading.Event()

    def block() -> None:  # the loop is busy until the test lets it go
        busy.set()
        release.wait(30)

    loop.call_soon_threadsafe(block)
    assert busy.wait(10)
    source = StoreRunSource(StoreRuns(store, loop, timeout_s=0.2), None)
    try:
        with pytest.raises(SourceUnavailable, match="SCOREWIRE_VIEWER_REQUEST_TIMEOUT_S"):
            source.list_runs()
    finally:
        release.set()
    assert source.list_runs() == []  # the loop answers again
