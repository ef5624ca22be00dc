"""Evaluation jobs: a batch scored after its caller has gone, resumed by any replica.

`open_job_store(settings)` opens the store the settings name: PostgreSQL when
`database_url` is set (shared by replicas), else the SQLite file `jobs_path` under the
state directory. `JobRunner` (`runner.py`) claims and scores jobs; `aggregate.py` sums a
finished job's run up; `webhook.py` tells the caller it finished.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorewire.jobs.job_model import (
    CaseChunk,
    Job,
    JobPlan,
    JobState,
    JobStore,
    JobsUnavailable,
    PendingWebhook,
    TooManyOpenJobs,
    new_job_id,
)

if TYPE_CHECKING:
    from scorewire.settings import Settings

__all__ = [
    "CaseChunk",
    "Job",
    "JobPlan",
    "JobState",
    "JobStore",
    "JobsUnavailable",
    "PendingWebhook",
    "TooManyOpenJobs",
    "new_job_id",
    "open_job_store",
]


async def open_job_store(settings: Settings) -> JobStore:
    """The job store the settings name; JobsUnavailable when it cannot be opened."""
    if settings.database_url is not None:
        from scorewire.jobs.postgres import PostgresJobStore

        return await PostgresJobStore.open(
            settings.database_url.get_secret_value(), timeout_s=settings.store_timeout_s
        )
    from scorewire.jobs.sqlite import SqliteJobStore

    try:
        path = settings.state_path() / settings.jobs_path
    except RuntimeError as err:  # no home directory
        raise JobsUnavailable(f"cannot find the state directory: {err}") from None
    return await SqliteJobStore.open(path)
