"""Shared fixtures. Importing the checks package registers every built-in type."""

import os
from collections.abc import Iterator

import pytest
import scorewire.checks  # noqa: F401
from hypothesis import settings

from tests.support.components import under_ci

# Fixtures: `redis_server` (a real redis-server on a free loopback port) and `pki`
# (certificates made at test time).
pytest_plugins = ["tests.support.redis", "tests.support.pki"]

# CI explores the same examples every run, so a landing never hinges on a lucky draw;
# developers' runs stay random and keep finding new cases.
settings.register_profile("ci", derandomize=True, print_blob=True)
if under_ci():
    settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def _session_state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Servers started by session- and module-scoped fixtures keep their label store here,
    # never in the user's ~/.local/state/scorewire or the working directory.
    before = os.environ.get("SCOREWIRE_STATE_DIR")
    os.environ["SCOREWIRE_STATE_DIR"] = str(tmp_path_factory.mktemp("session-state"))
    yield
    if before is None:
        os.environ.pop("SCOREWIRE_STATE_DIR", None)
    else:
        os.environ["SCOREWIRE_STATE_DIR"] = before


@pytest.fixture(autouse=True)
def _own_state_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every test (and every server process it starts) gets a fresh state directory.
    monkeypatch.setenv("SCOREWIRE_STATE_DIR", str(tmp_path_factory.mktemp("state")))
