"""The run store in PostgreSQL, shared by every replica (`SCOREWIRE_RUNS_URL`).

Same tables as the SQLite store (prefixed `scorewire_run_`), same statements with `%s`
placeholders. A `write` is one transaction and returns after its COMMIT, which
PostgreSQL acknowledges once the commit record is flushed to its WAL (the default
`synchronous_commit=on`). The schema is created on first use under an advisory lock, so
replicas starting together do not race on `CREATE TABLE`.

A database that does not answer makes a call fail with `RunsUnavailable` once its
deadline has passed (`scorewire.core.postgres_calls.within`): `SCOREWIRE_STORE_TIMEOUT_S` for
the calls a request waits on, the longer maintenance deadline for the heartbeat, stale
runs and retention, which no caller waits on and which may delete many runs at once.
Once the database answers again, so does the store: the pool drops the connections
that broke and checks the others before handing them out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool
from scorewire.core.postgres_calls import open_pool, within
from scorewire.runs import sql
from scorewire.runs.run_model import Chunk, RunInfo, RunQuery, RunsUnavailable

log = logging.getLogger("scorewire.runs")

T = TypeVar("T")

TIMEOUT_S = 2.0
"""The most a call a request waits on may take (`SCOREWIRE_STORE_TIMEOUT_S`)."""
MAINTENANCE_TIMEOUT_S = 10.0
"""The most a maintenance call may take (the server uses `SCOREWIRE_RUNS_HEARTBEAT_S`)."""
_SCHEMA_LOCK_KEY = 0x5C0E_2B45  # pg_advisory_xact_lock key: "scorewire runs"
_TABLES = sql.tables("scorewire_run_")
# Maintenance statements get the maintenance deadline on the server too (this transaction).
_LONGER_STATEMENTS = "SELECT set_config('statement_timeout', %s, true)"


def _pg(statement: str) -> str:
    return sql.statements(statement, _TABLES).replace("?", "%s")


class PostgresRunStore:
    """A `RunStore` in PostgreSQL. Open it with `PostgresRunStore.open(url)`."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        *,
        timeout_s: float = TIMEOUT_S,
        maintenance_timeout_s: float = MAINTENANCE_TIMEOUT_S,
    ) -> None:
        self._pool = pool
        self._timeout_s = timeout_s
        self._maintenance_s = max(timeout_s, maintenance_timeout_s)
        self._schema_ready = False
        self._schema_lock = asyncio.Lock()
        self._closed = False

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        max_connections: int = 8,
        timeout_s: float = TIMEOUT_S,
        maintenance_timeout_s: float = MAINTENANCE_TIMEOUT_S,
    ) -> PostgresRunStore:
        """A store on the database at `url`; connects in the background.

        `timeout_s` bounds each call a request waits on, `maintenance_timeout_s` each
        heartbeat, stale-run and retention call.
        """
        pool = open_pool(
            url,
            name="scorewire-runs",
            timeout_s=timeout_s,
            max_size=max_connections,
            longest_s=maintenance_timeout_s,
        )
        await pool.open(wait=False)
        return cls(pool, timeout_s=timeout_s, maintenance_timeout_s=maintenance_timeout_s)

    async def _ensure_schema(self) -> None:
        async with self._schema_lock:
            if self._schema_ready:
                return
            async with self._pool.connection() as conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
                for statement in (*sql.SCHEMA, sql.PG_CHUNKS, sql.CHUNKS_INDEX):
                    await conn.execute(sql.statements(statement, _TABLES))
            self._schema_ready = True

    async def _run(self, op: Callable[[], Awaitable[T]], *, maintenance: bool = False) -> T:
        """`op()` within its deadline; RunsUnavailable naming the store when it fails.

        The caller's message says what happened and never quotes the driver's error
        (it may name the database's host); the log has that.
        """
        if self._closed:
            raise RunsUnavailable("the run store (PostgreSQL) is closed")
        timeout_s = self._maintenance_s if maintenance else self._timeout_s

        async def guarded() -> T:
            if not self._schema_ready:
                await self._ensure_schema()
            return await op()

        try:
            return await within(guarded, timeout_s)
        except TimeoutError:
            message = f"the run store (PostgreSQL) did not answer within {timeout_s:g} s"
            log.warning("run store: %s", message)
        except psycopg.Error as err:
            message = f"the run store (PostgreSQL) failed: {type(err).__name__}"
            log.warning("run store: %s: %s", message, str(err).strip())
        raise RunsUnavailable(message)

    async def _transaction(
        self, plan: list[tuple[str, list[tuple[Any, ...]]]], *, maintenance: bool = False
    ) -> list[int]:
        async def run() -> list[int]:
            counts = []
            async with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                for statement, rows in plan:
                    await cur.executemany(statement.replace("?", "%s"), rows)
                    counts.append(cur.rowcount)
            return counts

        return await self._run(run, maintenance=maintenance)

    @property
    def _maintenance_ms(self) -> int:
        return int(self._maintenance_s * 1000)

    async def write(
        self, created: Sequence[RunInfo], chunks: Sequence[Chunk], finished: Sequence[RunInfo]
    ) -> None:
        """Create runs, append chunks and finish runs in one transaction."""
        await self._transaction(sql.write_plan(_TABLES, created, chunks, finished))

    async def recorded(self, scope: str, keys: Sequence[str]) -> set[str]:
        """Which of `keys` a chunk recorded in `scope` (see `RunStore.recorded`)."""

        async def run() -> set[str]:
            found: set[str] = set()
            async with self._pool.connection() as conn, conn.cursor() as cur:
                for i in range(0, len(keys), sql.KEYS_PER_QUERY):
                    part = keys[i : i + sql.KEYS_PER_QUERY]
                    await cur.execute(_pg(sql.recorded_query(_TABLES, len(part))), [scope, *part])
                    found.update(r[0] for r in await cur.fetchall())
            return found

        return await self._run(run)

    async def forget_recorded(self, before: datetime) -> int:
        """Forget the keys recorded before `before`; how many."""
        statement = _pg(sql.FORGET_RECORDED)
        counts = await self._transaction([(statement, [(sql.micros(before),)])], maintenance=True)
        return counts[0]

    async def heartbeat(self, owner: str, now: datetime) -> None:
        """Say that `owner` is alive."""
        await self._transaction(
            [(_pg(sql.HEARTBEAT), [(owner, sql.micros(now))])], maintenance=True
        )

    async def mark_stale(self, seen_before: datetime) -> int:
        """Mark incomplete the running runs of owners not seen since `seen_before`."""
        at = sql.micros(seen_before)

        async def run() -> int:
            async with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                await cur.execute(_LONGER_STATEMENTS, (f"{self._maintenance_ms}ms",))
                await cur.execute(_pg(sql.MARK_STALE), (at,))
                n = cur.rowcount
                await cur.execute(_pg(sql.FORGET_OWNERS), (at,))
            return n

        return await self._run(run, maintenance=True)

    async def reopen(self, run_id: str) -> bool:
        """Mark running again a run marked incomplete (see `RunStore.reopen`)."""
        counts = await self._transaction([(_pg(sql.REOPEN_RUN), [(run_id,)])])
        return counts[0] > 0

    async def enforce_retention(self, *, older_than: datetime | None, keep: int | None) -> int:
        """Delete finished runs started before `older_than` and all but the newest `keep`."""

        async def run() -> int:
            doomed: set[str] = set()
            async with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                await cur.execute(_LONGER_STATEMENTS, (f"{self._maintenance_ms}ms",))
                if older_than is not None:
                    await cur.execute(_pg(sql.EXPIRED), (sql.micros(older_than),))
                    doomed.update(r[0] for r in await cur.fetchall())
                if keep is not None:
                    await cur.execute(_pg(sql.BEYOND_KEEP_PG), (keep,))
                    doomed.update(r[0] for r in await cur.fetchall())
                for statement in (sql.DELETE_CHUNKS, sql.DELETE_LABELS, sql.DELETE_RUN):
                    if doomed:
                        await cur.executemany(_pg(statement), [(r,) for r in sorted(doomed)])
            return len(doomed)

        return await self._run(run, maintenance=True)

    async def get_run(self, run_id: str) -> RunInfo | None:
        """The run, or None."""
        if "\x00" in run_id:
            return None  # PostgreSQL text cannot hold NUL, so no stored id has one

        async def run() -> RunInfo | None:
            async with self._pool.connection() as conn, conn.cursor() as cur:
                await cur.execute(_pg(sql.GET_RUN), (run_id,))
                row = await cur.fetchone()
            return None if row is None else sql.row_run(row)

        return await self._run(run)

    async def list_runs(
        self, query: RunQuery, *, after: tuple[datetime, str] | None, limit: int
    ) -> list[RunInfo]:
        """Up to `limit` runs, newest first, after the cursor."""
        statement, args = sql.list_query(_TABLES, query, after, limit)

        async def run() -> list[RunInfo]:
            async with self._pool.connection() as conn, conn.cursor() as cur:
                await cur.execute(statement.replace("?", "%s"), args)
                return [sql.row_run(r) for r in await cur.fetchall()]

        return await self._run(run)

    async def chunks(self, run_id: str, *, after_seq: int, limit: int) -> list[tuple[int, Chunk]]:
        """Up to `limit` chunks of the run after `after_seq`, in the order they were written."""

        async def run() -> list[tuple[int, Chunk]]:
            async with self._pool.connection() as conn, conn.cursor() as cur:
                await cur.execute(_pg(sql.CHUNKS), (run_id, after_seq, limit))
                rows = await cur.fetchall()
            return [(r[0], Chunk(r[1], bytes(r[2]), bytes(r[3]), r[4])) for r in rows]

        return await self._run(run)

    async def delete_run(self, run_id: str) -> bool:
        """Delete the run and its chunks; False when there was none."""
        if "\x00" in run_id:
            return False

        async def run() -> bool:
            async with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                await cur.execute(_pg(sql.DELETE_CHUNKS), (run_id,))
                await cur.execute(_pg(sql.DELETE_LABELS), (run_id,))
                await cur.execute(_pg(sql.DELETE_RUN), (run_id,))
                return cur.rowcount > 0

        return await self._run(run)

    async def close(self) -> None:
        """Close the pool; later calls raise RunsUnavailable."""
        if self._closed:
            return
        self._closed = True
        await self._pool.close(timeout=1.0)
