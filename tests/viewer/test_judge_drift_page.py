"""The compare page's judges table, in headless Chromium: a real `scorewire serve` whose
judge is the OpenAI stand-in records two runs of one name over the same outputs; between
them the stand-in answers a lower level as another model version, and the page flags the
judge check's drift and the model change (the same figures as the metric's)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from scorewire.client import Client

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.servers import free_port, serve_process, stop_process
from tests.viewer.conftest import screenshot

TOKEN = "viewer-drift-token-0123456789"
KEY = "sk-test-viewer-drift-0123456789"
CHECKS = [
    {"name": "polite", "type": "judge", "params": {"rubric": "Is it polite?"}},
    {"name": "short", "type": "length", "params": {"max_chars": 100}},
]
OUTPUTS = ["thank you", "thanks a lot", "cheers"]


@dataclass(frozen=True)
class Recorded:
    url: str
    base: str
    new: str


def level(score: int, model: str) -> Reply:
    return Reply(content=json.dumps({"reasoning": "r", "score": score}), model=model)


def _record(addr: str) -> str:
    cases = [{"sample": {"id": f"s{i}"}, "output": t} for i, t in enumerate(OUTPUTS)]
    auth = (("authorization", f"Bearer {TOKEN}"),)
    with Client(addr, metadata=auth) as client:
        _, summary = client.run_suite(
            cases, checks=CHECKS, record=True, run_name="holdout"
        ).collect()
    return str(summary.run_id)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    fake = FakeOpenAI(default=level(5, "mini-2024-07-18"), api_key=KEY)
    port = free_port()
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    with fake.running():
        proc, addr = serve_process(
            {
                "SCOREWIRE_STATE_DIR": str(tmp_path_factory.mktemp("viewer-drift-state")),
                "SCOREWIRE_VIEWER_PORT": str(port),
                "SCOREWIRE_AUTH_TOKENS": json.dumps(
                    [{"name": "alice", "sha256": digest, "role": "caller"}]
                ),
                "SCOREWIRE_OPENAI_BASE_URL": fake.url,
                "SCOREWIRE_OPENAI_API_KEY": KEY,
                "SCOREWIRE_JUDGE_MODEL": "openai:gpt-4o-mini",
                # A holdout rerun must ask the judge again, not its verdict cache.
                "SCOREWIRE_CACHE_MEMORY_BYTES": "0",
                "SCOREWIRE_JUDGE_WATCH__DRIFT_LIMIT": "0.2",
            }
        )
        try:
            base = _record(addr)
            fake.default = level(3, "mini-2025-03-01")
            new = _record(addr)
            yield Recorded(f"http://127.0.0.1:{port}", base, new)
        finally:
            stop_process(proc)


def test_the_compare_page_flags_a_judge_that_moved_and_changed_model(
    page: Any, recorded: Recorded
) -> None:
    url = f"{recorded.url}/compare?base={recorded.base}&run={recorded.new}"
    assert page.goto(url).status == 401
    page.fill("input[name=token]", TOKEN)
    with page.expect_navigation() as navigation:
        page.click("form.login button[type=submit]")
    assert navigation.value.status == 200
    row = page.locator("#judge-drift tr[data-check=polite]")
    cells = [c.strip() for c in row.locator("td").all_inner_texts()]
    # Levels 5 -> 3 of 5: mean 1.0 -> 0.5 over the three shared outputs, past 0.2.
    assert cells[1:4] == ["3", "1.000", "0.500"], cells
    assert "drift" in cells[0]
    assert "mini-2024-07-18 → mini-2025-03-01" in cells[5] and "model changed" in cells[5]
    # The deterministic check asked no judge: it has no row.
    assert page.locator("#judge-drift tr[data-check=short]").count() == 0
    screenshot(page, "compare-judge-drift")
