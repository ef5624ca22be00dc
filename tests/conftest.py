"""Shared fixtures. Importing the checks package registers every built-in type."""

import os

import pytest
import scorewire.checks  # noqa: F401
from hypothesis import settings

# Fixtures: `redis_server` (a real redis-server on a free loopback port) and `pki`
# (certificates made at test time).
pytest_plugins = ["tests.support.redis", "tests.support.pki"]

# CI explores the same examples every run, so a landing never hinges on a lucky draw;
# developers' runs stay random and keep finding new cases.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _own_state_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every test (and every server process it starts) keeps its label store in a fresh
    # state directory, never in the user's ~/.local/state/scorewire or the working one.
    monkeypatch.setenv("SCOREWIRE_STATE_DIR", str(tmp_path_factory.mktemp("state")))
