"""The observation queue in PostgreSQL, shared by every replica (`SCOREWIRE_OBSERVE_QUEUE_URL`).

One row per observation, kept after it is scored (done, its payload dropped) for the
dedupe window, as the SQLite queue keeps it. A take is `SELECT ... FOR UPDATE SKIP
LOCKED` and the lease's UPDATE in one statement: replicas taking at once each get other
rows and none waits on another's lock; a row whose lease lapsed (its taker died) is
taken again. Leases are read on the database's clock, so replicas whose clocks differ
agree on when one lapsed. Every call is one transaction, committed before it returns
(PostgreSQL's `synchronous_commit` on, its default: acknowledged means in the WAL on disk),
but for a take's, whose lease a crash may lose (the rows are then handed out again).

The depth is two counters, observations ever queued and ever done, in the queue and per
tenant: a put locks the queued counter (puts take turns, so two cannot both pass the
bound) and reads the done one, which only grows, so a put reading it a moment old sees the
queue fuller than it is, never emptier; `done` adds to the done counters only. Producers
and the consumer therefore never wait on each other's rows.

Taking turns is what the bounds cost: a put holds the lock until its commit is on disk,
so puts commit one after another and the intake is about one batch per commit (a
function, `scorewire_observe_put`, makes a put one round trip, to keep that short).
Bigger batches from the callers raise it; `bench/observe_bench.py` measures it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool
from scorewire.core.postgres_calls import open_pool, store_address, within
from scorewire.observe.queue import (
    DEDUPE_WINDOW_S,
    DEFAULT_LEASE_S,
    Delivery,
    QueueFull,
    QueueUnavailable,
    tenant_full,
)

log = logging.getLogger("scorewire.observe")

T = TypeVar("T")
POOL_SIZE = 8
"""Connections of one process: puts take turns on the queued counter and the consumer
uses one at a time, so more would wait rather than work."""
PRUNE_ROWS = 5_000
"""Most ids past the dedupe window deleted by one statement: a busy service forgets
hundreds of thousands a minute, more than one statement may take within the timeout."""
_SCHEMA_LOCK_KEY = 0x5C0E_0B5E  # pg_advisory_xact_lock key: "scorewire observe"
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS scorewire_observe_queue (
        id TEXT PRIMARY KEY,
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        tenant TEXT NOT NULL DEFAULT '',
        payload BYTEA,
        done BOOLEAN NOT NULL DEFAULT FALSE,
        taken_at DOUBLE PRECISION NOT NULL DEFAULT 0,
        deliveries INTEGER NOT NULL DEFAULT 0)""",
    """CREATE INDEX IF NOT EXISTS scorewire_observe_queue_ready
        ON scorewire_observe_queue (taken_at, seq) WHERE NOT done""",
    """CREATE INDEX IF NOT EXISTS scorewire_observe_queue_done
        ON scorewire_observe_queue (taken_at) WHERE done""",
    """CREATE TABLE IF NOT EXISTS scorewire_observe_count (
        tenant TEXT NOT NULL, side TEXT NOT NULL, n BIGINT NOT NULL,
        PRIMARY KEY (tenant, side))""",
    """CREATE TABLE IF NOT EXISTS scorewire_observe_total (
        side TEXT PRIMARY KEY, n BIGINT NOT NULL)""",
    """INSERT INTO scorewire_observe_total (side, n) VALUES ('queued', 0), ('done', 0)
        ON CONFLICT (side) DO NOTHING""",
    """CREATE TABLE IF NOT EXISTS scorewire_observe_rules (
        name TEXT PRIMARY KEY, body BYTEA NOT NULL)""",
    # One call per put: the queued counter's lock is held for the function and the commit
    # only, not across a round trip per statement. `fresh` holds the batch's positions of
    # the ids to queue (each id's first, unless it is queued or remembered). Returns them,
    # or, when the batch does not fit, the tenant it does not fit (NULL: the queue), what
    # that holds and how many more would not fit.
    """CREATE OR REPLACE FUNCTION scorewire_observe_put(
        ids TEXT[], payloads BYTEA[], tenants TEXT[], max_depth BIGINT, max_per_tenant BIGINT)
    RETURNS TABLE (queued BIGINT[], full_tenant TEXT, held BIGINT, more BIGINT)
    LANGUAGE plpgsql AS $$
    DECLARE
        depth BIGINT;
        fresh BIGINT[];
        over RECORD;
    BEGIN
        PERFORM 1 FROM scorewire_observe_total WHERE side = 'queued' FOR UPDATE;
        SELECT sum(CASE side WHEN 'queued' THEN n ELSE -n END) INTO depth
            FROM scorewire_observe_total;
        SELECT coalesce(array_agg(f.ord), '{}') INTO fresh FROM (
            SELECT DISTINCT ON (b.id) b.ord FROM unnest(ids) WITH ORDINALITY AS b(id, ord)
            WHERE NOT EXISTS (SELECT 1 FROM scorewire_observe_queue q WHERE q.id = b.id)
            ORDER BY b.id, b.ord) f;
        IF depth + cardinality(fresh) > max_depth THEN
            RETURN QUERY SELECT NULL::BIGINT[], NULL::TEXT, depth, cardinality(fresh)::BIGINT;
            RETURN;
        END IF;
        IF max_per_tenant IS NOT NULL THEN
            SELECT b.tenant, b.k,
                coalesce(sum(CASE c.side WHEN 'queued' THEN c.n ELSE -c.n END), 0)::BIGINT
                AS held INTO over
            FROM (SELECT t.tenant, count(*) AS k FROM unnest(tenants) WITH ORDINALITY
                  AS t(tenant, ord) WHERE t.ord = ANY(fresh) GROUP BY t.tenant) b
            LEFT JOIN scorewire_observe_count c ON c.tenant = b.tenant
            GROUP BY b.tenant, b.k
            HAVING coalesce(sum(CASE c.side WHEN 'queued' THEN c.n ELSE -c.n END), 0) + b.k
                > max_per_tenant
            ORDER BY b.tenant LIMIT 1;
            IF FOUND THEN
                RETURN QUERY SELECT NULL::BIGINT[], over.tenant, over.held, over.k;
                RETURN;
            END IF;
        END IF;
        INSERT INTO scorewire_observe_queue (id, payload, tenant)
            SELECT b.id, b.payload, b.tenant
            FROM unnest(ids, payloads, tenants) WITH ORDINALITY AS b(id, payload, tenant, ord)
            WHERE b.ord = ANY(fresh) ORDER BY b.ord;
        INSERT INTO scorewire_observe_count (tenant, side, n)
            SELECT t.tenant, 'queued', count(*)
            FROM unnest(tenants) WITH ORDINALITY AS t(tenant, ord) WHERE t.ord = ANY(fresh)
            GROUP BY t.tenant ORDER BY t.tenant
            ON CONFLICT (tenant, side) DO UPDATE SET n = scorewire_observe_count.n + excluded.n;
        UPDATE scorewire_observe_total SET n = n + cardinality(fresh) WHERE side = 'queued';
        RETURN QUERY SELECT fresh, NULL::TEXT, 0::BIGINT, 0::BIGINT;
    END $$""",
)
_NOW = "extract(epoch FROM statement_timestamp())"
_TAKE = f"""
WITH ready AS (
    SELECT id FROM scorewire_observe_queue
    WHERE NOT done AND taken_at <= {_NOW} - %s
    ORDER BY taken_at, seq LIMIT %s FOR UPDATE SKIP LOCKED)
UPDATE scorewire_observe_queue q SET taken_at = {_NOW}, deliveries = q.deliveries + 1
FROM ready WHERE q.id = ready.id
RETURNING q.id, q.payload, q.deliveries, q.tenant, q.seq"""
# One statement: rows locked in id order (two consumers finishing the same lapsed rows
# cannot deadlock), marked done, and counted off the done counters of their tenants and
# of the queue; a row already done is not counted again.
_DONE = f"""
WITH mine AS (
    SELECT id FROM scorewire_observe_queue WHERE id = ANY(%s) AND NOT done
    ORDER BY id FOR UPDATE),
marked AS (
    UPDATE scorewire_observe_queue q SET done = TRUE, payload = NULL, taken_at = {_NOW}
    FROM mine WHERE q.id = mine.id RETURNING q.tenant),
per AS (SELECT tenant, count(*) AS k FROM marked GROUP BY tenant),
tenants AS (
    INSERT INTO scorewire_observe_count (tenant, side, n)
    SELECT tenant, 'done', k FROM per ORDER BY tenant
    ON CONFLICT (tenant, side) DO UPDATE SET n = scorewire_observe_count.n + excluded.n)
UPDATE scorewire_observe_total SET n = n + (SELECT coalesce(sum(k), 0) FROM per)
WHERE side = 'done'"""
_PRUNE = f"""
DELETE FROM scorewire_observe_queue WHERE id IN (
    SELECT id FROM scorewire_observe_queue WHERE done AND taken_at < {_NOW} - %s LIMIT %s)"""
_DEPTH = "SELECT sum(CASE side WHEN 'queued' THEN n ELSE -n END) FROM scorewire_observe_total"


class PostgresQueue:
    """A durable queue of observations in PostgreSQL (see the module)."""

    def __init__(
        self,
        url: str,
        *,
        max_depth: int,
        max_per_tenant: int | None = None,
        lease_s: float = DEFAULT_LEASE_S,
        dedupe_s: float = DEDUPE_WINDOW_S,
        timeout_s: float = 2.0,
    ) -> None:
        self._url = url
        self.description = store_address(url)
        self._max = max_depth
        self._per_tenant = max_per_tenant
        self._lease_s = lease_s
        self._dedupe_s = dedupe_s
        self._timeout_s = timeout_s
        self._pool: AsyncConnectionPool | None = None
        self._schema_ready = False
        self._prune_at = 0.0

    async def start(self) -> None:
        """Open the pool and create the tables unless they exist (QueueUnavailable while
        the database does not answer: every later call tries again)."""
        await self._run(_nothing)

    async def _run(self, op: Callable[[Any], Awaitable[T]]) -> T:
        """`op(cursor)` in one transaction within the timeout; QueueUnavailable if not."""
        if self._pool is None:
            self._pool = open_pool(self._url, name="scorewire-observe",
                                   timeout_s=self._timeout_s, max_size=POOL_SIZE)  # fmt: skip
            await self._pool.open(wait=False)
        pool = self._pool

        async def guarded() -> T:
            async with pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                if not self._schema_ready:
                    await cur.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
                    for text in _SCHEMA:
                        await cur.execute(text)
                    self._schema_ready = True
                return await op(cur)

        try:
            return await within(guarded, self._timeout_s)
        except TimeoutError:
            message = f"did not answer within {self._timeout_s:g} s"
        except psycopg.Error as err:
            message = f"failed ({type(err).__name__})"
            log.warning("the observation queue %s: %s", self.description, str(err).strip())
        raise QueueUnavailable(f"the observation queue {self.description} {message}")

    async def put(
        self, items: Sequence[tuple[str, bytes]], tenants: Sequence[str] = ()
    ) -> list[bool]:
        """Queue the batch in one transaction, one call (see `ObservationQueue.put`)."""
        ids = [i for i, _ in items]
        owners = list(tenants) if tenants else [""] * len(items)
        if len(owners) != len(items):
            raise ValueError(f"{len(items)} observations and {len(owners)} tenants")
        args = (ids, [p for _, p in items], owners)

        async def put(cur: Any) -> tuple[Any, ...]:
            await cur.execute("SELECT * FROM scorewire_observe_put(%s, %s, %s, %s, %s)",
                              (*args, self._max, self._per_tenant))  # fmt: skip
            return tuple(await cur.fetchone())

        queued, tenant, held, more = await self._run(put)
        if queued is not None:
            at = {int(k) - 1 for k in queued}  # positions in the batch, from 1
            return [k in at for k in range(len(ids))]
        if tenant is None:
            raise QueueFull(
                f"the observation queue holds {held} of at most {self._max} "
                f"(SCOREWIRE_OBSERVE_QUEUE_MAX): {more} more do not fit"
            )
        raise QueueFull(tenant_full(tenant, int(held), self._per_tenant or 0, int(more)))

    async def take(self, limit: int) -> list[Delivery]:
        """Hand out up to `limit` observations never taken, or taken longer than this
        queue's lease ago, oldest first (see `SqliteQueue.take`)."""

        async def take(cur: Any) -> list[Delivery]:
            # A lease lost with a crash only hands the rows out again sooner: the take
            # does not wait for its commit to reach the disk.
            await cur.execute("SELECT set_config('synchronous_commit', 'off', true)")
            await cur.execute(_TAKE, (self._lease_s, limit))
            return [
                Delivery(r[0], bytes(r[1]), r[0], int(r[2]), r[3])
                for r in sorted(await cur.fetchall(), key=lambda r: r[4])
            ]

        return await self._run(take)

    async def processed(self, delivery: Delivery) -> bool:
        """Whether another consumer marked it done after this one took it (its lease had
        lapsed while the first one was still scoring it)."""

        async def read(cur: Any) -> bool:
            await cur.execute(
                "SELECT done FROM scorewire_observe_queue WHERE id = %s", (delivery.id,)
            )
            row = await cur.fetchone()
            return bool(row and row[0])

        return await self._run(read)

    async def done(self, deliveries: Sequence[Delivery]) -> None:
        """Mark processed (the id stays for the dedupe window) and count them off, in one
        statement; then forget ids past the window, a slice at a time."""
        if deliveries:
            ids = [d.id for d in deliveries]

            async def done(cur: Any) -> None:
                await cur.execute(_DONE, (ids,))

            await self._run(done)
        now = time.monotonic()
        if now >= self._prune_at:
            self._prune_at = now + min(60.0, self._dedupe_s)
            if await self._prune() == PRUNE_ROWS:
                self._prune_at = now  # more are due: another slice with the next batch

    async def _prune(self) -> int:
        """Forget up to `PRUNE_ROWS` ids past the dedupe window; a failure is logged only
        (the batch is done; the next round deletes them)."""

        async def prune(cur: Any) -> int:
            await cur.execute(_PRUNE, (self._dedupe_s, PRUNE_ROWS))
            return int(cur.rowcount)

        try:
            return await self._run(prune)
        except QueueUnavailable as err:
            log.warning("old observation ids were not forgotten this time: %s", err)
            return 0

    async def depth(self) -> int:
        """Observations queued or in flight: queued minus done, as counted."""

        async def depth(cur: Any) -> int:
            await cur.execute(_DEPTH)
            return int((await cur.fetchone())[0])

        return await self._run(depth)

    async def rules(self) -> dict[str, bytes]:
        """The stored rules (see `ObservationQueue.rules`)."""

        async def read(cur: Any) -> dict[str, bytes]:
            await cur.execute("SELECT name, body FROM scorewire_observe_rules ORDER BY name")
            return {r[0]: bytes(r[1]) for r in await cur.fetchall()}

        return await self._run(read)

    async def put_rule(self, name: str, body: bytes, *, create: bool) -> bool:
        """Store a rule (see `ObservationQueue.put_rule`)."""
        if create:
            sql = (
                "INSERT INTO scorewire_observe_rules (name, body) VALUES (%s, %s) "
                "ON CONFLICT (name) DO NOTHING"
            )
            args: tuple[Any, ...] = (name, body)
        else:
            sql, args = "UPDATE scorewire_observe_rules SET body = %s WHERE name = %s", (body, name)
        return await self._rowcount(sql, args) == 1

    async def delete_rule(self, name: str) -> bool:
        """Remove a stored rule."""
        return await self._rowcount("DELETE FROM scorewire_observe_rules WHERE name = %s",
                                    (name,)) == 1  # fmt: skip

    async def _rowcount(self, sql: str, args: tuple[Any, ...]) -> int:
        async def run(cur: Any) -> int:
            await cur.execute(sql, args)
            return int(cur.rowcount)

        return await self._run(run)

    async def close(self) -> None:
        """Close the pool."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()


async def _nothing(cur: Any) -> None:
    """An operation that only makes `_run` create the tables."""
