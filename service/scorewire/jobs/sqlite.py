"""The embedded job store: one SQLite file (WAL, synchronous FULL) under the state directory.

Every call is one transaction in a thread; a claim is `BEGIN IMMEDIATE` (the write lock
first), so two processes on the file never take the same job. Replicas on different
hosts need the PostgreSQL store (`SCOREWIRE_DATABASE_URL`).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from scorewire.jobs import sql
from scorewire.jobs.job_model import (
    CaseChunk,
    Job,
    JobState,
    JobsUnavailable,
    PendingWebhook,
    TooManyOpenJobs,
    utc_now,
)
from scorewire.scoring.recorded import cases_blob, split_cases

T = TypeVar("T")
_T = sql.tables("")
CHUNKS_PER_READ = 8


def _s(text: str) -> str:
    return sql.statement(text, _T)


class SqliteJobStore:
    """A `JobStore` in one SQLite file. Open it with `SqliteJobStore.open(path)`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.description = f"sqlite:{path}"
        self._conn = conn
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path) -> SqliteJobStore:
        """Open (and create) the file and its tables."""

        def connect() -> sqlite3.Connection:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                   timeout=10.0)  # fmt: skip
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")  # stored means on disk
            for text in sql.SCHEMA:
                conn.execute(_s(text))
            have = {r[1] for r in conn.execute(_s("PRAGMA table_info({jobs})"))}
            for name, kind in sql.ADDED_COLUMNS:
                if name in have:
                    continue
                try:
                    conn.execute(_s(f"ALTER TABLE {{jobs}} ADD COLUMN {name} {kind}"))
                except sqlite3.OperationalError as err:  # another process added it first
                    if "duplicate column" not in str(err):
                        raise
            return conn

        try:
            return cls(path, await asyncio.to_thread(connect))
        except (OSError, sqlite3.Error) as err:
            raise JobsUnavailable(f"cannot open the job store {path}: {err}") from None

    async def _tx(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                out = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return out

        async with self._lock:
            work = asyncio.ensure_future(asyncio.to_thread(run))
            try:
                return await asyncio.shield(work)
            except asyncio.CancelledError:
                await asyncio.wait([work])  # the thread is still in the connection
                raise
            except sqlite3.Error as err:
                raise JobsUnavailable(f"the job store {self.description} failed: {err}") from None

    async def create(self, job: Job, chunks: Sequence[CaseChunk], max_open: int | None) -> None:
        """Store the job and its cases in one transaction (see `JobStore.create`)."""

        def create(conn: sqlite3.Connection) -> None:
            if max_open is not None:
                (n,) = conn.execute(_s(sql.OPEN_OF_TENANT), (job.tenant,)).fetchone()
                if n >= max_open:
                    raise TooManyOpenJobs(f"{n} jobs are queued or running")
            conn.execute(_s(sql.INSERT_JOB), sql.job_row(job))
            conn.executemany(
                _s(sql.INSERT_CHUNK),
                [(job.job_id, c.seq, c.first, cases_blob(c.cases)) for c in chunks],
            )

        await self._tx(create)

    async def get(self, job_id: str) -> Job | None:
        """One job."""
        rows = await self._tx(lambda c: c.execute(_s(sql.GET_JOB), (job_id,)).fetchall())
        return sql.row_job(rows[0]) if rows else None

    async def list_jobs(
        self, tenant: str | None, state: JobState | None, before: tuple[int, str] | None,
        limit: int,
    ) -> list[Job]:  # fmt: skip
        """Jobs newest first (see `JobStore.list_jobs`)."""
        text, args = sql.listing(tenant, state, before, limit)
        rows = await self._tx(lambda c: c.execute(_s(text), args).fetchall())
        return [sql.row_job(r) for r in rows]

    async def claim(self, owner: str, lease_s: float) -> Job | None:
        """The next ready job, leased to `owner` (see `JobStore.claim`)."""

        def claim(conn: sqlite3.Connection) -> Job | None:
            now = sql.micros(utc_now())
            row = conn.execute(_s(sql.READY), (now, now)).fetchone()
            if row is None:
                return None
            conn.execute(_s(sql.TAKE), (owner, now + int(lease_s * 1e6), now, row[0]))
            got = conn.execute(_s(sql.GET_JOB), (row[0],)).fetchone()
            return sql.row_job(got, claimed_from=row[1])

        return await self._tx(claim)

    async def others_waiting(self, tenant: str) -> bool:
        """Whether another tenant running fewer jobs has one ready (see `JobStore`)."""
        now = sql.micros(utc_now())
        args = (tenant, now, now, tenant, now)
        rows = await self._tx(lambda c: c.execute(_s(sql.OTHERS_WAITING), args).fetchall())
        return bool(rows)

    async def release(
        self, job_id: str, owner: str, cases_done: int, spent_usd: float | None = None
    ) -> bool:
        """Queue the job again at its checkpoint (see `JobStore.release`)."""
        args = (cases_done, spent_usd, sql.micros(utc_now()), job_id, owner)
        return await self._tx(lambda c: c.execute(_s(sql.RELEASE), args).rowcount == 1)

    async def renew(
        self, job_id: str, owner: str, lease_s: float, cases_done: int,
        spent_usd: float | None = None,
    ) -> bool:  # fmt: skip
        """Extend the lease and record progress (see `JobStore.renew`)."""
        now = sql.micros(utc_now())
        args = (now + int(lease_s * 1e6), cases_done, spent_usd, now, job_id, owner)
        return await self._tx(lambda c: c.execute(_s(sql.RENEW), args).rowcount == 1)

    async def set_run(self, job_id: str, owner: str, run_id: str) -> bool:
        """Record the job's run."""
        args = (run_id, job_id, owner)
        return await self._tx(lambda c: c.execute(_s(sql.SET_RUN), args).rowcount == 1)

    async def chunks(self, job_id: str, after_first: int) -> list[CaseChunk]:
        """Chunks holding cases at `after_first` or later (a page)."""

        def read(conn: sqlite3.Connection) -> list[Any]:
            # The chunk holding `after_first` is the last one starting at or before it.
            row = conn.execute(
                _s("SELECT max(seq) FROM {cases} WHERE job_id = ? AND first <= ?"),
                (job_id, after_first),
            ).fetchone()
            start = row[0] if row and row[0] is not None else 0
            return conn.execute(_s(sql.CHUNKS), (job_id, start, CHUNKS_PER_READ)).fetchall()

        rows = await self._tx(read)
        return [CaseChunk(int(r[0]), int(r[1]), split_cases(bytes(r[2]))) for r in rows]

    async def finish(
        self, job_id: str, owner: str, state: JobState, cases_done: int, error: str,
        summary: dict[str, Any] | None, webhook: tuple[str, str] | None = None,
    ) -> bool:  # fmt: skip
        """End the job under the owner's lease; its cases are deleted, its webhook stored
        (see `JobStore.finish`)."""
        import json

        text = None if summary is None else json.dumps(summary)
        now = sql.micros(utc_now())
        args = (state.value, cases_done, error, text, now, job_id, owner)

        def finish(conn: sqlite3.Connection) -> bool:
            if conn.execute(_s(sql.FINISH), args).rowcount != 1:
                return False
            conn.execute(_s(sql.DELETE_CASES), (job_id,))
            if webhook is not None:
                conn.execute(_s(sql.INSERT_WEBHOOK), (job_id, *webhook, now))
            return True

        return await self._tx(finish)

    async def due_webhooks(self, owner: str, lease_s: float, limit: int) -> list[PendingWebhook]:
        """Due webhooks, leased to `owner` (see `JobStore.due_webhooks`)."""
        now = sql.micros(utc_now())

        def take(conn: sqlite3.Connection) -> list[PendingWebhook]:
            rows = conn.execute(_s(sql.DUE_WEBHOOKS), (now, now, limit)).fetchall()
            lease = (owner, now + int(lease_s * 1e6))
            conn.executemany(_s(sql.LEASE_WEBHOOK), [(*lease, r[0]) for r in rows])
            return [PendingWebhook(r[0], r[1], r[2], int(r[3])) for r in rows]

        return await self._tx(take)

    async def webhook_tried(
        self, job_id: str, owner: str, *, done: bool, attempts: int, retry_at_us: int
    ) -> None:
        """Forget or reschedule a tried webhook (see `JobStore.webhook_tried`)."""
        if done:
            await self._tx(lambda c: c.execute(_s(sql.DELETE_WEBHOOK), (job_id, owner)))
        else:
            args = (attempts, retry_at_us, job_id, owner)
            await self._tx(lambda c: c.execute(_s(sql.RETRY_WEBHOOK), args))

    async def cancel(self, job_id: str) -> bool:
        """Cancel a queued or running job; its cases are deleted."""
        now = sql.micros(utc_now())

        def cancel(conn: sqlite3.Connection) -> bool:
            if conn.execute(_s(sql.CANCEL), (now, job_id)).rowcount != 1:
                return False
            conn.execute(_s(sql.DELETE_CASES), (job_id,))
            return True

        return await self._tx(cancel)

    async def prune(self, ended_before_us: int) -> int:
        """Delete the jobs that ended before this time; how many."""
        args = (ended_before_us,)
        return await self._tx(lambda c: int(c.execute(_s(sql.PRUNE), args).rowcount))

    async def close(self) -> None:
        """Close the file."""
        async with self._lock:
            await asyncio.to_thread(self._conn.close)
