"""The judges page's drift workflow runs as written: its `holdout.yaml` and its two
`scorewire run` commands (the CLI, a subprocess), against a real server whose verdict
cache is on and whose judge is the OpenAI stand-in (the page's address swapped for the
test server's).

The stand-in judges the holdout at level 5, then at level 4: the second command prints
the drift it reports, where the same command without `--fresh-judges` (what the page
used to need a cache-less server for) reads the cached verdicts and prints none.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from scorewire.judge import JudgeService
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.server.app import create_server
from scorewire.settings import Settings

from tests.cli.conftest import Done, run_cli
from tests.docs.blocks import Block, blocks
from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.servers import ROOT

PAGE = ROOT / "docs" / "judges.md"
SHOWN_ADDRESS = "127.0.0.1:50051"
KEY = "sk-test-judges-page-0123456789"


def level(score: int, model: str = "gpt-4o-mini-2024-07-18") -> Reply:
    return Reply(content=json.dumps({"reasoning": "r", "score": score}), model=model)


def drift_section() -> list[Block]:
    """The blocks of the page's Drift section."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("\n## Drift\n")
    end = text.index("\n## ", start + 1)
    first, last = text.count("\n", 0, start), text.count("\n", 0, end)
    return [b for b in blocks(PAGE) if first < b.line <= last]


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[str, FakeOpenAI]]:
    fake = FakeOpenAI(default=level(5), api_key=KEY)
    with fake.running():
        settings = Settings(
            host="127.0.0.1",
            port=0,
            metrics_enabled=False,
            openai_base_url=fake.url,
            openai_api_key=KEY,
            judge_model="openai:gpt-4o-mini",
        )
        judge = JudgeService.from_settings(settings)
        store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
        running, port = await create_server(settings, judge=judge, runs=store)
        try:
            yield f"127.0.0.1:{port}", fake
        finally:
            await running.stop(0)
            await judge.aclose()


async def test_the_drift_workflow_shows_what_the_judges_say_now(
    tmp_path: Path, server: tuple[str, FakeOpenAI]
) -> None:
    address, fake = server
    section = drift_section()
    [suite] = [b for b in section if b.title]
    [commands] = [b for b in section if b.lang == "sh"]
    (tmp_path / suite.title).write_text(suite.body, encoding="utf-8")  # type: ignore[operator]
    record, compare = (
        shlex.split(line.replace(SHOWN_ADDRESS, address))
        for line in commands.body.strip().splitlines()
    )
    assert record[0] == compare[0] == "scorewire"

    async def cli(argv: list[str]) -> Done:
        return await asyncio.to_thread(run_cli, *argv[1:], cwd=tmp_path)

    done = await cli(record)
    assert done.code == 0, done.stderr
    assert "recorded as run run_" in done.stderr
    fake.default = level(4)  # the judge moved: level 4 of 5 (0.75), still a pass
    calls = fake.calls
    cached = await cli([a for a in compare if a != "--fresh-judges"])
    assert cached.code == 0, cached.stderr
    assert "judge drift" not in cached.stdout + cached.stderr and fake.calls == calls
    done = await cli(compare)
    assert done.code == 0, done.stderr
    assert "judge drift: polite moved -0.25 (mean 1 -> 0.75)" in done.stdout, done.stdout
    assert fake.calls == calls + 2
