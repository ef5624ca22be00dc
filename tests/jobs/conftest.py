"""The job store of a test: SQLite, or PostgreSQL on a throwaway cluster."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from scorewire.jobs import JobStore
from scorewire.jobs.postgres import PostgresJobStore
from scorewire.jobs.sqlite import SqliteJobStore

from tests.support.postgres import pg_cluster, pg_url  # noqa: F401 - fixtures

StoreOpener = Callable[[], Awaitable[JobStore]]


@pytest.fixture(params=["sqlite", "postgres"])
def open_jobs(request: pytest.FixtureRequest, tmp_path: Path) -> StoreOpener:
    """Opens the job store of this test (a second opener is a second replica)."""
    if request.param == "sqlite":

        async def sqlite() -> JobStore:
            return await SqliteJobStore.open(tmp_path / "jobs.db")

        return sqlite
    url = request.getfixturevalue("pg_url")

    async def postgres() -> JobStore:
        return await PostgresJobStore.open(url)

    return postgres
