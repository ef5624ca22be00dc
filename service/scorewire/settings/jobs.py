"""The settings of evaluation jobs: a part of the settings model of its own (`settings.py`
is at its size limit), joined to `Settings` as its other parts are."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class JobSettings(BaseModel):
    """Evaluation jobs: their store, their limits, the runner and the completion webhook."""

    jobs_path: str = Field("jobs.db", min_length=1)
    """SQLite file of the job store, used when `database_url` is not set (created if
    absent); a relative path is under the state directory (`state_dir`)."""
    jobs_max_cases: int = Field(200_000, ge=1)
    """Most cases one job may hold (CreateJob's `config.case_count`)."""
    jobs_max_open_per_tenant: int = Field(8, ge=1)
    """Most jobs one tenant may have queued or running at once; CreateJob past it is
    RESOURCE_EXHAUSTED."""
    jobs_chunk_cases: int = Field(256, ge=1, le=256)
    """Cases scored, recorded and checkpointed together: a replica that dies mid-job
    costs at most one chunk's scoring again."""
    jobs_lease_s: float = Field(30.0, gt=0)
    """Seconds a runner's claim on a job lasts unless renewed (it renews every third of
    it); a job whose runner died is resumed by another once its lease lapsed."""
    jobs_poll_s: float = Field(1.0, gt=0)
    """Seconds an idle runner waits before it looks for a queued job again."""
    jobs_runners: int = Field(1, ge=0, le=64)
    """Jobs one server process scores at once; 0: this process runs none (it still
    creates and serves them)."""
    jobs_slice_s: float = Field(2.0, gt=0)
    """Seconds a runner scores one job before it looks for another tenant's: if a tenant
    running fewer jobs than this job's has one waiting, the job is queued again at its
    next checkpoint and the runner takes the other. Runners are shared between tenants
    this way, across replicas; each turn given back costs a few job-store writes."""
    jobs_max_age_s: int = Field(30 * 86_400, ge=0)
    """Ended jobs (their rows: the runs stay, under the runs' retention) older than this
    many seconds are deleted by the server; 0 keeps them."""
    jobs_webhook_secret: SecretStr | None = None
    """Key of the HMAC-SHA256 signature of completion webhooks; unset: a job asking for a
    webhook is refused (FAILED_PRECONDITION). Never logged."""
    jobs_webhook_attempts: int = Field(4, ge=1, le=20)
    """Tries of a completion webhook POST before it is given up (1 s, 2 s, 4 s ... apart)."""
    jobs_webhook_timeout_s: float = Field(5.0, gt=0)
    """Seconds one webhook POST may take."""
