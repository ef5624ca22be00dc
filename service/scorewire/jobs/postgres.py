"""The job store in PostgreSQL, shared by every replica (`SCOREWIRE_DATABASE_URL`).

The SQLite store's tables (prefixed `scorewire_job_`) and statements with `%s`
placeholders. A claim is `SELECT ... FOR UPDATE SKIP LOCKED` then the lease's UPDATE in
one transaction: replicas claiming at once each take a different job, none waits on
another's lock. A creation takes an advisory lock on its tenant, so that two creations
racing cannot both pass the open-jobs limit. Calls fail with `JobsUnavailable` once
`SCOREWIRE_STORE_TIMEOUT_S` has passed without an answer (creation, which writes every
case, gets `CREATE_TIMEOUT_S` at least).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool
from scorewire.core.postgres_calls import open_pool, within
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
from scorewire.jobs.sqlite import CHUNKS_PER_READ
from scorewire.scoring.recorded import cases_blob, split_cases

log = logging.getLogger("scorewire.jobs")

T = TypeVar("T")
CREATE_TIMEOUT_S = 60.0
_SCHEMA_LOCK_KEY = 0x5C0E_70B5  # pg_advisory_xact_lock key: "scorewire jobs"
_T = sql.tables("scorewire_job_")
_COLUMNS = (
    "SELECT column_name FROM information_schema.columns"
    " WHERE table_schema = current_schema() AND table_name = %s"
)
"""The jobs table's columns: read without locking it (another replica may be claiming)."""


def _pg(text: str) -> str:
    return sql.statement(text, _T).replace("?", "%s")


class PostgresJobStore:
    """A `JobStore` in PostgreSQL. Open it with `PostgresJobStore.open(url)`."""

    def __init__(self, pool: AsyncConnectionPool, timeout_s: float) -> None:
        self.description = "postgresql"
        self._pool = pool
        self._timeout_s = timeout_s
        self._schema_ready = False

    @classmethod
    async def open(cls, url: str, *, timeout_s: float = 2.0) -> PostgresJobStore:
        """A store on the database at `url`; connects in the background."""
        pool = open_pool(url, name="scorewire-jobs", timeout_s=timeout_s, max_size=4,
                         longest_s=max(timeout_s, CREATE_TIMEOUT_S))  # fmt: skip
        await pool.open(wait=False)
        return cls(pool, timeout_s)

    async def _run(self, op: Callable[[Any], Awaitable[T]], timeout_s: float | None = None) -> T:
        """`op(cursor)` in one transaction within its deadline; JobsUnavailable if not."""
        limit = timeout_s or self._timeout_s

        async def guarded() -> T:
            async with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                if not self._schema_ready:
                    await cur.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
                    for text in sql.SCHEMA:
                        await cur.execute(_pg(text))
                    await cur.execute(_COLUMNS, (_T["jobs"],))
                    have = {row[0] for row in await cur.fetchall()}
                    for name, kind in sql.ADDED_COLUMNS:
                        if name not in have:  # ALTER locks the table whole, even a no-op
                            await cur.execute(_pg(f"ALTER TABLE {{jobs}} ADD COLUMN {name} {kind}"))
                    self._schema_ready = True
                if limit > self._timeout_s:
                    await cur.execute("SELECT set_config('statement_timeout', %s, true)",
                                      (f"{int(limit * 1000)}ms",))  # fmt: skip
                return await op(cur)

        try:
            return await within(guarded, limit)
        except TimeoutError:
            message = f"the job store (PostgreSQL) did not answer within {limit:g} s"
        except psycopg.Error as err:
            message = f"the job store (PostgreSQL) failed: {type(err).__name__}"
            log.warning("job store: %s: %s", message, str(err).strip())
        raise JobsUnavailable(message)

    async def create(self, job: Job, chunks: Sequence[CaseChunk], max_open: int | None) -> None:
        """Store the job and its cases in one transaction (see `JobStore.create`)."""

        async def create(cur: Any) -> None:
            if max_open is not None:
                await cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (job.tenant,))
                await cur.execute(_pg(sql.OPEN_OF_TENANT), (job.tenant,))
                (n,) = await cur.fetchone()
                if n >= max_open:
                    raise TooManyOpenJobs(f"{n} jobs are queued or running")
            await cur.execute(_pg(sql.INSERT_JOB), sql.job_row(job))
            await cur.executemany(
                _pg(sql.INSERT_CHUNK),
                [(job.job_id, c.seq, c.first, cases_blob(c.cases)) for c in chunks],
            )

        await self._run(create, max(self._timeout_s, CREATE_TIMEOUT_S))

    async def get(self, job_id: str) -> Job | None:
        """One job."""

        async def get(cur: Any) -> Job | None:
            await cur.execute(_pg(sql.GET_JOB), (job_id,))
            row = await cur.fetchone()
            return None if row is None else sql.row_job(row)

        return await self._run(get)

    async def list_jobs(
        self, tenant: str | None, state: JobState | None, before: tuple[int, str] | None,
        limit: int,
    ) -> list[Job]:  # fmt: skip
        """Jobs newest first (see `JobStore.list_jobs`)."""
        text, args = sql.listing(tenant, state, before, limit)

        async def read(cur: Any) -> list[Job]:
            await cur.execute(_pg(text), args)
            return [sql.row_job(r) for r in await cur.fetchall()]

        return await self._run(read)

    async def claim(self, owner: str, lease_s: float) -> Job | None:
        """The next ready job, leased to `owner` (see `JobStore.claim`; FOR UPDATE SKIP
        LOCKED, so replicas claiming at once take different jobs)."""

        async def claim(cur: Any) -> Job | None:
            now = sql.micros(utc_now())
            await cur.execute(_pg(sql.READY) + " FOR UPDATE OF j SKIP LOCKED", (now, now))
            row = await cur.fetchone()
            if row is None:
                return None
            await cur.execute(_pg(sql.TAKE), (owner, now + int(lease_s * 1e6), now, row[0]))
            await cur.execute(_pg(sql.GET_JOB), (row[0],))
            return sql.row_job(await cur.fetchone(), claimed_from=row[1])

        return await self._run(claim)

    async def others_waiting(self, tenant: str) -> bool:
        """Whether another tenant running fewer jobs has one ready (see `JobStore`)."""
        now = sql.micros(utc_now())

        async def read(cur: Any) -> bool:
            await cur.execute(_pg(sql.OTHERS_WAITING), (tenant, now, now, tenant, now))
            return await cur.fetchone() is not None

        return await self._run(read)

    async def release(
        self, job_id: str, owner: str, cases_done: int, spent_usd: float | None = None
    ) -> bool:
        """Queue the job again at its checkpoint (see `JobStore.release`)."""
        args = (cases_done, spent_usd, sql.micros(utc_now()), job_id, owner)
        return await self._count(sql.RELEASE, args) == 1

    async def _count(self, text: str, args: Sequence[Any]) -> int:
        async def run(cur: Any) -> int:
            await cur.execute(_pg(text), args)
            return int(cur.rowcount)

        return await self._run(run)

    async def renew(
        self, job_id: str, owner: str, lease_s: float, cases_done: int,
        spent_usd: float | None = None,
    ) -> bool:  # fmt: skip
        """Extend the lease and record progress (see `JobStore.renew`)."""
        now = sql.micros(utc_now())
        args = (now + int(lease_s * 1e6), cases_done, spent_usd, now, job_id, owner)
        return await self._count(sql.RENEW, args) == 1

    async def set_run(self, job_id: str, owner: str, run_id: str) -> bool:
        """Record the job's run."""
        return await self._count(sql.SET_RUN, (run_id, job_id, owner)) == 1

    async def chunks(self, job_id: str, after_first: int) -> list[CaseChunk]:
        """Chunks holding cases at `after_first` or later (a page)."""

        async def read(cur: Any) -> list[CaseChunk]:
            await cur.execute(
                _pg("SELECT max(seq) FROM {cases} WHERE job_id = ? AND first <= ?"),
                (job_id, after_first),
            )
            row = await cur.fetchone()
            start = row[0] if row and row[0] is not None else 0
            await cur.execute(_pg(sql.CHUNKS), (job_id, start, CHUNKS_PER_READ))
            rows = await cur.fetchall()
            return [CaseChunk(int(r[0]), int(r[1]), split_cases(bytes(r[2]))) for r in rows]

        return await self._run(read)

    async def finish(
        self, job_id: str, owner: str, state: JobState, cases_done: int, error: str,
        summary: dict[str, Any] | None, webhook: tuple[str, str] | None = None,
    ) -> bool:  # fmt: skip
        """End the job under the owner's lease; its cases are deleted, its webhook stored
        (see `JobStore.finish`)."""
        text = None if summary is None else json.dumps(summary)
        now = sql.micros(utc_now())
        args = (state.value, cases_done, error, text, now, job_id, owner)

        async def finish(cur: Any) -> bool:
            await cur.execute(_pg(sql.FINISH), args)
            if cur.rowcount != 1:
                return False
            await cur.execute(_pg(sql.DELETE_CASES), (job_id,))
            if webhook is not None:
                await cur.execute(_pg(sql.INSERT_WEBHOOK), (job_id, *webhook, now))
            return True

        return await self._run(finish)

    async def due_webhooks(self, owner: str, lease_s: float, limit: int) -> list[PendingWebhook]:
        """Due webhooks, leased to `owner` (see `JobStore.due_webhooks`; SKIP LOCKED, so
        replicas asking at once take different ones)."""
        now = sql.micros(utc_now())

        async def take(cur: Any) -> list[PendingWebhook]:
            await cur.execute(_pg(sql.DUE_WEBHOOKS) + " FOR UPDATE SKIP LOCKED", (now, now, limit))
            rows = await cur.fetchall()
            lease = (owner, now + int(lease_s * 1e6))
            for r in rows:
                await cur.execute(_pg(sql.LEASE_WEBHOOK), (*lease, r[0]))
            return [PendingWebhook(r[0], r[1], r[2], int(r[3])) for r in rows]

        return await self._run(take)

    async def webhook_tried(
        self, job_id: str, owner: str, *, done: bool, attempts: int, retry_at_us: int
    ) -> None:
        """Forget or reschedule a tried webhook (see `JobStore.webhook_tried`)."""
        if done:
            await self._count(sql.DELETE_WEBHOOK, (job_id, owner))
        else:
            await self._count(sql.RETRY_WEBHOOK, (attempts, retry_at_us, job_id, owner))

    async def cancel(self, job_id: str) -> bool:
        """Cancel a queued or running job; its cases are deleted."""
        now = sql.micros(utc_now())

        async def cancel(cur: Any) -> bool:
            await cur.execute(_pg(sql.CANCEL), (now, job_id))
            if cur.rowcount != 1:
                return False
            await cur.execute(_pg(sql.DELETE_CASES), (job_id,))
            return True

        return await self._run(cancel)

    async def prune(self, ended_before_us: int) -> int:
        """Delete the jobs that ended before this time; how many."""
        return await self._count(sql.PRUNE, (ended_before_us,))

    async def close(self) -> None:
        """Close the pool."""
        await self._pool.close()
