"""The real scorewire server for the client tests, on a free port.

`SCOREWIRE_ADDR` (host:port) points the tests at a server that is already running
(`make test` may start one for every language's client); otherwise the fixture starts
`SCOREWIRE_BIN` (default: the virtualenv's `scorewire`) on port 0, reads the port from
its `scorewire listening on HOST:PORT` line, and stops it when the session ends.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READY_PREFIX = "scorewire listening on "
START_TIMEOUT_S = 60.0


def _read_ready_line(proc: subprocess.Popen[str], stderr_path: str) -> str:
    """The address announced on stdout, or a failure carrying the server's stderr."""
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            if not sel.select(timeout=0.5):
                if proc.poll() is not None:
                    break
                continue
            line = proc.stdout.readline()
            if not line:  # stdout closed: the server exited
                break
            if line.startswith(READY_PREFIX):
                return line[len(READY_PREFIX) :].strip()
    finally:
        sel.close()
    proc.kill()
    proc.wait()
    log = Path(stderr_path).read_text(errors="replace")[-4000:]
    pytest.fail(f"scorewire server did not announce its port; stderr:\n{log}")


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def scorewire_addr() -> Iterator[str]:
    """host:port of a running scorewire server."""
    addr = os.environ.get("SCOREWIRE_ADDR")
    if addr:
        yield addr
        return
    binary = os.environ.get("SCOREWIRE_BIN", str(ROOT / ".venv" / "bin" / "scorewire"))
    with tempfile.NamedTemporaryFile(prefix="scorewire-server-", suffix=".log") as stderr:
        proc = subprocess.Popen(
            # Metrics on port 0 too, so parallel servers never collide on 9464.
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        try:
            yield _read_ready_line(proc, stderr.name)
        finally:
            _stop(proc)
            if proc.stdout is not None:
                proc.stdout.close()
