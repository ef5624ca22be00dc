"""Fixtures of the metrics tests (helpers live in tests/metrics/helpers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.metrics.helpers import API_KEY, MetricsServer, start_metrics_server


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """The OpenAI stand-in on a free port."""
    fake = FakeOpenAI(api_key=API_KEY)
    with fake.running():
        yield fake


@pytest.fixture
async def server() -> AsyncIterator[MetricsServer]:
    """A server with metrics and no judge."""
    srv = await start_metrics_server()
    try:
        yield srv
    finally:
        await srv.close()
