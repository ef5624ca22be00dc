"""Servers as child processes: a free port, `scorewire serve` started, read and stopped.

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
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]
SCOREWIRE = str(Path(sys.executable).parent / "scorewire")
READY_PREFIX = "scorewire listening on "


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_process(
    env_overrides: dict[str, str], *args: str, port: int = 0, stderr: int | None = None
) -> tuple[subprocess.Popen[str], str]:
    """`scorewire serve --port <port> <args>` as a child process, and its address.

    Returns once the server has printed its ready line. `stderr=subprocess.PIPE` keeps
    the child's log for the test to read (`read_line_until`)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.setdefault("SCOREWIRE_METRICS_ENABLED", "false")
    env.update(env_overrides)
    proc = subprocess.Popen(
        [SCOREWIRE, "serve", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=stderr,
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


def read_line_until(
    proc: subprocess.Popen[str], pipe: IO[str], accept: Callable[[str], bool], timeout_s: float
) -> tuple[str | None, list[str]]:
    """Read `pipe` (one of `proc`'s) until a line that `accept`s, and every line read.

    The line is None when the pipe closes, the process exits or `timeout_s` passes first:
    a server that hangs at start-up fails the test instead of hanging it."""
    # Bytes are read one at a time from the descriptor, never through `pipe`'s buffer: a
    # buffered readline can take two lines from the OS at once, and select() then waits for
    # data that already sits in the buffer (a CLI test missed "scoring 2/5" that way). Reading
    # no further than the accepted line also leaves the rest for whoever reads `pipe` next.
    lines: list[str] = []
    line = bytearray()
    fd = pipe.fileno()
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not sel.select(timeout=0.5):
                if proc.poll() is not None:
                    break
                continue
            byte = os.read(fd, 1)
            if not byte:  # the pipe closed: the process is gone
                break
            line += byte
            if byte != b"\n":
                continue
            text = line.decode("utf-8", "replace")
            line.clear()
            lines.append(text)
            if accept(text):
                return text, lines
    if line:
        lines.append(line.decode("utf-8", "replace"))
    return None, lines


def stop_process(proc: subprocess.Popen[str], timeout_s: float = 15) -> None:
    """SIGTERM, then SIGKILL after `timeout_s`."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
