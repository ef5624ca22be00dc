"""What an evaluation job is, as stored: its plan, its state, its lease and its progress."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol


class JobsUnavailable(Exception):
    """The job store does not answer (UNAVAILABLE)."""


class TooManyOpenJobs(Exception):
    """The tenant has `jobs_max_open_per_tenant` jobs queued or running already."""


class JobState(StrEnum):
    """Where a job is in its life."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        """Whether the job has ended."""
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


OPEN_STATES = (JobState.QUEUED.value, JobState.RUNNING.value)


def new_job_id() -> str:
    """A fresh job id."""
    return "job_" + uuid.uuid4().hex


def utc_now() -> datetime:
    """Now, in UTC."""
    return datetime.now(UTC)


@dataclass(slots=True, frozen=True)
class JobPlan:
    """A job's checks as its caller sent them (a `PlanSource`'s request fields)."""

    suite_yaml: str = ""
    suite_name: str = ""
    checks: tuple[bytes, ...] = ()
    """Serialized `CheckSpec` messages."""
    compact: tuple[str, ...] = ()
    budget_usd: float | None = None
    """USD the job's judge calls may spend over its life (`JobConfig.budget_usd`, else
    the suite's `settings.budget`); None: no job budget."""

    def to_json(self) -> str:
        """The plan as stored."""
        d: dict[str, Any] = {
            "suite_yaml": self.suite_yaml,
            "suite_name": self.suite_name,
            "checks": [base64.b64encode(c).decode() for c in self.checks],
            "compact": list(self.compact),
        }
        if self.budget_usd is not None:
            d["budget_usd"] = self.budget_usd
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> JobPlan:
        """The plan from its stored form."""
        d = json.loads(text)
        return cls(
            d["suite_yaml"],
            d["suite_name"],
            tuple(base64.b64decode(c) for c in d["checks"]),
            tuple(d["compact"]),
            d.get("budget_usd"),  # absent in jobs stored before job budgets
        )


@dataclass(slots=True)
class Job:
    """One job as stored (its cases are stored apart, in chunks)."""

    job_id: str
    tenant: str
    """The token name of its creator; empty when auth is off."""
    name: str
    plan: JobPlan
    cases_total: int
    labels: dict[str, str] = field(default_factory=dict)
    webhook_url: str = ""
    state: JobState = JobState.QUEUED
    cases_done: int = 0
    run_id: str = ""
    error: str = ""
    created_at: datetime = field(default_factory=utc_now)
    updated_at: datetime = field(default_factory=utc_now)
    summary: dict[str, Any] | None = None
    """The run's summary as stored with the run, aggregations included; set on success."""
    lease_owner: str = ""
    """The runner that holds the job (while running)."""
    claims: int = 0
    """How many times a runner claimed it (more than once: taken over, or tried again)."""
    spent_usd: float = 0.0
    """USD its judge calls spent up to its last checkpoint (held to `plan.budget_usd`)."""
    progress_exact: bool = False
    """Set by a claim when the job was queued (new, or released at a checkpoint): then
    `cases_done` is exactly what its run holds. A job taken over from a runner that died
    may have recorded a chunk past it."""


@dataclass(slots=True, frozen=True)
class PendingWebhook:
    """A finished job's webhook not yet delivered, leased to the server trying it."""

    job_id: str
    url: str
    body: str
    """The JSON body (signed when sent)."""
    attempts: int
    """Tries made before this one."""


@dataclass(slots=True)
class CaseChunk:
    """Consecutive cases of a job, stored together and scored together."""

    seq: int
    first: int
    """The job index of its first case."""
    cases: list[bytes]
    """Serialized `Case` messages."""


class JobStore(Protocol):
    """A durable job store (SQLite or PostgreSQL)."""

    description: str

    async def create(self, job: Job, chunks: Sequence[CaseChunk], max_open: int | None) -> None:
        """Store the job and its cases in one transaction; TooManyOpenJobs when the
        tenant has `max_open` open jobs already (None: no limit)."""

    async def get(self, job_id: str) -> Job | None:
        """One job."""

    async def list_jobs(
        self,
        tenant: str | None,
        state: JobState | None,
        before: tuple[int, str] | None,
        limit: int,
    ) -> list[Job]:
        """Jobs newest first (`tenant` None: every tenant's), after the cursor `before`
        ((created microseconds, job id) of the previous page's last)."""

    async def claim(self, owner: str, lease_s: float) -> Job | None:
        """A queued job, or a running one whose lease lapsed, leased to `owner`: of the
        tenants with one ready, the one running fewest jobs and then the one served
        longest ago; that tenant's oldest ready job."""

    async def others_waiting(self, tenant: str) -> bool:
        """Whether another tenant running fewer jobs than `tenant` has one ready."""

    async def release(
        self, job_id: str, owner: str, cases_done: int, spent_usd: float | None = None
    ) -> bool:
        """Queue the owner's running job again at its checkpoint `cases_done` (exact: its
        run holds that many cases), for the next claim; False when no longer the owner's.
        `spent_usd`: what its judge calls spent up to it (None leaves it)."""

    async def renew(
        self, job_id: str, owner: str, lease_s: float, cases_done: int,
        spent_usd: float | None = None,
    ) -> bool:  # fmt: skip
        """Extend the lease and record progress (and spending, unless None); False when
        the job is no longer the owner's to run (cancelled, or its lease lapsed and
        another runner took it)."""

    async def set_run(self, job_id: str, owner: str, run_id: str) -> bool:
        """Record the job's run (under the owner's lease)."""

    async def chunks(self, job_id: str, after_first: int) -> list[CaseChunk]:
        """Chunks holding cases at index `after_first` or later, in order (a page)."""

    async def finish(
        self,
        job_id: str,
        owner: str,
        state: JobState,
        cases_done: int,
        error: str,
        summary: dict[str, Any] | None,
        webhook: tuple[str, str] | None = None,
    ) -> bool:
        """End the job (under the owner's lease); its cases are deleted, and its webhook
        (url, body) is stored in the same transaction, for `due_webhooks`."""

    async def due_webhooks(self, owner: str, lease_s: float, limit: int) -> list[PendingWebhook]:
        """Up to `limit` webhooks due and not leased, leased to `owner` for `lease_s`."""

    async def webhook_tried(
        self, job_id: str, owner: str, *, done: bool, attempts: int, retry_at_us: int
    ) -> None:
        """After a try under the owner's lease: forget the webhook when `done` (delivered
        or given up), else make it due again at `retry_at_us` after `attempts` tries."""

    async def cancel(self, job_id: str) -> bool:
        """Cancel a queued or running job; False when it has ended already."""

    async def prune(self, ended_before_us: int) -> int:
        """Delete the jobs that ended before this time (microseconds); how many."""

    async def close(self) -> None:
        """Release connections."""
