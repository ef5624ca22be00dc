"""Shared fixtures. Importing the checks package registers every built-in type."""

import scorewire.checks  # noqa: F401

# The `redis_server` fixture: a real redis-server on a free loopback port.
pytest_plugins = ["tests.support.redis"]
