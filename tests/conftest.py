"""Shared fixtures. Importing the checks package registers every built-in type."""

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
