"""Getting started, executed: every block of `docs/getting-started.md` in order, against a
real server started by the page's own `make serve`.

A ```sh block is run with bash (`-euo pipefail`) in a scratch directory holding the
files the page has the reader write (blocks with `title="..."`) and a link to `.venv`.
A block that changes the reader's shell (`source`, `export`, `cd`) runs before every
later block too, as it would in the reader's terminal.
A ```text or ```json block right after it is everything the command prints, standard
output and error together, but for the progress lines `scorewire run` draws as a bar on
a terminal: text is compared whole, JSON as values without `latencyMs`. Only what
genuinely varies is normalised: the server's port (the page's `127.0.0.1:50051` is a
free port here) and its state directory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.docs.blocks import Block, blocks
from tests.support.components import require_component
from tests.support.servers import ROOT, free_port

PAGE = ROOT / "docs" / "getting-started.md"
SHOWN_ADDRESS = "127.0.0.1:50051"
READY = "scorewire listening on "
PROGRESS = re.compile(r"^scorewire: scoring .*\n", flags=re.M)


def _steps() -> list[tuple[Block, Block | None]]:
    """Each command block with the output block shown after it (None when none is)."""
    found = blocks(PAGE)
    steps: list[tuple[Block, Block | None]] = []
    for i, block in enumerate(found):
        if block.lang == "sh" or block.title:
            after = found[i + 1] if i + 1 < len(found) else None
            shown = after if after and after.lang in ("text", "json") and not after.title else None
            steps.append((block, None if block.title else shown))
    return steps


def _without_latency(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_latency(v) for k, v in value.items() if k != "latencyMs"}
    if isinstance(value, list):
        return [_without_latency(v) for v in value]
    return value


def _tools_env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env.pop("COLUMNS", None)  # the page shows what a command prints to a file or pipe
    grpcurl = ROOT / ".tools" / "bin"
    env["PATH"] = os.pathsep.join([str(grpcurl), env.get("PATH", "")])
    env["SCOREWIRE_STATE_DIR"] = str(work / "state")
    return env


class Walk:
    """The reader's session: a scratch directory, a server, the commands in order."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.env = _tools_env(work)
        self.address = ""
        self.server: subprocess.Popen[str] | None = None
        self.shell_state = ""

    def serve(self, shown: Block | None) -> None:
        # `make serve` as written; the port comes from the environment (a free one).
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        env = dict(self.env, SCOREWIRE_PORT=str(port), SCOREWIRE_METRICS_PORT="0")
        self.server = subprocess.Popen(
            ["make", "serve"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert self.server.stdout is not None
        lines = []
        for line in self.server.stdout:
            lines.append(line)
            if line.startswith(READY):
                break
        printed = "".join(lines).replace(self.address, SHOWN_ADDRESS)
        assert shown is not None and printed == shown.body, printed

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            os.killpg(self.server.pid, signal.SIGTERM)
            try:
                self.server.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait(5)

    def run(self, block: Block, shown: Block | None) -> None:
        script = self.shell_state + block.body.replace(SHOWN_ADDRESS, self.address)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=self.work,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )
        where = f"getting-started.md line {block.line}: {block.body!r}"
        assert done.returncode == 0, f"{where} exited {done.returncode}: {done.stdout}"
        printed = PROGRESS.sub("", done.stdout).replace(self.address, SHOWN_ADDRESS)
        if block.body.split()[0] in ("source", "export", "cd"):
            self.shell_state += block.body
        if shown is None:
            return
        if shown.lang == "json":
            got, want = json.loads(printed), json.loads(shown.body)
            assert _without_latency(got) == _without_latency(want), where
        else:
            assert printed == shown.body, f"{where} printed:\n{printed}"


@pytest.fixture
def walk(tmp_path: Path) -> Iterator[Walk]:
    if shutil.which("grpcurl", path=str(ROOT / ".tools" / "bin")) is None and not shutil.which(
        "grpcurl"
    ):
        require_component("grpcurl", "not in .tools/bin or on PATH (make test-deps)")
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    session = Walk(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def test_the_page_walks_install_serve_score_run_view() -> None:
    # The path a newcomer follows, in this order; a step dropped is a test that fails.
    scripts = [b.body.strip() for b, _ in _steps() if b.lang == "sh"]
    words = [s.split()[:2] if s.startswith("scorewire") else s.split()[:1] for s in scripts]
    assert words == [["make"], ["grpcurl"], ["source"], ["scorewire", "run"], ["scorewire", "view"]]
    assert {b.title for b, _ in _steps() if b.title} == {"qa.jsonl", "suite.yaml"}


def test_every_block_runs_and_prints_what_the_page_shows(walk: Walk) -> None:
    for block, shown in _steps():
        if block.title:
            (walk.work / block.title).write_text(block.body, encoding="utf-8")
        elif block.body.strip() == "make serve":
            walk.serve(shown)
        else:
            walk.run(block, shown)
    assert (walk.work / "report.html").read_text(encoding="utf-8").startswith("<!doctype html>")
