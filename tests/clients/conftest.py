"""The real scorewire server for the client tests, on a free port.

`SCOREWIRE_ADDR` (host:port) points the tests at a server that is already running
(`make test` may start one for every language's client); otherwise the fixture starts
`SCOREWIRE_BIN` (default: the virtualenv's `scorewire`) on port 0, reads the port from
its `scorewire listening on HOST:PORT` line, and stops it when the session ends.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import READY_PREFIX, read_line_until, stop_process

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0


def _read_ready_line(proc: subprocess.Popen[str], stderr_path: str) -> str:
    """The address announced on stdout, or a failure carrying the server's stderr."""
    assert proc.stdout is not None
    line, _ = read_line_until(
        proc, proc.stdout, lambda text: text.startswith(READY_PREFIX), START_TIMEOUT_S
    )
    if line is not None:
        return line[len(READY_PREFIX) :].strip()
    proc.kill()
    proc.wait()
    log = Path(stderr_path).read_text(errors="replace")[-4000:]
    pytest.fail(f"scorewire server did not announce its port; stderr:\n{log}")


@pytest.fixture(scope="session")
def scorewire_addr() -> Iterator[str]:
    """host:port of a running scorewire server."""
    addr = os.environ.get("SCOREWIRE_ADDR")
    if addr:
        yield addr
        return
    binary = os.environ.get("SCOREWIRE_BIN", str(ROOT / ".venv" / "bin" / "scorewire"))
    with (
        tempfile.NamedTemporaryFile(prefix="scorewire-server-", suffix=".log") as stderr,
        tempfile.TemporaryDirectory(prefix="scorewire-state-") as state,
    ):
        # Its own state directory and the observe tests' evaluation rule.
        env = {
            **os.environ,
            "SCOREWIRE_STATE_DIR": state,
            "SCOREWIRE_OBSERVE_RULES_FILE": str(ROOT / "tests" / "clients" / "observe_rules.yaml"),
        }
        proc = subprocess.Popen(
            # Metrics on port 0 too, so parallel servers never collide on 9464.
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        try:
            yield _read_ready_line(proc, stderr.name)
        finally:
            stop_process(proc, timeout_s=30)
            if proc.stdout is not None:
                proc.stdout.close()
