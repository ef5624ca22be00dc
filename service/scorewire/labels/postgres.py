"""The label store in PostgreSQL, shared by every replica (`SCOREWIRE_LABELS_URL`).

Durability: `put` runs one transaction and returns after its COMMIT, which PostgreSQL
acknowledges only once the commit record is flushed to its WAL (with the server's
default `synchronous_commit=on`; an operator who turns it off trades that away).

Concurrency: labels are only ever inserted (append-only history), so concurrent writers
on any number of replicas never overwrite each other; reads pick the latest label per
(sample_id, output_hash, check, labeller). The schema is created on first use under an
advisory lock, so replicas starting together do not race on `CREATE TABLE`.

A database that does not answer makes a call fail with `LabelsUnavailable` once its
deadline (`SCOREWIRE_STORE_TIMEOUT_S`) has passed (`scorewire.core.postgres_calls.within`).
After a failure, for `FAIL_FAST_S`, one call at a time tries the database and the others
fail at once, so that a run with a human check over thousands of samples does not wait
on every one, and the first call after the database is back succeeds. A write that
fails before its COMMIT was sent stored nothing (the transaction rolls back); one that
fails or times out during the COMMIT is `LabelsOutcomeUnknown`. A put with a
`PutKey` is idempotent: its request id is inserted in the same transaction as its
labels, and a concurrent put of the same key waits for it (ON CONFLICT) and replays it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool
from scorewire.core.postgres_calls import open_pool, within
from scorewire.labels.label_model import (
    LOOKUP_LIMIT,
    OUTPUTS_PER_CALL,
    Label,
    LabelQuery,
    LabelsOutcomeUnknown,
    LabelsUnavailable,
    PutKey,
    RequestIdReused,
    counting_labels,
    utc_now,
)

log = logging.getLogger("scorewire.labels")

T = TypeVar("T")

TIMEOUT_S = 2.0
"""The most one store call may take before the store counts as not answering
(`SCOREWIRE_STORE_TIMEOUT_S`)."""
FAIL_FAST_S = 1.0
"""After the database failed, seconds during which one call at a time tries it and the
others fail without trying."""
_SCHEMA_LOCK_KEY = 0x5C0E_1AB5  # pg_advisory_xact_lock key: "scorewire labels"

_HISTORY_TABLE = """
CREATE TABLE IF NOT EXISTS scorewire_label_history (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sample_id TEXT NOT NULL,
    output_hash TEXT NOT NULL,
    label_check TEXT NOT NULL,
    labeller TEXT NOT NULL,
    passed BOOLEAN NOT NULL,
    note TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    stored_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    tenant TEXT NOT NULL DEFAULT '',
    put_id BIGINT
)
"""
_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS scorewire_label_puts (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        scope TEXT NOT NULL,
        request_id TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        stored_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        UNIQUE (scope, request_id)
    )
    """,
    """
    CREATE INDEX IF NOT EXISTS scorewire_label_history_key ON scorewire_label_history
        (sample_id, output_hash, label_check, labeller, created_at, id)
    """,
    """
    CREATE INDEX IF NOT EXISTS scorewire_label_history_tenant ON scorewire_label_history
        (tenant, id)
    """,
    """
    CREATE INDEX IF NOT EXISTS scorewire_label_history_put ON scorewire_label_history
        (put_id) WHERE put_id IS NOT NULL
    """,
)

# Tables made before tenants and request ids lack these columns. ALTER TABLE locks the
# table even when the column exists, so it runs only when information_schema says so.
_ADDED_COLUMNS = (
    ("tenant", "ALTER TABLE scorewire_label_history ADD COLUMN tenant TEXT NOT NULL DEFAULT ''"),
    ("put_id", "ALTER TABLE scorewire_label_history ADD COLUMN put_id BIGINT"),
)
_HAVE_COLUMNS = (
    "SELECT column_name FROM information_schema.columns"
    " WHERE table_schema = current_schema() AND table_name = 'scorewire_label_history'"
)

_COLUMNS = "id, sample_id, output_hash, label_check, labeller, passed, note, created_at, tenant"
_LATEST = f"""
SELECT {_COLUMNS} FROM (
    SELECT {_COLUMNS}, ROW_NUMBER() OVER (
        PARTITION BY tenant, sample_id, output_hash, label_check, labeller
        ORDER BY created_at DESC, id DESC
    ) AS rank
    FROM scorewire_label_history WHERE {{where}}
) AS latest WHERE rank = 1 AND id > %s ORDER BY id LIMIT %s
"""
_HISTORY = (
    f"SELECT {_COLUMNS} FROM scorewire_label_history WHERE {{where}} AND id > %s "
    "ORDER BY id LIMIT %s"
)
# The latest labels of the outputs given as two arrays (sample ids, output hashes).
_OF_OUTPUTS = f"""
SELECT {_COLUMNS} FROM (
    SELECT {_COLUMNS}, ROW_NUMBER() OVER (
        PARTITION BY tenant, sample_id, output_hash, label_check, labeller
        ORDER BY created_at DESC, id DESC
    ) AS rank
    FROM unnest(%s::text[], %s::text[]) AS keys(s, h)
    JOIN scorewire_label_history ON sample_id = keys.s AND output_hash = keys.h
    WHERE {{where}}
) AS latest WHERE rank = 1 ORDER BY id
"""
_INSERT = (
    "INSERT INTO scorewire_label_history (sample_id, output_hash, label_check, labeller,"
    " passed, note, created_at, stored_at, tenant, put_id)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_CLAIM = (
    "INSERT INTO scorewire_label_puts (scope, request_id, fingerprint) VALUES (%s, %s, %s)"
    " ON CONFLICT (scope, request_id) DO NOTHING RETURNING id"
)
_EARLIER = "SELECT id, fingerprint FROM scorewire_label_puts WHERE scope = %s AND request_id = %s"
_REPLAY = f"SELECT {_COLUMNS} FROM scorewire_label_history WHERE put_id = %s ORDER BY id"


@dataclass(slots=True)
class _Phase:
    """How far a write got: once its COMMIT is sent, a failure leaves the outcome unknown."""

    committing: bool = False


def _where(query: LabelQuery) -> tuple[str, list[Any]]:
    filters = query.filters()
    clauses = ["TRUE"] + [f"{column} = %s" for column, _ in filters]
    return " AND ".join(clauses), [value for _, value in filters]


def _row_label(row: Sequence[Any]) -> tuple[int, Label]:
    return int(row[0]), Label(
        sample_id=row[1],
        output_hash=row[2],
        check=row[3],
        labeller=row[4],
        passed=bool(row[5]),
        note=row[6],
        created_at=row[7].astimezone(UTC),
        tenant=row[8],
    )


async def _replay(cur: psycopg.AsyncCursor[Any], key: PutKey) -> list[Label]:
    """The labels the earlier put with this key stored."""
    await cur.execute(_EARLIER, (key.scope, key.request_id))
    row = await cur.fetchone()
    if row is None:  # pragma: no cover - the conflicting row is committed once we get here
        raise psycopg.errors.SerializationFailure("the earlier put of this request id vanished")
    if row[1] != key.fingerprint:
        raise RequestIdReused(key.request_id)
    await cur.execute(_REPLAY, (row[0],))
    return [_row_label(r)[1] for r in await cur.fetchall()]


class PostgresLabelStore:
    """A `LabelStore` in PostgreSQL. Open it with `PostgresLabelStore.open(url)`."""

    def __init__(self, pool: AsyncConnectionPool, *, timeout_s: float = TIMEOUT_S) -> None:
        self._pool = pool
        self._timeout_s = timeout_s
        self._schema_ready = False
        self._schema_lock = asyncio.Lock()
        self._down_until = 0.0
        self._probing = False
        self._closed = False

    @classmethod
    async def open(
        cls, url: str, *, max_connections: int = 8, timeout_s: float = TIMEOUT_S
    ) -> PostgresLabelStore:
        """A store on the database at `url`; connects in the background.

        A database that is down at start-up does not stop the server: label calls fail
        with `LabelsUnavailable` until it answers. The schema is created by the first
        call that reaches the database (a wrong URL shows in the log then). `timeout_s`
        bounds each call.
        """
        pool = open_pool(
            url, name="scorewire-labels", timeout_s=timeout_s, max_size=max_connections
        )
        await pool.open(wait=False)
        return cls(pool, timeout_s=timeout_s)

    async def _ensure_schema(self) -> None:
        async with self._schema_lock:
            if self._schema_ready:
                return
            async with self._pool.connection() as conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
                await conn.execute(_HISTORY_TABLE)
                have = {row[0] for row in await (await conn.execute(_HAVE_COLUMNS)).fetchall()}
                for column, statement in _ADDED_COLUMNS:
                    if column not in have:
                        await conn.execute(statement)
                for statement in _SCHEMA:
                    await conn.execute(statement)
            self._schema_ready = True

    async def _run(self, op: Callable[[], Awaitable[T]], phase: _Phase | None = None) -> T:
        """`op()` within the deadline; LabelsUnavailable naming the store when it fails.

        The message never quotes the driver's error (it may name the database's host);
        the log has that.
        """
        if self._closed:
            raise LabelsUnavailable("the label store (PostgreSQL) is closed")
        probe = time.monotonic() < self._down_until
        if probe and self._probing:
            raise LabelsUnavailable("the label store (PostgreSQL) did not answer a moment ago")

        async def guarded() -> T:
            if not self._schema_ready:
                await self._ensure_schema()
            return await op()

        self._probing = self._probing or probe
        try:
            result = await within(guarded, self._timeout_s)
        except TimeoutError:
            message = f"the label store (PostgreSQL) did not answer within {self._timeout_s:g} s"
            log.warning("label store: %s", message)
        except psycopg.Error as err:
            message = f"the label store (PostgreSQL) failed: {type(err).__name__}"
            log.warning("label store: %s: %s", message, str(err).strip())
        else:
            self._down_until = 0.0
            return result
        finally:
            if probe:
                self._probing = False
        self._down_until = time.monotonic() + FAIL_FAST_S
        if phase is not None and phase.committing:
            raise LabelsOutcomeUnknown(f"during the commit: {message}")
        raise LabelsUnavailable(message)

    async def put(self, labels: Sequence[Label], key: PutKey | None = None) -> list[Label]:
        """Insert every label in one transaction; returns the labels stored, after the commit.

        With a `key` stored before, inserts nothing and returns that put's labels.
        """
        stored_at = utc_now()
        rows = [
            (
                lb.sample_id,
                lb.output_hash,
                lb.check,
                lb.labeller,
                lb.passed,
                lb.note,
                lb.created_at,
                stored_at,
                lb.tenant,
            )
            for lb in labels
        ]
        phase = _Phase()

        async def insert() -> list[Label]:
            async with self._pool.connection() as conn:
                async with conn.transaction(), conn.cursor() as cur:
                    put_id = None
                    if key is not None:
                        await cur.execute(_CLAIM, (key.scope, key.request_id, key.fingerprint))
                        claimed = await cur.fetchone()
                        if claimed is None:  # stored before, or by a put that just committed
                            return await _replay(cur, key)
                        put_id = claimed[0]
                    await cur.executemany(_INSERT, [(*row, put_id) for row in rows])
                    phase.committing = True  # leaving the block sends COMMIT
                return list(labels)

        return await self._run(insert, phase)

    async def lookup(
        self, sample_id: str, output_hash: str, check: str, *, tenant: str = ""
    ) -> list[Label]:
        """The counting label of each labeller for this sample, output, check (and tenant)."""
        if "\x00" in sample_id or "\x00" in check or "\x00" in tenant:
            return []  # PostgreSQL text cannot hold NUL, so no stored label has one
        query = LabelQuery(sample_id=sample_id, output_hash=output_hash, check=check, tenant=tenant)
        return counting_labels(await self.list_labels(query, after_id=0, limit=LOOKUP_LIMIT))

    async def list_labels(
        self, query: LabelQuery, *, after_id: int, limit: int
    ) -> list[tuple[int, Label]]:
        """Up to `limit` labels with ids above `after_id`, by id."""
        where, args = _where(query)
        sql = (_HISTORY if query.include_history else _LATEST).format(where=where)
        params = [*args, after_id, limit]

        async def select() -> list[tuple[int, Label]]:
            async with self._pool.connection() as conn, conn.cursor() as cur:
                await cur.execute(sql, params)
                return [_row_label(row) for row in await cur.fetchall()]

        return await self._run(select)

    async def labels_of_outputs(
        self, query: LabelQuery, outputs: Sequence[tuple[str, str]]
    ) -> list[Label]:
        """The latest labels matching `query` of each (sample_id, output_hash) in `outputs`,
        each output's in storage order: one SELECT per `OUTPUTS_PER_CALL` outputs (the
        pool's other connections serve other calls meanwhile)."""
        where, args = _where(query)
        sql = _OF_OUTPUTS.format(where=where)
        # PostgreSQL text cannot hold NUL, so no stored label is of such an output.
        wanted = [key for key in dict.fromkeys(outputs) if "\x00" not in key[0]]
        found: list[Label] = []
        for start in range(0, len(wanted), OUTPUTS_PER_CALL):
            batch = wanted[start : start + OUTPUTS_PER_CALL]
            params = [[s for s, _ in batch], [h for _, h in batch], *args]

            async def select(params: list[Any] = params) -> list[Label]:
                async with self._pool.connection() as conn, conn.cursor() as cur:
                    await cur.execute(sql, params)
                    return [_row_label(row)[1] for row in await cur.fetchall()]

            found.extend(await self._run(select))
        return found

    async def close(self) -> None:
        """Close the pool; later calls raise `LabelsUnavailable`."""
        if self._closed:
            return
        self._closed = True
        await self._pool.close(timeout=1.0)
