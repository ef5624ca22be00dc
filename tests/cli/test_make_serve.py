"""`make serve` installs the server alone: a fresh virtualenv gets the server and its
runtime dependencies, none of the development tools (mypy, ruff, pytest, playwright),
and the server it installs starts."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.servers import READY_PREFIX, ROOT, stop_process

DEV_TOOLS = {"mypy", "ruff", "pytest", "playwright", "hypothesis", "grpcio-tools"}


def test_the_serve_install_has_the_server_and_no_dev_tools(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MAKEFLAGS")}
    done = subprocess.run(
        ["make", f"VENV={venv}", f"{venv}/.server"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    listed = subprocess.run(
        [venv / "bin/pip", "list", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    installed = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "scorewire" in installed and "grpcio" in installed
    assert not installed & DEV_TOOLS, installed & DEV_TOOLS
    proc = subprocess.Popen(
        [venv / "bin/scorewire", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=dict(env, SCOREWIRE_METRICS_ENABLED="false", SCOREWIRE_STATE_DIR=str(tmp_path)),
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(READY_PREFIX)
    finally:
        stop_process(proc)
