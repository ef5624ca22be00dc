"""The SQL both run stores share: tables, rows and the listing query.

Written with `?` placeholders (SQLite's); the PostgreSQL store swaps them for `%s`.
Times are integer microseconds since the epoch, UTC, in both databases, so that the two
stores sort, compare and page identically.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from scorewire.runs.run_model import RunInfo, RunQuery, RunStatus

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

RUN_COLUMNS = (
    "run_id, name, source, tenant, labels, started_at_us, ended_at_us, status, suite,"
    " suite_sha256, checks, results, summary, owner"
)

INSERT_RUN = f"INSERT INTO {{runs}} ({RUN_COLUMNS}) VALUES ({', '.join('?' * 14)})"
INSERT_LABEL = "INSERT INTO {labels} (run_id, key, value) VALUES (?, ?, ?)"
INSERT_CHUNK = "INSERT INTO {chunks} (run_id, cases, results, count) VALUES (?, ?, ?, ?)"
COUNT_RESULTS = "UPDATE {runs} SET results = results + ? WHERE run_id = ?"
INSERT_RECORDED = (
    "INSERT INTO {recorded} (scope, key, at_us) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
)
FORGET_RECORDED = "DELETE FROM {recorded} WHERE at_us < ?"


KEYS_PER_QUERY = 500
"""Keys asked about in one statement (SQLite binds at most 32,766 parameters)."""


def recorded_query(t: dict[str, str], n: int) -> str:
    """Which of `n` keys are recorded in a scope (parameters: scope, then the keys)."""
    return f"SELECT key FROM {t['recorded']} WHERE scope = ? AND key IN ({', '.join('?' * n)})"


FINISH_RUN = (
    "UPDATE {runs} SET status = ?, ended_at_us = ?, summary = ? WHERE run_id = ? AND status = ?"
)
HEARTBEAT = (
    "INSERT INTO {owners} (owner, seen_at_us) VALUES (?, ?)"
    " ON CONFLICT (owner) DO UPDATE SET seen_at_us = excluded.seen_at_us"
)
MARK_STALE = (
    "UPDATE {runs} SET status = 'incomplete' WHERE status = 'running' AND owner NOT IN"
    " (SELECT owner FROM {owners} WHERE seen_at_us >= ?)"
)
REOPEN_RUN = "UPDATE {runs} SET status = 'running' WHERE run_id = ? AND status = 'incomplete'"
FORGET_OWNERS = "DELETE FROM {owners} WHERE seen_at_us < ?"
GET_RUN = f"SELECT {RUN_COLUMNS} FROM {{runs}} WHERE run_id = ?"
CHUNKS = (
    "SELECT id, run_id, cases, results, count FROM {chunks} WHERE run_id = ? AND id > ?"
    " ORDER BY id LIMIT ?"
)
DELETE_CHUNKS = "DELETE FROM {chunks} WHERE run_id = ?"
DELETE_LABELS = "DELETE FROM {labels} WHERE run_id = ?"
DELETE_RUN = "DELETE FROM {runs} WHERE run_id = ?"
# Running runs are never retired: their results are still arriving.
EXPIRED = "SELECT run_id FROM {runs} WHERE status <> 'running' AND started_at_us < ?"
BEYOND_KEEP = (
    "SELECT run_id FROM {runs} WHERE status <> 'running'"
    " ORDER BY started_at_us DESC, run_id DESC LIMIT -1 OFFSET ?"
)
BEYOND_KEEP_PG = (
    "SELECT run_id FROM {runs} WHERE status <> 'running'"
    " ORDER BY started_at_us DESC, run_id DESC OFFSET ?"
)


def tables(prefix: str) -> dict[str, str]:
    """The table names, each under `prefix`."""
    return {k: f"{prefix}{k}" for k in ("runs", "labels", "chunks", "owners", "recorded")}


def micros(t: datetime) -> int:
    """Microseconds since the epoch."""
    return (t - EPOCH) // timedelta(microseconds=1)


def from_micros(us: int | None) -> datetime | None:
    """A UTC datetime from microseconds since the epoch."""
    return None if us is None else EPOCH + timedelta(microseconds=us)


def run_row(r: RunInfo) -> tuple[Any, ...]:
    """The row of a new run."""
    return (
        r.run_id,
        r.name,
        r.source,
        r.tenant,
        json.dumps(r.labels, ensure_ascii=False, sort_keys=True),
        micros(r.started_at),
        None if r.ended_at is None else micros(r.ended_at),
        r.status.value,
        r.suite,
        r.suite_sha256,
        json.dumps(r.checks, ensure_ascii=False),
        0,
        None if r.summary is None else json.dumps(r.summary, ensure_ascii=False),
        r.owner,
    )


def finish_row(r: RunInfo) -> tuple[Any, ...]:
    """The parameters of FINISH_RUN (a run is finished once, from running)."""
    summary = None if r.summary is None else json.dumps(r.summary, ensure_ascii=False)
    ended = micros(r.ended_at) if r.ended_at is not None else None
    return (r.status.value, ended, summary, r.run_id, RunStatus.RUNNING.value)


def row_run(row: Sequence[Any]) -> RunInfo:
    """A RunInfo from a RUN_COLUMNS row."""
    started = from_micros(row[5])
    assert started is not None
    return RunInfo(
        run_id=row[0],
        name=row[1],
        source=row[2],
        tenant=row[3],
        labels=json.loads(row[4]),
        started_at=started,
        ended_at=from_micros(row[6]),
        status=RunStatus(row[7]),
        suite=row[8],
        suite_sha256=row[9],
        checks=json.loads(row[10]),
        results=int(row[11]),
        summary=None if row[12] is None else json.loads(row[12]),
        owner=row[13],
    )


def list_query(
    t: dict[str, str], query: RunQuery, after: tuple[datetime, str] | None, limit: int
) -> tuple[str, list[Any]]:
    """The listing's SQL and parameters: newest first, then by id, after the cursor."""
    where: list[str] = ["1 = 1"]
    args: list[Any] = []
    if query.tenant is not None:
        where.append("tenant = ?")
        args.append(query.tenant)
    if query.name:
        where.append("name = ?")
        args.append(query.name)
    for key in sorted(query.labels):
        where.append(
            f"EXISTS (SELECT 1 FROM {t['labels']} l WHERE l.run_id = r.run_id"
            " AND l.key = ? AND l.value = ?)"
        )
        args.extend([key, query.labels[key]])
    if query.started_after is not None:
        where.append("started_at_us >= ?")
        args.append(micros(query.started_after))
    if query.started_before is not None:
        where.append("started_at_us < ?")
        args.append(micros(query.started_before))
    if query.status is not None:
        where.append("status = ?")
        args.append(query.status.value)
    if after is not None:
        at = micros(after[0])
        where.append("(started_at_us < ? OR (started_at_us = ? AND run_id < ?))")
        args.extend([at, at, after[1]])
    sql = (
        f"SELECT {RUN_COLUMNS} FROM {t['runs']} r WHERE {' AND '.join(where)}"
        " ORDER BY started_at_us DESC, run_id DESC LIMIT ?"
    )
    return sql, [*args, limit]


SCHEMA = (
    """CREATE TABLE IF NOT EXISTS {runs} (
        run_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        source TEXT NOT NULL,
        tenant TEXT NOT NULL,
        labels TEXT NOT NULL,
        started_at_us BIGINT NOT NULL,
        ended_at_us BIGINT,
        status TEXT NOT NULL,
        suite TEXT NOT NULL,
        suite_sha256 TEXT NOT NULL,
        checks TEXT NOT NULL,
        results BIGINT NOT NULL,
        summary TEXT,
        owner TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS {labels} (
        run_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    )""",
    """CREATE TABLE IF NOT EXISTS {owners} (
        owner TEXT PRIMARY KEY,
        seen_at_us BIGINT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS {runs}_started ON {runs} (started_at_us, run_id)",
    "CREATE INDEX IF NOT EXISTS {runs}_name ON {runs} (name, started_at_us)",
    "CREATE INDEX IF NOT EXISTS {runs}_tenant ON {runs} (tenant, started_at_us)",
    "CREATE INDEX IF NOT EXISTS {runs}_status ON {runs} (status, owner)",
    "CREATE INDEX IF NOT EXISTS {labels}_kv ON {labels} (key, value)",
    """CREATE TABLE IF NOT EXISTS {recorded} (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        at_us BIGINT NOT NULL,
        PRIMARY KEY (scope, key)
    )""",
    "CREATE INDEX IF NOT EXISTS {recorded}_at ON {recorded} (at_us)",
)
SQLITE_CHUNKS = """CREATE TABLE IF NOT EXISTS {chunks} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    cases BLOB NOT NULL,
    results BLOB NOT NULL,
    count INTEGER NOT NULL
)"""
PG_CHUNKS = """CREATE TABLE IF NOT EXISTS {chunks} (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id TEXT NOT NULL,
    cases BYTEA NOT NULL,
    results BYTEA NOT NULL,
    count INTEGER NOT NULL
)"""
CHUNKS_INDEX = "CREATE INDEX IF NOT EXISTS {chunks}_run ON {chunks} (run_id, id)"


def statements(sql: str, t: dict[str, str]) -> str:
    """`sql` with the table names filled in."""
    return sql.format(**t)


def write_plan(
    t: dict[str, str],
    created: Sequence[RunInfo],
    chunks: Sequence[Any],
    finished: Sequence[RunInfo],
) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """The statements of one `write`, each with its rows (for executemany)."""
    plan: list[tuple[str, list[tuple[Any, ...]]]] = []
    if created:
        plan.append((statements(INSERT_RUN, t), [run_row(r) for r in created]))
        labels = [(r.run_id, k, v) for r in created for k, v in sorted(r.labels.items())]
        if labels:
            plan.append((statements(INSERT_LABEL, t), labels))
    if chunks:
        plan.append(
            (statements(INSERT_CHUNK, t), [(c.run_id, c.cases, c.results, c.count) for c in chunks])
        )
        now = micros(datetime.now(UTC))
        keys = [(c.scope, k, now) for c in chunks for k in c.keys]
        if keys:
            plan.append((statements(INSERT_RECORDED, t), keys))
        counts: dict[str, int] = {}
        for c in chunks:
            counts[c.run_id] = counts.get(c.run_id, 0) + c.count
        plan.append((statements(COUNT_RESULTS, t), [(n, rid) for rid, n in counts.items()]))
    if finished:
        plan.append((statements(FINISH_RUN, t), [finish_row(r) for r in finished]))
    return plan
