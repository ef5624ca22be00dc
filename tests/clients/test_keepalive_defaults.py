"""One keepalive default in every client, the server's own (issue 15 §3).

The TypeScript and Java clients pinged every 60 s (20 s ack timeout) while Python, Go
and the server used 30 s (10 s). Each client's own tests pin its constant in use; this
reads the constant from each client's source, so a client drifting from the server's
default fails here whatever toolchains this machine has.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scorewire.client import _channel
from scorewire.settings import Settings

ROOT = Path(__file__).resolve().parents[2]

# (client, source file, pattern of the interval, of the ack timeout, unit to seconds)
SOURCES = [
    (
        "go",
        "clients/go/client.go",
        r"DefaultKeepalive = (\d+) \* time\.Second",
        r"DefaultKeepaliveTimeout = (\d+) \* time\.Second",
        1.0,
    ),
    (
        "typescript",
        "clients/typescript/src/client.ts",
        r"DEFAULT_KEEPALIVE_TIME_MS = ([\d_]+);",
        r"DEFAULT_KEEPALIVE_TIMEOUT_MS = ([\d_]+);",
        0.001,
    ),
    (
        "java",
        "clients/java/src/main/java/dev/scorewire/client/ScorewireClient.java",
        r"DEFAULT_KEEPALIVE_TIME = Duration\.ofSeconds\((\d+)\)",
        r"DEFAULT_KEEPALIVE_TIMEOUT = Duration\.ofSeconds\((\d+)\)",
        1.0,
    ),
]


def _constant(source: str, pattern: str, unit: float) -> float:
    match = re.search(pattern, source)
    assert match, f"pattern {pattern!r} not found: was the constant renamed?"
    return float(match.group(1).replace("_", "")) * unit


def _server_default(field: str) -> float:
    """The setting's default (not the environment's value)."""
    default = Settings.model_fields[field].default
    assert isinstance(default, float)
    return default


def test_python_client_uses_the_servers_keepalive() -> None:
    assert _server_default("keepalive_time_s") == _channel.DEFAULT_KEEPALIVE_S
    assert _server_default("keepalive_timeout_s") == _channel.DEFAULT_KEEPALIVE_TIMEOUT_S


@pytest.mark.parametrize(("client", "path", "interval", "timeout", "unit"), SOURCES)
def test_every_other_client_uses_the_servers_keepalive(
    client: str, path: str, interval: str, timeout: str, unit: float
) -> None:
    source = (ROOT / path).read_text()
    assert _constant(source, interval, unit) == _server_default("keepalive_time_s"), client
    assert _constant(source, timeout, unit) == _server_default("keepalive_timeout_s"), client
