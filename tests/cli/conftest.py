"""Run the `scorewire` commands as a user does: a subprocess, no terminal, a clean env."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.servers import READY_PREFIX, read_line_until, stop_process

ROOT = Path(__file__).resolve().parents[2]

# Credentials and endpoints of the developer's shell must not leak into the runs.
_SCRUB = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: the repo on PYTHONPATH, no stray keys."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in _SCRUB and not k.startswith("SCOREWIRE_") and k != "COLUMNS"
    }
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "service"), str(ROOT / "clients/python/src")])
    env["SCOREWIRE_METRICS_ENABLED"] = "false"
    # The test's own state directory (tests/conftest.py), not the user's.
    env["SCOREWIRE_STATE_DIR"] = os.environ["SCOREWIRE_STATE_DIR"]
    env.update(extra)
    return env


@dataclass
class Done:
    """A finished command."""

    code: int
    stdout: str
    stderr: str


def cli_command(*args: str) -> list[str]:
    """argv of `scorewire <args>` through the module that owns run/validate/checks."""
    return [sys.executable, "-m", "scorewire.cli.run", *args]


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 120, **env: str) -> Done:
    """Run a command to completion."""
    proc = subprocess.run(
        cli_command(*args),
        cwd=cwd or ROOT,
        env=cli_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Done(proc.returncode, proc.stdout, proc.stderr)


def wait_for_line(
    proc: subprocess.Popen[str], needle: str, timeout: float = 60
) -> tuple[bool, list[str]]:
    """Read the process's stderr until a line containing `needle`; (found, lines read)."""
    assert proc.stderr is not None
    line, lines = read_line_until(proc, proc.stderr, lambda text: needle in text, timeout)
    return line is not None, lines


@pytest.fixture(scope="module")
def server_addr() -> Iterator[str]:
    """host:port of a real scorewire server subprocess on a free port."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scorewire.cli.main",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--metrics-port",
            "0",
        ],
        cwd=ROOT,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line, _ = read_line_until(proc, proc.stdout, lambda text: text.startswith(READY_PREFIX), 60)
        if line is None:
            pytest.fail("the scorewire server did not start")
        yield line[len(READY_PREFIX) :].strip()
    finally:
        stop_process(proc, timeout_s=30)
        if proc.stdout is not None:
            proc.stdout.close()
