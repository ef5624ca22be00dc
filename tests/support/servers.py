"""Servers as child processes: a free loopback port, and `scorewire serve` started and stopped.

    proc, address = serve_process({"SCOREWIRE_CACHE_URL": url}, "--imports", "tests.x")
    try:
        ...
    finally:
        stop_process(proc)

The child gets this environment with the repository on PYTHONPATH (so `--imports` of
test modules works), metrics off unless asked for, and the overrides on top.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCOREWIRE = str(Path(sys.executable).parent / "scorewire")
READY_PREFIX = "scorewire listening on "


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_process(
    env_overrides: dict[str, str], *args: str, port: int = 0
) -> tuple[subprocess.Popen[str], str]:
    """`scorewire serve --port <port> <args>` as a child process, and its address.

    Returns once the server has printed its ready line."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.setdefault("SCOREWIRE_METRICS_ENABLED", "false")
    env.update(env_overrides)
    proc = subprocess.Popen(
        [SCOREWIRE, "serve", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith(READY_PREFIX):
        proc.kill()
        proc.wait(5)
        raise AssertionError(f"scorewire serve did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1].strip()


def stop_process(proc: subprocess.Popen[str]) -> None:
    """SIGTERM, then SIGKILL after 15 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
