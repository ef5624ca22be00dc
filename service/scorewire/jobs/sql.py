"""The SQL both job stores share, written with `?` placeholders (SQLite's); the PostgreSQL
store swaps them for `%s`. Times are integer microseconds since the epoch, UTC.

A job's row holds its state, lease and progress; its cases are rows of chunks, deleted
when the job ends. A claim takes a queued job, or a running one whose lease lapsed (its
runner died), and a runner's every later write names its lease (`owner`), so a runner
that lost its job (cancelled, or taken over) learns it at its next write.

Runners are shared fairly between tenants: a claim takes the ready job of the tenant
running the fewest jobs (counted over every replica's live leases), served longest ago
among those; and a runner that has run one job for `jobs_slice_s` gives it back
(RELEASE, at a checkpoint) when another tenant running fewer jobs has one waiting
(OTHERS_WAITING), so one tenant's queue of long jobs cannot hold every runner.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from scorewire.jobs.job_model import Job, JobPlan, JobState

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS {jobs} (job_id TEXT PRIMARY KEY, tenant TEXT NOT NULL,"
    " name TEXT NOT NULL, plan TEXT NOT NULL, labels TEXT NOT NULL, webhook_url TEXT NOT NULL,"
    " state TEXT NOT NULL, cases_total BIGINT NOT NULL, cases_done BIGINT NOT NULL,"
    " run_id TEXT NOT NULL, error TEXT NOT NULL, created_us BIGINT NOT NULL,"
    " updated_us BIGINT NOT NULL, summary TEXT, lease_owner TEXT NOT NULL,"
    " lease_until_us BIGINT NOT NULL, claims INTEGER NOT NULL DEFAULT 0)",
    "CREATE INDEX IF NOT EXISTS {jobs}_ready ON {jobs} (state, lease_until_us, created_us)",
    "CREATE INDEX IF NOT EXISTS {jobs}_tenant ON {jobs} (tenant, created_us)",
    "CREATE TABLE IF NOT EXISTS {cases} (job_id TEXT NOT NULL, seq INTEGER NOT NULL,"
    " first BIGINT NOT NULL, cases BYTEA NOT NULL, PRIMARY KEY (job_id, seq))",
    "CREATE TABLE IF NOT EXISTS {webhooks} (job_id TEXT PRIMARY KEY, url TEXT NOT NULL,"
    " body TEXT NOT NULL, attempts INTEGER NOT NULL, due_us BIGINT NOT NULL,"
    " lease_owner TEXT NOT NULL, lease_until_us BIGINT NOT NULL)",
]
COLUMNS = (
    "job_id, tenant, name, plan, labels, webhook_url, state, cases_total, cases_done, run_id,"
    " error, created_us, updated_us, summary, lease_owner, claims, spent_usd"
)
ADDED_COLUMNS = (("spent_usd", "DOUBLE PRECISION NOT NULL DEFAULT 0"),)
"""Columns of the jobs table added after it was first released: each store adds the
ones an older table lacks when it opens (SQLite has no ADD COLUMN IF NOT EXISTS)."""
INSERT_JOB = f"INSERT INTO {{jobs}} ({COLUMNS}, lease_until_us) VALUES ({', '.join('?' * 17)}, 0)"
INSERT_CHUNK = "INSERT INTO {cases} (job_id, seq, first, cases) VALUES (?, ?, ?, ?)"
OPEN_OF_TENANT = "SELECT count(*) FROM {jobs} WHERE tenant = ? AND state IN ('queued', 'running')"
GET_JOB = f"SELECT {COLUMNS} FROM {{jobs}} WHERE job_id = ?"
_IS_READY = "(j.state = 'queued' OR (j.state = 'running' AND j.lease_until_us < ?))"


def _running_of(tenant: str) -> str:
    """The count of `tenant`'s jobs under a live lease (parameter: now)."""
    return (
        f"(SELECT count(*) FROM {{jobs}} r WHERE r.tenant = {tenant} AND r.state = 'running'"
        " AND r.lease_until_us >= ?)"
    )


_LAST_SERVED = (
    "(SELECT coalesce(max(s.updated_us), 0) FROM {jobs} s WHERE s.tenant = j.tenant"
    " AND (s.state <> 'queued' OR s.run_id <> '' OR s.cases_done > 0))"
)
"""When a runner last wrote to one of the tenant's jobs that a runner ever took (its
last renewal, release or end); 0 for a tenant never served."""
READY = (
    f"SELECT j.job_id, j.state FROM {{jobs}} j WHERE {_IS_READY}"
    f" ORDER BY {_running_of('j.tenant')}, {_LAST_SERVED}, j.created_us LIMIT 1"
)
"""The next job to claim (parameter: now, now): of the tenants with one ready, the one
running fewest, and of those the one served longest ago (so with one runner the tenants
take turns); of its ready jobs, the oldest."""
OTHERS_WAITING = (
    f"SELECT 1 FROM {{jobs}} j WHERE j.tenant <> ? AND {_IS_READY}"
    f" AND {_running_of('j.tenant')} < {_running_of('?')} LIMIT 1"
)
"""Whether another tenant running fewer jobs than `tenant` has one ready (parameters:
tenant, now, now, tenant, now)."""
RELEASE = (
    "UPDATE {jobs} SET state = 'queued', lease_owner = '', lease_until_us = 0,"
    " cases_done = ?, spent_usd = coalesce(?, spent_usd), updated_us = ?, claims = claims - 1"
    " WHERE job_id = ? AND lease_owner = ? AND state = 'running'"
)
"""A running job given back at a checkpoint: queued again with its exact progress (not
counted as a claim: it was not tried and lost)."""
TAKE = (
    "UPDATE {jobs} SET state = 'running', lease_owner = ?, lease_until_us = ?, updated_us = ?,"
    " claims = claims + 1"
    " WHERE job_id = ?"
)
RENEW = (
    "UPDATE {jobs} SET lease_until_us = ?, cases_done = ?, spent_usd = coalesce(?, spent_usd),"
    " updated_us = ?"
    " WHERE job_id = ? AND lease_owner = ? AND state = 'running'"
)
SET_RUN = "UPDATE {jobs} SET run_id = ? WHERE job_id = ? AND lease_owner = ? AND state = 'running'"
CHUNKS = "SELECT seq, first, cases FROM {cases} WHERE job_id = ? AND seq >= ? ORDER BY seq LIMIT ?"
FINISH = (
    "UPDATE {jobs} SET state = ?, cases_done = ?, error = ?, summary = ?, updated_us = ?,"
    " lease_owner = '', lease_until_us = 0"
    " WHERE job_id = ? AND lease_owner = ? AND state = 'running'"
)
CANCEL = (
    "UPDATE {jobs} SET state = 'cancelled', updated_us = ?, lease_until_us = 0"
    " WHERE job_id = ? AND state IN ('queued', 'running')"
)
DELETE_CASES = "DELETE FROM {cases} WHERE job_id = ?"
INSERT_WEBHOOK = (
    "INSERT INTO {webhooks} (job_id, url, body, attempts, due_us, lease_owner, lease_until_us)"
    " VALUES (?, ?, ?, 0, ?, '', 0)"
)
"""A finished job's webhook, stored with its end (one transaction): any server delivers
it, so a server that dies or stops while trying does not lose it."""
DUE_WEBHOOKS = (
    "SELECT job_id, url, body, attempts FROM {webhooks} WHERE due_us <= ? AND lease_until_us < ?"
    " ORDER BY due_us LIMIT ?"
)
LEASE_WEBHOOK = "UPDATE {webhooks} SET lease_owner = ?, lease_until_us = ? WHERE job_id = ?"
RETRY_WEBHOOK = (
    "UPDATE {webhooks} SET attempts = ?, due_us = ?, lease_owner = '', lease_until_us = 0"
    " WHERE job_id = ? AND lease_owner = ?"
)
DELETE_WEBHOOK = "DELETE FROM {webhooks} WHERE job_id = ? AND lease_owner = ?"
PRUNE = "DELETE FROM {jobs} WHERE state IN ('succeeded', 'failed', 'cancelled') AND updated_us < ?"


def tables(prefix: str) -> dict[str, str]:
    """The table names, each under `prefix`."""
    return {"jobs": f"{prefix}jobs", "cases": f"{prefix}cases", "webhooks": f"{prefix}webhooks"}


def statement(text: str, names: dict[str, str]) -> str:
    """A statement with its table names filled in."""
    return text.format(**names)


def micros(t: datetime) -> int:
    """Microseconds since the epoch."""
    return (t - EPOCH) // timedelta(microseconds=1)


def from_micros(us: int) -> datetime:
    """A UTC datetime from microseconds since the epoch."""
    return EPOCH + timedelta(microseconds=us)


def job_row(j: Job) -> tuple[Any, ...]:
    """The row of a new job."""
    return (
        j.job_id,
        j.tenant,
        j.name,
        j.plan.to_json(),
        json.dumps(j.labels, sort_keys=True),
        j.webhook_url,
        j.state.value,
        j.cases_total,
        j.cases_done,
        j.run_id,
        j.error,
        micros(j.created_at),
        micros(j.updated_at),
        None if j.summary is None else json.dumps(j.summary),
        j.lease_owner,
        j.claims,
        j.spent_usd,
    )


def row_job(r: Sequence[Any], claimed_from: str = "") -> Job:
    """A Job from a COLUMNS row; `claimed_from`: its state before a claim took it."""
    return Job(
        job_id=r[0],
        tenant=r[1],
        name=r[2],
        plan=JobPlan.from_json(r[3]),
        labels=json.loads(r[4]),
        webhook_url=r[5],
        state=JobState(r[6]),
        cases_total=int(r[7]),
        cases_done=int(r[8]),
        run_id=r[9],
        error=r[10],
        created_at=from_micros(int(r[11])),
        updated_at=from_micros(int(r[12])),
        summary=None if r[13] is None else json.loads(r[13]),
        lease_owner=r[14],
        claims=int(r[15]),
        spent_usd=float(r[16]),
        progress_exact=claimed_from == JobState.QUEUED.value,
    )


def listing(tenant: str | None, state: JobState | None, before: tuple[int, str] | None,
            limit: int) -> tuple[str, list[Any]]:  # fmt: skip
    """The listing query and its parameters (newest first)."""
    where: list[str] = []
    args: list[Any] = []
    if tenant is not None:
        where.append("tenant = ?")
        args.append(tenant)
    if state is not None:
        where.append("state = ?")
        args.append(state.value)
    if before is not None:
        where.append("(created_us < ? OR (created_us = ? AND job_id < ?))")
        args.extend([before[0], before[0], before[1]])
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    text = f"SELECT {COLUMNS} FROM {{jobs}}{clause} ORDER BY created_us DESC, job_id DESC LIMIT ?"
    return text, [*args, limit]
