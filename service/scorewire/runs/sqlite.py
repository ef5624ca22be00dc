"""The run store in one SQLite file under the state directory: the default.

Durability: WAL mode with `synchronous=NORMAL`. A commit is in the log (in the OS's page
cache) before `write` returns, so a server process killed with SIGKILL loses nothing it
committed; only a power cut or kernel crash may roll back the last commits (`FULL` would
fsync every chunk; runs are re-runnable evidence, labels are people's work, hence the
difference with the label store). A transaction either commits whole or not at all, so
a run is never half-written: a crash leaves a run `running`, which the next server's
heartbeat check marks `incomplete`, with every chunk that was committed.

sqlite3 blocks, so every call runs on one dedicated thread that owns the connection.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, TypeVar

from scorewire.runs import sql
from scorewire.runs.run_model import Chunk, RunInfo, RunQuery, RunsUnavailable

log = logging.getLogger("scorewire.runs")

T = TypeVar("T")

_BUSY_TIMEOUT_MS = 5000
_TABLES = sql.tables("")


class SqliteRunStore:
    """A `RunStore` in a SQLite file. Open it with `SqliteRunStore.open(path)`."""

    def __init__(self, executor: ThreadPoolExecutor, conn: sqlite3.Connection) -> None:
        self._executor = executor
        self._conn = conn
        self._closed = False

    @classmethod
    async def open(cls, path: str) -> SqliteRunStore:
        """Open (creating if absent) the store at `path`; RunsUnavailable when it cannot."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scorewire-runs")

        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            # The default 4 KiB pages: 64 KiB pages cost more CPU per commit here, each
            # commit rewriting whole leaf and index pages (measured, 80 chunks of 100 kB).
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in (*sql.SCHEMA, sql.SQLITE_CHUNKS, sql.CHUNKS_INDEX):
                    conn.execute(sql.statements(statement, _TABLES))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return conn

        loop = asyncio.get_running_loop()
        try:
            conn = await loop.run_in_executor(executor, connect)
        except sqlite3.Error as err:
            executor.shutdown(wait=False)
            raise RunsUnavailable(f"the run store {path} cannot be opened: {err}") from None
        return cls(executor, conn)

    async def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise RunsUnavailable("the run store (SQLite) is closed")
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, fn, self._conn)
        except sqlite3.Error as err:
            message = f"the run store (SQLite) failed: {type(err).__name__}"
            log.warning("run store: %s: %s", message, err)
            raise RunsUnavailable(message) from None

    async def _transaction(self, plan: list[tuple[str, list[tuple[Any, ...]]]]) -> None:
        def run(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement, rows in plan:
                    conn.executemany(statement, rows)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

        await self._call(run)

    async def write(
        self, created: Sequence[RunInfo], chunks: Sequence[Chunk], finished: Sequence[RunInfo]
    ) -> None:
        """Create runs, append chunks and finish runs in one transaction."""
        await self._transaction(sql.write_plan(_TABLES, created, chunks, finished))

    async def recorded(self, scope: str, keys: Sequence[str]) -> set[str]:
        """Which of `keys` a chunk recorded in `scope` (see `RunStore.recorded`)."""

        def run(conn: sqlite3.Connection) -> set[str]:
            found: set[str] = set()
            for i in range(0, len(keys), sql.KEYS_PER_QUERY):
                part = keys[i : i + sql.KEYS_PER_QUERY]
                rows = conn.execute(sql.recorded_query(_TABLES, len(part)), [scope, *part])
                found.update(r[0] for r in rows)
            return found

        return await self._call(run)

    async def forget_recorded(self, before: datetime) -> int:
        """Forget the keys recorded before `before`; how many."""
        statement = sql.statements(sql.FORGET_RECORDED, _TABLES)
        at = sql.micros(before)
        return int(await self._call(lambda c: c.execute(statement, (at,)).rowcount))

    async def heartbeat(self, owner: str, now: datetime) -> None:
        """Say that `owner` is alive."""
        statement = sql.statements(sql.HEARTBEAT, _TABLES)
        await self._transaction([(statement, [(owner, sql.micros(now))])])

    async def mark_stale(self, seen_before: datetime) -> int:
        """Mark incomplete the running runs of owners not seen since `seen_before`."""
        at = sql.micros(seen_before)

        def run(conn: sqlite3.Connection) -> int:
            conn.execute("BEGIN IMMEDIATE")
            try:
                n = conn.execute(sql.statements(sql.MARK_STALE, _TABLES), (at,)).rowcount
                conn.execute(sql.statements(sql.FORGET_OWNERS, _TABLES), (at,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return n

        return await self._call(run)

    async def reopen(self, run_id: str) -> bool:
        """Mark running again a run marked incomplete (see `RunStore.reopen`)."""
        statement = sql.statements(sql.REOPEN_RUN, _TABLES)
        return bool(await self._call(lambda c: c.execute(statement, (run_id,)).rowcount))

    async def enforce_retention(self, *, older_than: datetime | None, keep: int | None) -> int:
        """Delete finished runs started before `older_than` and all but the newest `keep`."""

        def run(conn: sqlite3.Connection) -> int:
            doomed: set[str] = set()
            if older_than is not None:
                rows = conn.execute(sql.statements(sql.EXPIRED, _TABLES), (sql.micros(older_than),))
                doomed.update(r[0] for r in rows)
            if keep is not None:
                rows = conn.execute(sql.statements(sql.BEYOND_KEEP, _TABLES), (keep,))
                doomed.update(r[0] for r in rows)
            if not doomed:
                return 0
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in (sql.DELETE_CHUNKS, sql.DELETE_LABELS, sql.DELETE_RUN):
                    conn.executemany(
                        sql.statements(statement, _TABLES), [(r,) for r in sorted(doomed)]
                    )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return len(doomed)

        return await self._call(run)

    async def get_run(self, run_id: str) -> RunInfo | None:
        """The run, or None."""

        def run(conn: sqlite3.Connection) -> RunInfo | None:
            row = conn.execute(sql.statements(sql.GET_RUN, _TABLES), (run_id,)).fetchone()
            return None if row is None else sql.row_run(row)

        return await self._call(run)

    async def list_runs(
        self, query: RunQuery, *, after: tuple[datetime, str] | None, limit: int
    ) -> list[RunInfo]:
        """Up to `limit` runs, newest first, after the cursor."""
        statement, args = sql.list_query(_TABLES, query, after, limit)

        def run(conn: sqlite3.Connection) -> list[RunInfo]:
            return [sql.row_run(r) for r in conn.execute(statement, args)]

        return await self._call(run)

    async def chunks(self, run_id: str, *, after_seq: int, limit: int) -> list[tuple[int, Chunk]]:
        """Up to `limit` chunks of the run after `after_seq`, in the order they were written."""

        def run(conn: sqlite3.Connection) -> list[tuple[int, Chunk]]:
            rows = conn.execute(sql.statements(sql.CHUNKS, _TABLES), (run_id, after_seq, limit))
            return [(r[0], Chunk(r[1], bytes(r[2]), bytes(r[3]), r[4])) for r in rows]

        return await self._call(run)

    async def delete_run(self, run_id: str) -> bool:
        """Delete the run and its chunks; False when there was none."""

        def run(conn: sqlite3.Connection) -> bool:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(sql.statements(sql.DELETE_CHUNKS, _TABLES), (run_id,))
                conn.execute(sql.statements(sql.DELETE_LABELS, _TABLES), (run_id,))
                n = conn.execute(sql.statements(sql.DELETE_RUN, _TABLES), (run_id,)).rowcount
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return n > 0

        return await self._call(run)

    async def close(self) -> None:
        """Close the connection; later calls raise RunsUnavailable."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._conn.close)
        self._executor.shutdown(wait=True)
