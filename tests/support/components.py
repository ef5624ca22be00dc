"""Real components the tests start (Redis, PostgreSQL, tmux, Prometheus, ...).

A developer's machine may lack one: its tests skip, saying what to install. Under CI
every test must run, so a missing component fails instead of skipping quietly. This
module holds the one definition of "under CI" that every such test (and the Hypothesis
profile in tests/conftest.py) uses; `.ci/run` sets `CI=true` unless the CI system has
set it already.
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest

NOT_CI = frozenset({"", "0", "false", "no"})
"""Values of `CI` that mean "not under CI" (case-insensitive); anything else means CI."""


def under_ci() -> bool:
    """Whether the tests run under CI: `CI` is set to anything but empty, 0, false or no.

    GitHub Actions, GitLab CI and most others set `CI=true`, some `CI=1` or a name."""
    return os.environ.get("CI", "").strip().lower() not in NOT_CI


def require_component(name: str, reason: str) -> NoReturn:
    """Stop a test whose component `name` is missing: a skip, or under CI a failure.

    `reason` says why it is missing and how to install it."""
    message = f"{name} is missing: {reason}"
    if under_ci():
        pytest.fail(f"{message} (under CI every test must run: scripts/install_test_deps.sh)")
    pytest.skip(message)


def require_binary(name: str, package: str) -> str:
    """The path of the executable `name`, else `require_component` naming its package."""
    path = shutil.which(name)
    if path is None:
        require_component(name, f"not on PATH (apt-get install -y {package})")
    return path
