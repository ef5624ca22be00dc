"""The durable observation queue: what it promises, and its embedded engine (SQLite).

`put` returns after the batch is committed (a crash after it loses nothing); a batch
goes whole or not at all, refused with `QueueFull` when it would take the queue past its
bound, or one tenant past its share of it (each observation is queued with its tenant).
Each observation has an id: an id queued before is answered as a duplicate and not
queued again, for the dedupe window (`DEDUPE_WINDOW_S`) after it was scored.

Delivery is at least once: `take` hides what it hands out for `lease_s`, and what is not
`done` by then is handed out again (its taker died). Scoring is idempotent: `done`
marks the id processed and removes the message in one step, so a message handed out
again after it was processed is never scored again (`processed`). The one window left
is a taker that dies after recording the scores and before `done`.
"""

from __future__ import annotations

import asyncio
import collections
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

DEDUPE_WINDOW_S = 900.0
"""Default seconds an observation id is remembered (`SCOREWIRE_OBSERVE_DEDUPE_S`): long
enough for a caller's retries and a few leases, short enough that the ids of a busy
service (10,000/s is 9 million ids in 15 minutes) fit in memory."""
DEFAULT_LEASE_S = 300.0
"""Seconds a taken observation stays hidden before it is handed out again."""


class QueueFull(Exception):
    """The batch would take the queue past its bound (RESOURCE_EXHAUSTED)."""


class QueueUnavailable(Exception):
    """The queue's engine does not answer (UNAVAILABLE)."""


@dataclass(slots=True)
class Delivery:
    """One observation handed to a consumer."""

    id: str
    """The observation id."""
    payload: bytes
    """The serialized observation."""
    token: str
    """What the engine needs to acknowledge it (a stream entry id; the id in SQLite)."""
    deliveries: int
    """How many times it was handed out, this one included."""
    tenant: str = ""
    """The tenant it was queued for."""


class ObservationQueue(Protocol):
    """A durable queue of observations (SQLite, Redis Streams or PostgreSQL)."""

    description: str
    """The engine and where it is, for logs (no credentials)."""

    async def start(self) -> None:
        """Create what the engine needs (tables, the consumer group)."""

    async def put(
        self, items: Sequence[tuple[str, bytes]], tenants: Sequence[str] = ()
    ) -> list[bool]:
        """Queue (id, payload) pairs whole, after commit, each for its tenant (aligned with
        `items`; none: every one for ""); True for each queued, False for a duplicate id.
        QueueFull when the queue, or a tenant's share of it, lacks room for the new ones."""

    async def take(self, limit: int) -> list[Delivery]:
        """Up to `limit` observations not taken (or whose lease lapsed), oldest first."""

    async def processed(self, delivery: Delivery) -> bool:
        """Whether the delivery's observation was already processed (a redelivery)."""

    async def done(self, deliveries: Sequence[Delivery]) -> None:
        """Mark processed and remove from the queue."""

    async def depth(self) -> int:
        """Observations queued or in flight."""

    async def rules(self) -> dict[str, bytes]:
        """The rules stored over gRPC: name -> the serialized rule."""

    async def put_rule(self, name: str, body: bytes, *, create: bool) -> bool:
        """Store a rule: `create` only if the name is free, else only if it is stored;
        False when that does not hold (nothing stored)."""

    async def delete_rule(self, name: str) -> bool:
        """Remove a stored rule; False when there was none."""

    async def close(self) -> None:
        """Release connections."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS observe_queue (
    id TEXT PRIMARY KEY,
    payload BLOB,
    done INTEGER NOT NULL DEFAULT 0,
    taken_at REAL NOT NULL DEFAULT 0,
    deliveries INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS observe_queue_ready ON observe_queue (done, taken_at);
CREATE TABLE IF NOT EXISTS observe_depth (one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER);
INSERT OR IGNORE INTO observe_depth (one, n) VALUES (1, 0);
CREATE TABLE IF NOT EXISTS observe_tenant_depth (tenant TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS observe_rules (name TEXT PRIMARY KEY, body BLOB NOT NULL);
"""
_TENANT_COLUMN = "ALTER TABLE observe_queue ADD COLUMN tenant TEXT NOT NULL DEFAULT ''"
"""A queue file made before observations carried their tenant gains the column."""


class SqliteQueue:
    """The embedded queue: one SQLite file (WAL, synchronous FULL) under the state directory.

    Worker processes of one host share the file; each call is one transaction in a
    thread, so the event loop never waits on the disk.
    """

    def __init__(
        self,
        path: Path,
        *,
        max_depth: int,
        max_per_tenant: int | None = None,
        lease_s: float = DEFAULT_LEASE_S,
        dedupe_s: float = DEDUPE_WINDOW_S,
    ) -> None:
        self.path = path
        self._per_tenant = max_per_tenant
        self._dedupe_s = dedupe_s
        self.description = f"sqlite:{path}"
        self._max = max_depth
        self._lease_s = lease_s
        self._conn: sqlite3.Connection | None = None
        self._lock = asyncio.Lock()
        self._last_prune = 0.0

    async def start(self) -> None:
        """Open the file (created with its directory if absent) and its tables, once."""
        if self._conn is None:
            await asyncio.to_thread(self._open)

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=10.0
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")  # acknowledged means on disk
        conn.executescript(_SCHEMA)
        columns = {r[1] for r in conn.execute("PRAGMA table_info(observe_queue)")}
        if "tenant" not in columns:
            conn.execute(_TENANT_COLUMN)
        self._conn = conn

    async def _run(self, fn: _Fn[T]) -> T:
        async with self._lock:
            conn = self._conn
            if conn is None:
                raise QueueUnavailable(f"the observation queue {self.description} is not open")
            work = asyncio.ensure_future(asyncio.to_thread(_transaction, conn, fn))
            try:
                return await asyncio.shield(work)
            except asyncio.CancelledError:
                # The thread goes on: hold the lock until it is out of the connection, or
                # `close` would close it under the thread's feet.
                await asyncio.wait([work])
                raise
            except sqlite3.Error as err:
                raise QueueUnavailable(
                    f"the observation queue {self.description} failed: {err}"
                ) from None

    async def put(
        self, items: Sequence[tuple[str, bytes]], tenants: Sequence[str] = ()
    ) -> list[bool]:
        """Queue the batch in one transaction (see `ObservationQueue.put`)."""
        limit, cap = self._max, self._per_tenant
        rows = [(i, p, t) for (i, p), t in zip(items, tenants or [""] * len(items), strict=True)]

        def put(conn: sqlite3.Connection) -> list[bool]:
            ids = [i for i, _ in items]
            known = _known(conn, ids)
            # an id twice in one batch is queued once
            fresh = list({r[0]: r for r in rows if r[0] not in known}.values())
            (depth,) = conn.execute("SELECT n FROM observe_depth").fetchone()
            if depth + len(fresh) > limit:
                raise QueueFull(
                    f"the observation queue holds {depth} of at most {limit} "
                    f"(SCOREWIRE_OBSERVE_QUEUE_MAX): {len(fresh)} more do not fit"
                )
            per = collections.Counter(t for _, _, t in fresh)
            for tenant, n in per.items():
                held = _tenant_depth(conn, tenant)
                if cap is not None and held + n > cap:
                    raise QueueFull(tenant_full(tenant, held, cap, n))
                conn.execute(
                    "INSERT INTO observe_tenant_depth (tenant, n) VALUES (?, ?) "
                    "ON CONFLICT (tenant) DO UPDATE SET n = n + excluded.n",
                    (tenant, n),
                )
            conn.executemany(
                "INSERT INTO observe_queue (id, payload, tenant) VALUES (?, ?, ?)", fresh
            )
            conn.execute("UPDATE observe_depth SET n = n + ?", (len(fresh),))
            queued, out = {r[0] for r in fresh}, []
            for i in ids:
                out.append(i in queued)
                queued.discard(i)
            return out

        return await self._run(put)

    async def take(self, limit: int) -> list[Delivery]:
        """Hand out up to `limit` observations never taken, or taken longer than this
        queue's lease ago (the taker's lease is the reader's, as with XAUTOCLAIM: a
        restarted server with a shorter lease takes a dead one's back sooner)."""
        now, lease = time.time(), self._lease_s

        def take(conn: sqlite3.Connection) -> list[Delivery]:
            rows = conn.execute(
                "SELECT id, payload, deliveries, tenant FROM observe_queue WHERE done = 0 AND "
                "taken_at <= ? ORDER BY taken_at LIMIT ?",
                (now - lease, limit),
            ).fetchall()
            conn.executemany(
                "UPDATE observe_queue SET taken_at = ?, deliveries = deliveries + 1 WHERE id = ?",
                [(now, r[0]) for r in rows],
            )
            return [Delivery(r[0], bytes(r[1]), r[0], r[2] + 1, r[3]) for r in rows]

        return await self._run(take)

    async def processed(self, delivery: Delivery) -> bool:
        """Whether another consumer marked it done after this one took it (its lease had
        lapsed while the first one was still scoring it)."""
        sql = "SELECT done FROM observe_queue WHERE id = ?"
        rows = await self._run(lambda c: c.execute(sql, (delivery.id,)).fetchall())
        return bool(rows and rows[0][0])

    async def done(self, deliveries: Sequence[Delivery]) -> None:
        """Mark processed (the id stays for the dedupe window), in one transaction."""
        now = time.time()
        prune = now - self._last_prune > min(60.0, self._dedupe_s)
        if prune:
            self._last_prune = now

        def done(conn: sqlite3.Connection) -> None:
            per: collections.Counter[str] = collections.Counter()
            for d in deliveries:
                per.update(
                    r[0]
                    for r in conn.execute(
                        "UPDATE observe_queue SET done = 1, payload = NULL, taken_at = ? "
                        "WHERE id = ? AND done = 0 RETURNING tenant",
                        (now, d.id),
                    )
                )
            conn.execute("UPDATE observe_depth SET n = max(0, n - ?)", (per.total(),))
            conn.executemany(
                "UPDATE observe_tenant_depth SET n = max(0, n - ?) WHERE tenant = ?",
                [(n, t) for t, n in per.items()],
            )
            if prune:
                conn.execute(
                    "DELETE FROM observe_queue WHERE done = 1 AND taken_at < ?",
                    (now - self._dedupe_s,),
                )

        await self._run(done)

    async def depth(self) -> int:
        """Observations queued or in flight (a counter kept with every write)."""
        rows = await self._run(lambda c: c.execute("SELECT n FROM observe_depth").fetchall())
        return int(rows[0][0])

    async def rules(self) -> dict[str, bytes]:
        """The stored rules (see `ObservationQueue.rules`)."""
        sql = "SELECT name, body FROM observe_rules ORDER BY name"
        rows = await self._run(lambda c: c.execute(sql).fetchall())
        return {r[0]: bytes(r[1]) for r in rows}

    async def put_rule(self, name: str, body: bytes, *, create: bool) -> bool:
        """Store a rule in one transaction (see `ObservationQueue.put_rule`)."""
        sql = (
            "INSERT INTO observe_rules (name, body) VALUES (?, ?) ON CONFLICT (name) DO NOTHING"
            if create
            else "UPDATE observe_rules SET body = ?2 WHERE name = ?1"
        )
        n: int = await self._run(lambda c: c.execute(sql, (name, body)).rowcount)
        return n == 1

    async def delete_rule(self, name: str) -> bool:
        """Remove a stored rule."""
        sql = "DELETE FROM observe_rules WHERE name = ?"
        n: int = await self._run(lambda c: c.execute(sql, (name,)).rowcount)
        return n == 1

    async def close(self) -> None:
        """Close the file."""
        conn, self._conn = self._conn, None
        if conn is not None:
            async with self._lock:
                await asyncio.to_thread(conn.close)


class _Fn(Protocol[T_co]):
    def __call__(self, conn: sqlite3.Connection, /) -> T_co: ...


def _transaction(conn: sqlite3.Connection, fn: _Fn[T]) -> T:
    conn.execute("BEGIN IMMEDIATE")
    try:
        out = fn(conn)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return out


def tenant_full(tenant: str, held: int, cap: int, more: int) -> str:
    """Why a batch does not fit its tenant's share of the queue (RESOURCE_EXHAUSTED)."""
    return (
        f"tenant {tenant!r} has {held} observations queued of at most {cap} "
        f"(SCOREWIRE_OBSERVE_QUEUE_MAX_PER_TENANT): {more} more do not fit; other tenants' "
        "observations are still queued"
    )


def _tenant_depth(conn: sqlite3.Connection, tenant: str) -> int:
    row = conn.execute("SELECT n FROM observe_tenant_depth WHERE tenant = ?", (tenant,)).fetchone()
    return 0 if row is None else int(row[0])


def _known(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for at in range(0, len(ids), 500):  # SQLite's limit on bound parameters
        part = ids[at : at + 500]
        marks = ",".join("?" * len(part))
        found.update(
            r[0] for r in conn.execute(f"SELECT id FROM observe_queue WHERE id IN ({marks})", part)
        )
    return found
