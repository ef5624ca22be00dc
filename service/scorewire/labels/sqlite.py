"""The label store in one SQLite file: the default, for a single server or workers on one host.

Durability: the database runs in WAL mode with `synchronous=FULL`, and `put` returns only
after its transaction committed. In WAL mode `NORMAL` skips the fsync of the log at each
commit, so a power cut or kernel crash can roll back the last commits, which would lose
a label the server already acknowledged. `FULL` fsyncs the log at every commit; labels
arrive at human pace (a few per second at most), so the fsync costs nothing that matters.

Concurrency: labels are only ever inserted into `label_history` (append-only), so two
writers never overwrite each other; readers pick the latest per key. WAL lets readers
run beside the one writer, and `busy_timeout` makes worker processes sharing the file
queue their writes instead of failing.

Truthful failures: a write the server gives up on (the file stayed locked past
`OPERATION_TIMEOUT_S`) is abandoned under a lock shared with its thread, so that it either
rolls back (the caller hears "nothing was stored") or, when its COMMIT had already
begun, is waited for and reported as it ended. Only a commit that neither finishes nor
fails in time is `LabelsOutcomeUnknown`. A put with a `PutKey` is idempotent: its
request id is stored in the same transaction as its labels.

sqlite3 blocks, so every call runs on one dedicated thread that owns the connection.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from scorewire.labels.label_model import (
    LOOKUP_LIMIT,
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

OPERATION_TIMEOUT_S = 5.0
"""The most one store call may take before the store counts as not answering."""
COMMIT_WAIT_S = 10.0
"""After OPERATION_TIMEOUT_S, how long a write whose COMMIT had begun is still waited for."""
_BUSY_TIMEOUT_S = 4.0

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _is_busy(err: sqlite3.OperationalError) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text


_SCHEMA = """
CREATE TABLE IF NOT EXISTS label_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sample_id TEXT NOT NULL,
    output_hash TEXT NOT NULL,
    label_check TEXT NOT NULL,
    labeller TEXT NOT NULL,
    passed INTEGER NOT NULL,
    note TEXT NOT NULL,
    created_at_us INTEGER NOT NULL,
    stored_at_us INTEGER NOT NULL,
    tenant TEXT NOT NULL DEFAULT '',
    put_id INTEGER
);
CREATE TABLE IF NOT EXISTS label_puts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scope TEXT NOT NULL,
    request_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    stored_at_us INTEGER NOT NULL,
    UNIQUE (scope, request_id)
);
"""
# Files made before tenants and request ids lack two columns (added in place, once).
_ADDED_COLUMNS = (
    ("tenant", "ALTER TABLE label_history ADD COLUMN tenant TEXT NOT NULL DEFAULT ''"),
    ("put_id", "ALTER TABLE label_history ADD COLUMN put_id INTEGER"),
)
_INDEXES = """
CREATE INDEX IF NOT EXISTS label_history_key
    ON label_history (sample_id, output_hash, label_check, labeller, created_at_us, id);
CREATE INDEX IF NOT EXISTS label_history_tenant ON label_history (tenant, id);
CREATE INDEX IF NOT EXISTS label_history_put ON label_history (put_id) WHERE put_id IS NOT NULL;
"""

_COLUMNS = "id, sample_id, output_hash, label_check, labeller, passed, note, created_at_us, tenant"

# The latest label per key: the highest created_at, ties to the highest id (stored last).
# Filters are on key columns only, so filtering inside the window keeps whole keys.
_LATEST = f"""
SELECT {_COLUMNS} FROM (
    SELECT {_COLUMNS}, ROW_NUMBER() OVER (
        PARTITION BY tenant, sample_id, output_hash, label_check, labeller
        ORDER BY created_at_us DESC, id DESC
    ) AS rank
    FROM label_history WHERE {{where}}
) WHERE rank = 1 AND id > ? ORDER BY id LIMIT ?
"""
_HISTORY = f"SELECT {_COLUMNS} FROM label_history WHERE {{where}} AND id > ? ORDER BY id LIMIT ?"
OUTPUTS_PER_SELECT = 100
"""Outputs whose labels one SELECT reads. Every call of the store waits on its one thread,
so a ListLabels or a `human` check arriving meanwhile waits for at most one such SELECT
(about 3 ms at 100 outputs; 500 took 16 ms here, for the same total)."""
# The latest labels of the outputs listed in `keys`: joined through the key index (a row
# value `IN (VALUES ...)` would scan the table instead).
_OF_OUTPUTS = f"""
WITH keys(s, h) AS (VALUES {{values}})
SELECT {_COLUMNS} FROM (
    SELECT {_COLUMNS}, ROW_NUMBER() OVER (
        PARTITION BY tenant, sample_id, output_hash, label_check, labeller
        ORDER BY created_at_us DESC, id DESC
    ) AS rank
    FROM keys JOIN label_history ON sample_id = keys.s AND output_hash = keys.h
    WHERE {{where}}
) WHERE rank = 1 ORDER BY id
"""
_INSERT = (
    "INSERT INTO label_history (sample_id, output_hash, label_check, labeller, passed, note,"
    " created_at_us, stored_at_us, tenant, put_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class _CommitFailed(Exception):
    """COMMIT itself raised: the transaction's outcome is not known."""


class _Attempt:
    """Whether a write may still commit, decided under a lock its thread shares.

    The lock is held only to flip the state, never across I/O, so the event loop
    taking it on a timeout never waits on the disk.
    """

    __slots__ = ("_lock", "_state")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "pending"

    def may_commit(self) -> bool:
        """Called by the write just before COMMIT: False when the caller gave up on it."""
        with self._lock:
            if self._state == "abandoned":
                return False
            self._state = "committing"
            return True

    def abandon(self) -> bool:
        """Called on a timeout: True when the write will now never commit."""
        with self._lock:
            if self._state == "pending":
                self._state = "abandoned"
            return self._state == "abandoned"


def to_micros(moment: datetime) -> int:
    """Microseconds since the Unix epoch of a timezone-aware time."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


def from_micros(micros: int) -> datetime:
    """The UTC time `micros` microseconds after the Unix epoch."""
    return _EPOCH + timedelta(microseconds=micros)


def _row_label(row: Sequence[Any]) -> tuple[int, Label]:
    return int(row[0]), Label(
        sample_id=row[1],
        output_hash=row[2],
        check=row[3],
        labeller=row[4],
        passed=bool(row[5]),
        note=row[6],
        created_at=from_micros(int(row[7])),
        tenant=row[8],
    )


def _where(query: LabelQuery) -> tuple[str, list[Any]]:
    filters = query.filters()
    clauses = ["1 = 1"] + [f"{column} = ?" for column, _ in filters]
    return " AND ".join(clauses), [value for _, value in filters]


def _missing_columns(conn: sqlite3.Connection) -> list[str]:
    have = {row[1] for row in conn.execute("PRAGMA table_info(label_history)")}
    return [statement for column, statement in _ADDED_COLUMNS if column not in have]


def _migrate(conn: sqlite3.Connection) -> None:
    """Add the columns and indexes a file made by an earlier version lacks.

    An up-to-date file takes no write lock here, so opening it never waits on a writer.
    """
    if _missing_columns(conn):
        conn.execute("BEGIN IMMEDIATE")  # two processes opening one old file add them once
        try:
            for statement in _missing_columns(conn):
                conn.execute(statement)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    conn.executescript(_INDEXES)


def _earlier_put(db: sqlite3.Connection, key: PutKey) -> list[Label] | None:
    """The labels a put with this key stored; None when there was none."""
    row = db.execute(
        "SELECT id, fingerprint FROM label_puts WHERE scope = ? AND request_id = ?",
        (key.scope, key.request_id),
    ).fetchone()
    if row is None:
        return None
    if row[1] != key.fingerprint:
        raise RequestIdReused(key.request_id)
    found = db.execute(
        f"SELECT {_COLUMNS} FROM label_history WHERE put_id = ? ORDER BY id", (row[0],)
    )
    return [_row_label(r)[1] for r in found]


class SqliteLabelStore:
    """A `LabelStore` in one SQLite file. Open it with `SqliteLabelStore.open(path)`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="labels-sqlite")
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self._max_variables = 999  # SQLite's least; the connection's own once open

    @classmethod
    async def open(cls, path: str) -> SqliteLabelStore:
        """Open (creating if needed) the store at `path`.

        Raises `LabelsUnavailable` when the file cannot be opened: a SQLite path that
        does not work is a configuration error, better reported at start-up.
        """
        store = cls(path)
        # Not logged here: the caller reports it (at start-up, as the one line that counts).
        await store._call(store._connect, log_failure=False)
        return store

    def _connect(self) -> None:
        # Two worker processes opening a new file at once can see "database is locked"
        # from `journal_mode=WAL` or the schema script: SQLite does not always call the
        # busy handler there (switching the journal mode, recovering a WAL another
        # process is creating). Those are transient, so opening retries them briefly,
        # inside the store's call timeout.
        deadline = time.monotonic() + _BUSY_TIMEOUT_S
        pause = 0.02
        while True:
            try:
                self._open()
                return
            except sqlite3.OperationalError as err:
                if not _is_busy(err) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.25)

    def _open(self) -> None:
        conn = sqlite3.connect(
            self.path,
            timeout=_BUSY_TIMEOUT_S,
            isolation_level=None,  # autocommit; transactions are explicit
            check_same_thread=False,  # only the store's one thread uses it
        )
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"cannot use WAL journal mode (got {mode})")
            conn.execute("PRAGMA synchronous=FULL")
            conn.executescript(_SCHEMA)
            _migrate(conn)
        except BaseException:
            conn.close()
            raise
        self._max_variables = conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        self._conn = conn

    async def _call(self, fn: Callable[[], T], *, log_failure: bool = True) -> T:
        if self._closed:
            raise LabelsUnavailable("the label store is closed")
        loop = asyncio.get_running_loop()
        try:
            return await asyncio.wait_for(
                loop.run_in_executor(self._executor, fn), OPERATION_TIMEOUT_S
            )
        except TimeoutError:
            raise LabelsUnavailable(
                f"the label store did not answer within {OPERATION_TIMEOUT_S:g} s"
            ) from None
        except (sqlite3.Error, RuntimeError) as err:
            # RuntimeError: the executor was shut down by a concurrent close().
            if log_failure:
                log.warning("label store %s failed: %s", self.path, err)
            raise LabelsUnavailable(f"the label store failed: {err}") from None

    async def _write(self, fn: Callable[[_Attempt], T]) -> T:
        """Run a write that asks `attempt.may_commit()` before its COMMIT."""
        if self._closed:
            raise LabelsUnavailable("the label store is closed")
        attempt = _Attempt()
        loop = asyncio.get_running_loop()
        try:
            job = loop.run_in_executor(self._executor, fn, attempt)
        except RuntimeError as err:  # the executor was shut down by a concurrent close()
            raise LabelsUnavailable(f"the label store failed: {err}") from None
        try:
            try:
                return await asyncio.wait_for(asyncio.shield(job), OPERATION_TIMEOUT_S)
            except TimeoutError:
                if attempt.abandon():
                    job.cancel()  # never starts if still queued; rolls back if running
                    raise LabelsUnavailable(
                        f"the label store did not answer within {OPERATION_TIMEOUT_S:g} s"
                    ) from None
            # The COMMIT had begun: its own outcome is the answer.
            return await asyncio.wait_for(job, COMMIT_WAIT_S)
        except TimeoutError:
            raise LabelsOutcomeUnknown(
                f"the label store began a commit and did not finish it within "
                f"{OPERATION_TIMEOUT_S + COMMIT_WAIT_S:g} s"
            ) from None
        except _CommitFailed as err:
            log.warning("label store %s failed to commit: %s", self.path, err)
            raise LabelsOutcomeUnknown(f"the label store failed to commit: {err}") from None
        except (sqlite3.Error, RuntimeError) as err:
            log.warning("label store %s failed: %s", self.path, err)
            raise LabelsUnavailable(f"the label store failed: {err}") from None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise sqlite3.OperationalError("the label store is closed")
        return self._conn

    async def put(self, labels: Sequence[Label], key: PutKey | None = None) -> list[Label]:
        """Insert every label in one transaction; returns the labels stored, after the commit.

        With a `key` stored before, inserts nothing and returns that put's labels.
        """
        stored_at = to_micros(utc_now())
        rows = [
            (
                lb.sample_id,
                lb.output_hash,
                lb.check,
                lb.labeller,
                int(lb.passed),
                lb.note,
                to_micros(lb.created_at),
                stored_at,
                lb.tenant,
            )
            for lb in labels
        ]

        def insert(attempt: _Attempt) -> list[Label]:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                put_id = None
                if key is not None:
                    earlier = _earlier_put(db, key)
                    if earlier is not None:
                        db.execute("ROLLBACK")
                        return earlier
                    put_id = db.execute(
                        "INSERT INTO label_puts (scope, request_id, fingerprint, stored_at_us)"
                        " VALUES (?, ?, ?, ?)",
                        (key.scope, key.request_id, key.fingerprint, stored_at),
                    ).lastrowid
                db.executemany(_INSERT, [(*row, put_id) for row in rows])
            except BaseException:
                db.execute("ROLLBACK")
                raise
            if not attempt.may_commit():
                db.execute("ROLLBACK")
                return []  # nobody waits for this answer any more
            try:
                db.execute("COMMIT")
            except sqlite3.Error as err:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise _CommitFailed(str(err)) from None
            return list(labels)

        return await self._write(insert)

    async def lookup(
        self, sample_id: str, output_hash: str, check: str, *, tenant: str = ""
    ) -> list[Label]:
        """The counting label of each labeller for this sample, output, check (and tenant)."""
        query = LabelQuery(sample_id=sample_id, output_hash=output_hash, check=check, tenant=tenant)
        return counting_labels(await self.list_labels(query, after_id=0, limit=LOOKUP_LIMIT))

    async def list_labels(
        self, query: LabelQuery, *, after_id: int, limit: int
    ) -> list[tuple[int, Label]]:
        """Up to `limit` labels with ids above `after_id`, by id."""
        where, args = _where(query)
        sql = (_HISTORY if query.include_history else _LATEST).format(where=where)
        params = [*args, after_id, limit]

        def select() -> list[tuple[int, Label]]:
            return [_row_label(row) for row in self._db().execute(sql, params)]

        return await self._call(select)

    async def labels_of_outputs(
        self, query: LabelQuery, outputs: Sequence[tuple[str, str]]
    ) -> list[Label]:
        """The latest labels matching `query` of each (sample_id, output_hash) in `outputs`,
        each output's in storage order: one SELECT per `OUTPUTS_PER_SELECT` outputs (fewer
        when this SQLite takes fewer variables in one statement)."""
        where, args = _where(query)
        wanted = list(dict.fromkeys(outputs))
        per_read = max(1, min(OUTPUTS_PER_SELECT, (self._max_variables - len(args)) // 2))
        found: list[Label] = []
        for start in range(0, len(wanted), per_read):
            batch = wanted[start : start + per_read]
            sql = _OF_OUTPUTS.format(values=", ".join(["(?, ?)"] * len(batch)), where=where)
            params = [part for key in batch for part in key] + args

            def select(sql: str = sql, params: list[Any] = params) -> list[Label]:
                return [_row_label(row)[1] for row in self._db().execute(sql, params)]

            found.extend(await self._call(select))
        return found

    async def close(self) -> None:
        """Close the connection; later calls raise `LabelsUnavailable`."""
        if self._closed:
            return
        self._closed = True

        def shut() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, shut)
        self._executor.shutdown(wait=False)
